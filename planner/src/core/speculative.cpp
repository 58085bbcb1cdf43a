// Speculative decoding: draft models derived from the target (MTP layers, EAGLE heads) and the fc layer an
// EAGLE-style head adds. The budget terms these feed are in core/plan.cpp.
#include "kvplan/core/speculative.hpp"

#include <algorithm>

#include "kvplan/core/error.hpp"
#include "kvplan/core/weights.hpp"

namespace kvplan {

const char* spec_method_name(SpecMethod m) {
  switch (m) {
    case SpecMethod::none: return "none";
    case SpecMethod::draft_model: return "draft_model";
    case SpecMethod::eagle: return "eagle";
    case SpecMethod::eagle3: return "eagle3";
    case SpecMethod::mtp: return "mtp";
    case SpecMethod::ngram: return "ngram";
  }
  return "?";
}

// vLLM model_executor/models/llama_eagle.py (fc: hidden x 2 -> hidden), llama_eagle3.py (fc: hidden x 3 ->
// hidden), deepseek_mtp.py (eh_proj: hidden x 2 -> hidden); SGLang models/llama_eagle*.py, deepseek_nextn.py.
i64 draft_fc_params(SpecMethod m, i64 hidden) {
  const i64 in = m == SpecMethod::eagle3 ? 3 : (m == SpecMethod::eagle || m == SpecMethod::mtp) ? 2 : 0;
  return mul(mul(in, hidden, "draft fc params"), hidden, "draft fc params");
}

ModelSpec mtp_draft_model(const ModelSpec& target, i64 layers) {
  if (layers < 1) throw InputError("speculative_config", "the model ships no multi-token-prediction layers (num_nextn_predict_layers is 0)",
                                   "use a draft model or EAGLE head, or a model with MTP layers (DeepSeek-V3/R1, Qwen3-Next)");
  if (target.layers.empty()) throw InputError("model", "has no layers");
  ModelSpec d = target;
  d.id = target.id + " MTP";
  d.layers.assign(static_cast<std::size_t>(layers), target.layers.back());
  d.has_embedding = false;  // vLLM EagleProposer / SGLang EAGLEWorker share the target's embedding and head
  d.has_lm_head = false;
  d.vision = VisionTower{};
  d.forget_file_weights();
  if (target.mtp_weight_bytes && layers == target.mtp_layers) {
    // the snapshot's bytes of these layers; a rank's share scales by its computed share (weights.cpp)
    d.exact_weight_bytes = target.mtp_weight_bytes;
    d.exact_params = count_params(d).total;
  }
  d.notes.clear();
  d.warnings.clear();
  return d;
}

ModelSpec eagle_draft_model(const ModelSpec& target, SpecMethod m) {
  ModelSpec d = target;
  d.id = target.id + (m == SpecMethod::eagle3 ? " EAGLE-3 head" : " EAGLE head");
  const auto attn = std::find_if(target.layers.begin(), target.layers.end(),
                                 [](const Layer& l) { return l.kv == KvKind::full || l.kv == KvKind::mla_latent || l.kv == KvKind::sliding; });
  if (attn == target.layers.end()) throw InputError("speculative_config", "the model has no attention layer an EAGLE head could copy", "give the head's config with model");
  Layer l = *attn;
  if (l.kv == KvKind::sliding) l.kv = KvKind::full;
  d.layers = {l};
  d.has_embedding = false;
  d.has_lm_head = m == SpecMethod::eagle3;  // EAGLE-3 heads own their (draft-vocabulary) output head
  d.tied_embeddings = false;
  d.vision = VisionTower{};
  d.forget_file_weights();
  d.notes.clear();
  d.warnings.clear();
  return d;
}

}  // namespace kvplan
