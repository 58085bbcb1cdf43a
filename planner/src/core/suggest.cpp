// Edit-distance suggestions (see suggest.hpp).
#include "kvplan/core/suggest.hpp"

#include <algorithm>

namespace kvplan {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest(const std::string& name, const std::vector<std::string>& candidates) {
  if (name.empty()) return std::nullopt;
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(name, c);
    if (c.rfind(name, 0) == 0) d = 0;  // a prefix of a real name beats any typo
    if (!best || d < best_d || (d == best_d && c < *best)) { best = c; best_d = d; }
  }
  if (best && best_d <= std::max<std::size_t>(2, name.size() / 3)) return best;
  return std::nullopt;
}

}  // namespace kvplan
