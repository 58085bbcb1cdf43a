// Sweep grammar and the fewest-GPUs layout search. A sweep spec is data: lists expand into rows in
// a documented order (GPU, tensor parallel, KV dtype, context, concurrency; the last varies fastest).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/core/plan.hpp"

namespace kvplan {

/// Expands a list of counts. Items are separated by commas; each item is
///   N            a count (digits, optional k = x1024 or m = x1024^2 suffix): 4096, 32k
///   A..B*F       geometric: A, A*F, A*F^2, ... while <= B (F an integer >= 2): 1k..128k*2
///   A..B+S       arithmetic: A, A+S, A+2S, ... while <= B: 8..64+8
///   A..B         arithmetic with step 1
/// Values keep their order; duplicates are kept. At most `max_values` values (default 1,000,000).
/// Throws InputError naming `flag` on anything else.
std::vector<i64> expand_counts(std::string_view spec, std::string_view flag, i64 max_values = 1000000, std::string_view limit_flag = {});

/// Splits a comma-separated list of names ("h100-sxm,h200"). With `flag`, an empty list or an empty item
/// ("h100,,a10", ",") is an InputError naming it; without, empty items are skipped.
std::vector<std::string> split_names(std::string_view spec, std::string_view flag = {});

/// Result of the fewest-GPUs search.
struct LayoutSearch {
  bool found = false;
  Parallel parallel;
  Cell cell;
  i64 layouts_tried = 0;
  i64 gpus = 0;              // GPUs of the layout found: parallel.gpus(), or llama.cpp's --gpu-count
  bool layer_split = false;  // llama.cpp: one process splitting the layers over `gpus` GPUs (no TP / PP)
};

/// Smallest GPU count (tp x pp x dp <= max_gpus, tp <= max_tp) whose plan fits `concurrency` requests
/// of `tokens` tokens; among layouts with that count: pp = 1 first, then the most headroom.
/// `make` builds the plan for a layout (engine defaults resolved for its tp).
template <class MakePlanner>
LayoutSearch fewest_gpus(MakePlanner make, const ModelSpec& m, i64 tokens, i64 concurrency, i64 shared_prefix,
                         i64 max_gpus, i64 max_tp) {
  LayoutSearch best;
  for (i64 n = 1; n <= max_gpus && !best.found; ++n) {
    for (i64 tp = 1; tp <= std::min(n, max_tp); ++tp) {
      if (n % tp != 0) continue;
      for (i64 pp = 1; pp <= n / tp; ++pp) {
        if ((n / tp) % pp != 0) continue;
        Parallel par{tp, pp, n / tp / pp, 1};
        try {
          check_parallel(m, par);
        } catch (const InputError&) {
          continue;
        }
        ++best.layouts_tried;
        std::optional<Planner> made;
        try {
          made.emplace(make(par));
        } catch (const OverflowError&) {
          throw;
        } catch (const InputError&) {
          continue;  // a layout the engine's rules refuse (llama.cpp plans one GPU per replica)
        }
        const Planner& p = *made;
        const Cell c = p.cell(tokens, concurrency, shared_prefix);
        if (!c.fits) continue;
        // pp = 1 first, then the most headroom: the larger free share of the pool, (available - needed) / available
        // (a share, so that layouts whose pools count different block sizes compare; cross-multiplied in i64)
        const i64 free_c = c.units_available - c.units_needed, free_b = best.cell.units_available - best.cell.units_needed;
        const bool better = !best.found || (par.pp < best.parallel.pp) ||
                            (par.pp == best.parallel.pp &&
                             static_cast<double>(free_c) * static_cast<double>(std::max<i64>(best.cell.units_available, 1)) >
                                 static_cast<double>(free_b) * static_cast<double>(std::max<i64>(c.units_available, 1)));
        if (better) {
          best.found = true;
          best.parallel = par;
          best.cell = c;
          best.gpus = par.gpus();
        }
      }
    }
  }
  return best;
}

}  // namespace kvplan
