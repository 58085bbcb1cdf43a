// Count parsing and human-readable units (see units.hpp).
#include "kvplan/core/units.hpp"

#include <cstdio>

namespace kvplan {

i64 parse_count(std::string_view text, std::string_view what) {
  const std::string w(what);
  if (text.empty()) throw InputError(w, "empty value", "give a count such as 4096 or 32k");
  i64 mult = 1;
  std::string_view digits = text;
  const char last = text.back();
  if (last == 'k' || last == 'K') { mult = 1024; digits.remove_suffix(1); }
  else if (last == 'm' || last == 'M') { mult = 1024 * 1024; digits.remove_suffix(1); }
  if (digits.empty()) throw InputError(w, "'" + std::string(text) + "' has no digits", "give a count such as 4096 or 32k");
  i64 v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      throw InputError(w, "'" + std::string(text) + "' is not a count", "use digits with an optional k or m suffix, e.g. 32k");
    v = add(mul(v, 10, w), c - '0', w);
  }
  return mul(v, mult, w);
}

std::string human_bytes(i64 bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while ((v >= 1024.0 || v <= -1024.0) && u < 6) { v /= 1024.0; ++u; }
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::string human_count(i64 n) {
  char buf[64];
  const double v = static_cast<double>(n);
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.3f B", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.1f M", v / 1e6);
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  return buf;
}

}  // namespace kvplan
