// Parallel layouts (see parallel.hpp).
#include "kvplan/core/parallel.hpp"

#include <string>

namespace kvplan {

std::pair<i64, i64> stage_layers(i64 num_layers, i64 pp, i64 stage) {
  std::vector<i64> parts(static_cast<size_t>(pp), num_layers / pp);
  const i64 rem = num_layers % pp;
  for (i64 i = 2; i < rem + 2; ++i) parts[static_cast<size_t>(pp - i)] += 1;
  i64 first = 0;
  for (i64 s = 0; s < stage; ++s) first += parts[static_cast<size_t>(s)];
  return {first, first + parts[static_cast<size_t>(stage)]};
}

void check_parallel(const ModelSpec& m, const Parallel& p, bool uneven_experts) {
  if (p.tp < 1) throw InputError("tensor_parallel_size", "must be >= 1");
  if (p.pp < 1) throw InputError("pipeline_parallel_size", "must be >= 1");
  if (p.dp < 1) throw InputError("data_parallel_size", "must be >= 1");
  if (p.ep < 1) throw InputError("expert_parallel_size", "must be >= 1");
  // the experts are spread over the GPUs of one stage: tp x dp of them (vLLM --enable-expert-parallel), and an
  // expert-parallel size below tp leaves tp / ep ranks splitting each expert (SGLang moe_tp_size = tp / ep,
  // TensorRT-LLM moe_tp x moe_ep = tp), so it must divide tp
  if (p.ep > 1 && p.ep > p.tp * p.dp)
    throw InputError("expert_parallel_size", std::to_string(p.ep) + " exceeds the " + std::to_string(p.tp * p.dp) +
                                                 " GPUs (tensor x data parallel) that hold the experts",
                     "use at most " + std::to_string(p.tp * p.dp));
  if (p.ep > 1 && p.ep < p.tp && p.tp % p.ep != 0)
    throw InputError("expert_parallel_size", std::to_string(p.ep) + " does not divide the tensor-parallel size " + std::to_string(p.tp),
                     "use a size that divides " + std::to_string(p.tp) + " (tp / ep ranks then split each expert)");
  const i64 layers = decoder_layers(m.layers);
  if (p.pp > layers)
    throw InputError("pipeline_parallel_size", std::to_string(p.pp) + " stages exceed the model's " + std::to_string(layers) + " layers",
                     "use at most " + std::to_string(layers));
  for (const Layer& l : m.layers) {
    if (l.mixer == Mixer::attention || l.mixer == Mixer::mla) {
      if (l.q_heads % p.tp != 0)
        throw InputError("tensor_parallel_size", std::to_string(p.tp) + " does not divide num_attention_heads " + std::to_string(l.q_heads),
                         "use a tensor-parallel size that divides " + std::to_string(l.q_heads));
      const bool kv_ok = l.kv_heads >= p.tp ? l.kv_heads % p.tp == 0 : p.tp % l.kv_heads == 0;
      if (l.mixer == Mixer::attention && !kv_ok)
        throw InputError("tensor_parallel_size", std::to_string(p.tp) + " neither divides nor is a multiple of num_key_value_heads " +
                                                       std::to_string(l.kv_heads),
                         "use a tensor-parallel size that divides " + std::to_string(l.kv_heads) + " or a multiple of it");
    }
    // vLLM deals the remainder to the first ranks (fused_moe/layer.py determine_expert_map: ceil on the busiest rank,
    // which the shard below takes); the other engines want an even split
    if (l.mlp == MlpKind::moe && p.ep > 1 && l.experts % p.ep != 0 && !uneven_experts)
      throw InputError("expert_parallel_size", std::to_string(p.ep) + " does not divide the " + std::to_string(l.experts) + " routed experts",
                       "use a size that divides " + std::to_string(l.experts));
  }
}

ModelSpec rank_shard(const ModelSpec& m, const Parallel& p, i64 stage) {
  ModelSpec r = m;
  r.sharded = p.tp > 1 || p.pp > 1 || p.ep > 1;
  // the stage's decoder layers, each with the entries that join it
  const auto [first, last] = stage_layers(decoder_layers(m.layers), p.pp, stage);
  const std::vector<i64> block = decoder_block_of(m.layers);
  r.layers.clear();
  for (size_t i = 0; i < m.layers.size(); ++i)
    if (block[i] >= first && block[i] < last) r.layers.push_back(m.layers[i]);
  r.has_embedding = m.has_embedding && stage == 0;
  r.has_lm_head = m.has_lm_head && stage == p.pp - 1;
  if (stage != 0) r.vision = VisionTower{};
  const i64 tp = p.tp;
  r.vocab = ceil_div(m.vocab, tp);
  r.vision.params = ceil_div(r.vision.params, tp);
  // Gemma 3n / 4 per-layer embeddings: the table vocab-parallel like the embedding, per_layer_model_projection split by
  // tp; each layer's per-layer-input gate and projection (side_matrix) are ReplicatedLinear in vLLM gemma4.py and SGLang
  // gemma3n: whole on every rank
  r.ple_table = ceil_div(m.ple_table, tp);
  r.ple_matrix = ceil_div(m.ple_matrix, tp);
  for (Layer& l : r.layers) {
    if (l.mixer == Mixer::attention || l.mixer == Mixer::mla) {
      l.q_heads = l.q_heads / tp;
      if (l.kv != KvKind::mla_latent) l.kv_heads = l.kv_heads >= tp ? l.kv_heads / tp : 1;
    }
    l.intermediate = ceil_div(l.intermediate, tp);
    l.shared_intermediate = ceil_div(l.shared_intermediate, tp);
    if (p.ep > 1) {
      l.experts = ceil_div(l.experts, p.ep);
      l.experts_active = std::min(l.experts_active, l.experts);
      if (p.ep < p.tp) l.expert_intermediate = ceil_div(l.expert_intermediate, p.tp / p.ep);  // tp / ep ranks split each expert
    } else {
      l.expert_intermediate = ceil_div(l.expert_intermediate, tp);
    }
    if (l.mixer == Mixer::mamba1 || l.mixer == Mixer::mamba2 || l.mixer == Mixer::gated_deltanet || l.mixer == Mixer::short_conv) {
      l.d_inner = ceil_div(l.d_inner, tp);
      l.ssm_heads = ceil_div(l.ssm_heads, tp);
      if (l.n_groups % tp == 0) l.n_groups /= tp;
      l.lin_k_heads = ceil_div(l.lin_k_heads, tp);
      l.lin_v_heads = ceil_div(l.lin_v_heads, tp);
      // Mamba2: groups that tp does not divide are padded to tp, one per rank (vLLM mamba_utils.py
      // extra_groups_for_head_shards): each rank's conv state holds its share of x and its groups' B and C
      l.conv_state_elems = l.mixer == Mixer::mamba2 ? mul(l.d_conv - 1, add(l.d_inner, mul(2, mul(l.n_groups, l.d_state))))
                                                    : ceil_div(l.conv_state_elems, tp);
      l.ssm_state_elems = ceil_div(l.ssm_state_elems, tp);
    }
  }
  return r;
}

}  // namespace kvplan
