// Tensor, pipeline, data and expert parallelism: which layers a pipeline stage holds and what one
// rank of it stores (heads, MLP width and experts split; KV heads max(1, kv / tp); MLA replicated).
#pragma once

#include <utility>

#include "kvplan/core/model.hpp"

namespace kvplan {

struct Parallel {
  i64 tp = 1;  // tensor parallel ranks per stage
  i64 pp = 1;  // pipeline stages
  i64 dp = 1;  // data-parallel replicas
  i64 ep = 1;  // expert-parallel ranks sharing the routed experts (1: experts split by tp instead)
  i64 gpus() const { return mul(mul(tp, pp, "GPU count"), dp, "GPU count"); }
};

/// Layer range [first, last) of pipeline stage `stage`: vLLM get_pp_indices — num_layers / pp each,
/// the remainder added one by one to the stages before the last, from the second-to-last backwards.
std::pair<i64, i64> stage_layers(i64 num_layers, i64 pp, i64 stage);

/// Checks that the layout suits the model: tp divides attention heads; tp divides KV heads or is a
/// multiple of them; pp <= layers; ep divides the routed experts (unless `uneven_experts`: vLLM deals the remainder to
/// the first ranks). Throws InputError naming `flag_prefix` flags.
void check_parallel(const ModelSpec& m, const Parallel& p, bool uneven_experts = false);

/// What one rank of stage `stage` holds: its layers; q heads / tp; KV heads kv / tp (at least 1,
/// replicated when tp > kv); MLA latent unchanged (replicated on every rank); MLP and shared experts
/// width / tp; routed experts / ep (ep > 1) or expert width / tp; Mamba width, heads and state / tp;
/// vocabulary / tp; embedding on the first stage, lm_head and final norm on the last.
ModelSpec rank_shard(const ModelSpec& m, const Parallel& p, i64 stage);

}  // namespace kvplan
