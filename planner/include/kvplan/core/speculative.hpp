// Speculative decoding as the serving engines configure it: the method (draft model, EAGLE head, the
// checkpoint's own MTP layers, n-gram lookup), how many tokens it proposes, and the draft model it puts on
// every GPU. Formulas and the engines' rules: speculative.cpp, core/plan.cpp and docs/engine-rules.md.
#pragma once

#include <optional>
#include <string>

#include "kvplan/core/model.hpp"

namespace kvplan {

/// What a speculative method puts on the GPU (vLLM speculative_config.method, SGLang --speculative-algorithm,
/// TensorRT-LLM speculative_config.decoding_type).
enum class SpecMethod {
  none,
  draft_model,  // a separate smaller LLM (vLLM draft_model, SGLang STANDALONE, TensorRT-LLM DraftTarget)
  eagle,        // EAGLE-1/2 head: decoder layer(s) + fc [2 x hidden -> hidden]; embedding and head shared
  eagle3,       // EAGLE-3 head: decoder layer(s) + fc [3 x hidden -> hidden]; embedding shared, own head
  mtp,          // the checkpoint's multi-token-prediction layers (DeepSeek-V3/R1 nextn, Qwen3-Next mtp)
  ngram,        // prompt lookup: no draft weights, no draft KV
};

const char* spec_method_name(SpecMethod m);

/// Speculative-decoding settings, named after the engines' options. 0 = not given.
struct SpeculativeSettings {
  SpecMethod method = SpecMethod::none;
  i64 num_tokens = 0;  // vLLM num_speculative_tokens; SGLang --speculative-num-draft-tokens; TRT max_draft_len
  i64 num_steps = 0;   // SGLang --speculative-num-steps
  i64 topk = 0;        // SGLang --speculative-eagle-topk
  i64 draft_tp = 0;    // vLLM draft_tensor_parallel_size (0: the target's tensor-parallel size)
  bool on() const { return method != SpecMethod::none; }
};

/// Parameters of the fc layer an EAGLE-style head adds in front of its decoder layer(s), replicated on every
/// rank: EAGLE-1/2 and DeepSeek MTP (eh_proj) concatenate the token embedding and the hidden state,
/// 2 x hidden -> hidden; EAGLE-3 fuses three hidden states, 3 x hidden -> hidden; other methods none.
i64 draft_fc_params(SpecMethod m, i64 hidden);

/// The MTP layers of a checkpoint as a draft model: `layers` copies of the target's last decoder layer
/// (DeepSeek-V3 model.layers.61 is an MoE MLA layer like layers 3-60), with the embedding and output head
/// shared with the target (not counted again); the snapshot's bytes of those layers when known (mtp_weight_bytes).
/// Throws InputError("speculative_config") when `layers` < 1.
ModelSpec mtp_draft_model(const ModelSpec& target, i64 layers);

/// An EAGLE head built from the target's geometry when its own config is not at hand: one decoder layer like
/// the target's first attention layer, embedding shared; EAGLE-3 keeps its own output head over the vocabulary.
ModelSpec eagle_draft_model(const ModelSpec& target, SpecMethod m);

}  // namespace kvplan
