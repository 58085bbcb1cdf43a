// The one "largest value that still passes" search every limit uses (max concurrency, longest
// context, the longest max_model_len that starts, the concurrency that meets a TPOT target, ...).
#pragma once

#include "kvplan/core/checked.hpp"

namespace kvplan {

/// The largest v in [lo, hi] with pred(v) true, for a predicate that is true up to some value and
/// false after it; lo - 1 when pred(lo) is false. Binary search: O(log(hi - lo)) calls.
template <class Pred>
i64 largest_passing(i64 lo, i64 hi, Pred pred) {
  if (hi < lo || !pred(lo)) return lo - 1;
  while (lo < hi) {
    const i64 mid = lo + (hi - lo + 1) / 2;
    if (pred(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace kvplan
