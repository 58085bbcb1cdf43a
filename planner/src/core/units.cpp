// Count parsing and human-readable units (see units.hpp).
#include "kvplan/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

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
    if (v > (std::numeric_limits<i64>::max() - (c - '0')) / 10)
      throw InputError(w, "'" + std::string(text) + "' is beyond 2^63", "give a count that fits 64 bits");
    v = v * 10 + (c - '0');
  }
  if (v > std::numeric_limits<i64>::max() / mult)
    throw InputError(w, "'" + std::string(text) + "' is beyond 2^63", "give a count that fits 64 bits");
  return v * mult;
}

i64 parse_bytes(std::string_view text, std::string_view what) {
  const std::string w(what);
  std::string t(text);
  size_t i = 0;
  while (i < t.size() && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.')) ++i;
  // an exponent (80e9, 4.8e+10): no unit starts with 'e'
  const auto digit = [&](size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
  bool exponent = false;
  if (i > 0 && i < t.size() && (t[i] == 'e' || t[i] == 'E') &&
      (digit(i + 1) || (i + 2 < t.size() && (t[i + 1] == '+' || t[i + 1] == '-') && digit(i + 2)))) {
    exponent = true;
    i += digit(i + 1) ? 1 : 2;
    while (digit(i)) ++i;
  }
  const std::string num = t.substr(0, i);
  std::string unit = t.substr(i);
  unit = ascii_lower(unit);
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  if (num.empty() || num.front() == 'e' || num.front() == 'E' || std::count(num.begin(), num.end(), '.') > 1)
    throw InputError(w, "'" + t + "' is not a byte count", "use bytes or a unit: 85045477376, 79.22GiB, 512MiB, 80GB");
  long double mult = 1;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "kib") mult = 1024.0L;
  else if (unit == "mib") mult = 1024.0L * 1024;
  else if (unit == "gib") mult = 1024.0L * 1024 * 1024;
  else if (unit == "tib") mult = 1024.0L * 1024 * 1024 * 1024;
  else if (unit == "kb") mult = 1e3L;
  else if (unit == "mb") mult = 1e6L;
  else if (unit == "gb") mult = 1e9L;
  else if (unit == "tb") mult = 1e12L;
  else throw InputError(w, "unknown unit '" + unit + "' in '" + t + "'", "use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB");
  const long double v = std::strtold(num.c_str(), nullptr) * mult;
  if (!(v < 9.2e18L)) throw OverflowError(w + ": " + t + " is beyond the 64-bit byte range");
  if (num.find('.') == std::string::npos && unit.empty() && !exponent) return parse_count(num, what);
  // a plain byte count is whole (1.5 would floor to 1 B: a typo for 1.5GB); a unit's fraction rounds down (79.22GiB)
  if (mult == 1 && v != std::floor(v))
    throw InputError(w, "'" + t + "' is a fraction of a byte", "give whole bytes or a unit: 85045477376, 79.22GiB, 80GB");
  return static_cast<i64>(std::floor(v));
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

std::string ascii_lower(std::string_view text) {
  std::string s(text);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace kvplan
