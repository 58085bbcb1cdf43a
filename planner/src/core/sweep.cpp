// Sweep list grammar (see sweep.hpp).
#include "kvplan/core/sweep.hpp"

#include "kvplan/core/units.hpp"

namespace kvplan {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

std::vector<i64> expand_counts(std::string_view spec, std::string_view flag, i64 max_values, std::string_view limit_flag) {
  const std::string f(flag);
  std::vector<i64> out;
  if (trim(spec).empty()) throw InputError(f, "empty list", "give values such as 1k,4k,32k or 1k..128k*2");
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = spec.find(',', start);
    const std::string_view item = trim(spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (item.empty()) throw InputError(f, "empty item in '" + std::string(spec) + "'", "separate values with single commas");
    const size_t dots = item.find("..");
    if (dots == std::string_view::npos) {
      out.push_back(parse_count(item, f));
    } else {
      const i64 a = parse_count(item.substr(0, dots), f);
      std::string_view rest = item.substr(dots + 2);
      char op = '+';
      i64 step = 1;
      const size_t opos = rest.find_first_of("*+");
      if (opos != std::string_view::npos) {
        op = rest[opos];
        step = parse_count(rest.substr(opos + 1), f);
        rest = rest.substr(0, opos);
      }
      const i64 b = parse_count(rest, f);
      if (b < a) throw InputError(f, "range '" + std::string(item) + "' ends before it starts", "write A..B with A <= B");
      if (op == '*' && (step < 2 || a < 1))
        throw InputError(f, "geometric range '" + std::string(item) + "' needs A >= 1 and a factor >= 2", "e.g. 1k..128k*2");
      if (op == '+' && step < 1) throw InputError(f, "range step must be >= 1 in '" + std::string(item) + "'", "e.g. 8..64+8");
      for (i64 v = a; v <= b;) {
        out.push_back(v);
        if (static_cast<i64>(out.size()) > max_values) break;
        i64 next = 0;
        if (op == '*' ? __builtin_mul_overflow(v, step, &next) : __builtin_add_overflow(v, step, &next)) break;
        v = next;
      }
    }
    if (static_cast<i64>(out.size()) > max_values)
      throw InputError(f, "expands to more than " + std::to_string(max_values) + " values",
                       "use a coarser range" + (limit_flag.empty() ? std::string() : " or raise " + std::string(limit_flag)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  // a context, a concurrency, a tensor-parallel size or a probe's batch of 0 describes no deployment
  for (const i64 v : out)
    if (v < 1) throw InputError(f, "every value must be >= 1, got " + std::to_string(v), "start the list or range at 1 or more");
  return out;
}

std::vector<std::string> split_names(std::string_view spec, std::string_view flag) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = spec.find(',', start);
    const auto item = trim(spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (item.empty() && !flag.empty())
      throw InputError(std::string(flag), "'" + std::string(spec) + "' has an empty name", "give names separated by single commas");
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace kvplan
