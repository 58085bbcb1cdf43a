// Checked 64-bit arithmetic for byte and token counts.
// Every product or sum of sizes in kvplan goes through these; on overflow they throw
// OverflowError naming the operation instead of wrapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kvplan/core/error.hpp"

namespace kvplan {

using i64 = std::int64_t;

/// a * b, or OverflowError("what: a * b overflows").
inline i64 mul(i64 a, i64 b, std::string_view what = "size product") {
  i64 r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw OverflowError(std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                        " overflows 64-bit bytes");
  return r;
}

/// a + b, or OverflowError.
inline i64 add(i64 a, i64 b, std::string_view what = "size sum") {
  i64 r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw OverflowError(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                        " overflows 64-bit bytes");
  return r;
}

/// a - b, or OverflowError.
inline i64 sub(i64 a, i64 b, std::string_view what = "size difference") {
  i64 r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    throw OverflowError(std::string(what) + ": " + std::to_string(a) + " - " + std::to_string(b) +
                        " overflows 64-bit bytes");
  return r;
}

/// ceil(a / b) for a >= 0, b > 0.
inline i64 ceil_div(i64 a, i64 b) { return a / b + (a % b != 0 ? 1 : 0); }

/// Round a up to a multiple of m (m > 0), checked.
inline i64 round_up(i64 a, i64 m, std::string_view what = "round up") {
  return mul(ceil_div(a, m), m, what);
}

}  // namespace kvplan
