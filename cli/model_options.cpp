// Shared model options (see model_options.hpp).
#include "model_options.hpp"

#include <iostream>

#include "commands.hpp"
#include "output.hpp"
#include "kvplan/core/deployment.hpp"
#include "kvplan/core/transform.hpp"
#include "kvplan/core/weights.hpp"

namespace kvplan::cli {

void warn(const std::string& msg) { std::cerr << "kvplan: warning: " << one_line(msg) << "\n"; }

void add_model_options(CLI::App* c, ModelArgs& a) {
  c->add_option("MODEL", a.model, "Built-in model id (kvplan models), a config.json path, a snapshot folder, a GGUF file or a Hugging Face id")->required();
  auto* kv = c->add_option("--kv-dtype,--kv-cache-dtype", a.kv_dtype, "KV cache element format for K and V (auto, f16, bf16, fp8, fp8_e4m3, fp8_e5m2, q8_0, ..., or a vLLM TurboQuant K/V pair: turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc, turboquant_3bit_nc); default auto: the model dtype");
  auto* ck = c->add_option("--cache-type-k", a.cache_type_k, "K cache format (llama.cpp style; q8_0, q4_0, ...)");
  auto* cv = c->add_option("--cache-type-v", a.cache_type_v, "V cache format");
  kv->excludes(ck)->excludes(cv);
  c->add_option("--state-dtype", a.state_dtype, "Recurrent (Mamba) state format; default: the model dtype");
  c->add_option("--mla-layout", a.mla_layout, "MLA cache layout: latent (kv_lora_rank + rope, vLLM/SGLang/llama.cpp) or expanded (per-head K and V)")->capture_default_str();
  c->add_option("--weight-format", a.weight_format, "Override weight format: f32, f16, bf16, fp8, fp8_block (f32 scale per 128x128), int8, int4 / awq / gptq (g128, f16 scale + 4-bit zero), nvfp4, mxfp4 (MoE experts), a llama-quantize type priced tensor by tensor by its recipe (Q8_0, Q4_K_M, Q3_K_M, Q2_K, IQ2_XS, IQ4_XS, MXFP4_MOE, ...; name:imatrix with an importance matrix) or pure:<ggml type>");
  c->add_flag("--ignore-windows", a.ignore_windows, "Treat sliding-window and chunked layers as full attention");
}

namespace {

ElemFormat kv_format(const std::string& flag, const std::string& v, ElemFormat model_dtype) {
  if (v == "auto") return model_dtype;  // vLLM --kv-cache-dtype auto: the model's dtype
  if (auto f = parse_format(v); f && kv_capable(*f)) return *f;
  if (auto f = parse_format(v))
    throw InputError(flag, v + " is a weight format, not a KV cache type", "use one of " + format_names(flag == "--kv-dtype"));
  if (parse_turboquant(v)) throw InputError(flag, v + " is vLLM's TurboQuant K and V pair, not one cache's type", "give it as --kv-dtype " + v);
  throw InputError(flag, "unknown format '" + v + "'", "use one of " + format_names(flag == "--kv-dtype"));
}

}  // namespace

ResolvedModel resolve_model(const ModelArgs& a, const io::Profiles& profiles) {
  ResolvedModel rm;
  rm.args = a;
  rm.spec = profiles.model(a.model, &rm.origin);
  ModelSpec& m = rm.spec;
  if (a.mla_layout == "expanded") expand_mla(m);
  else if (a.mla_layout != "latent") throw InputError("--mla-layout", "unknown layout '" + a.mla_layout + "'", "use latent or expanded");
  if (a.ignore_windows) disable_windows(m);

  KvOptions& o = rm.kv_options;
  o.k_format = o.v_format = o.state_format = m.dtype;
  if (const auto tq = parse_turboquant(a.kv_dtype)) {
    // vLLM's TurboQuant: K and V in their own formats, the boundary layers in the model dtype
    // the model-side refusals vLLM would make (core/deployment.cpp check_turboquant_model; plan adds the version's)
    check_turboquant_model(m, std::nullopt, "--kv-dtype");  // no engine here to resolve the dtype vLLM runs
    o.k_format = tq->k;
    o.v_format = tq->v;
    // TurboQuant takes fp16 / bf16 models: a float32 checkpoint runs in bf16 in vLLM (SM 8.0 and later), its kept layers too
    o.skip_format = m.dtype == ElemFormat::f32 ? ElemFormat::bf16 : m.dtype;
    const auto kept = turboquant_boundary_layers(m);
    for (i64 i : kept) m.layers[static_cast<size_t>(i)].kv_model_dtype = true;
    if (!kept.empty())
      m.notes.push_back("vLLM's TurboQuant keeps layers " + std::to_string(kept.front()) + "-" + std::to_string(kept[kept.size() / 2 - 1]) + " and " +
                        std::to_string(kept[kept.size() / 2]) + "-" + std::to_string(kept.back()) + " in " + std::string(format_info(o.skip_format).name) +
                        (m.dtype == ElemFormat::f32 ? " (the float32 checkpoint runs in bf16 in vLLM)" : ""));
  } else if (!a.kv_dtype.empty()) {
    o.k_format = o.v_format = kv_format("--kv-dtype", a.kv_dtype, m.dtype);
  }
  if (!a.cache_type_k.empty()) o.k_format = kv_format("--cache-type-k", a.cache_type_k, m.dtype);
  if (!a.cache_type_v.empty()) o.v_format = kv_format("--cache-type-v", a.cache_type_v, m.dtype);
  if (!a.state_dtype.empty()) {
    check_state_dtype(a.state_dtype, "--state-dtype");
    o.state_format = kv_format("--state-dtype", a.state_dtype, m.dtype);
  }
  // no engine here: the model dtype, and a word on the KV cache the checkpoint declares (docs/engine-rules.md §9)
  if (const std::string adopters = checkpoint_kv_adopters(m.quant.checkpoint_kv);
      !m.quant.checkpoint_kv.empty() && a.kv_dtype.empty() && a.cache_type_k.empty() && a.cache_type_v.empty())
    m.notes.push_back("the checkpoint declares a ModelOpt " + m.quant.checkpoint_kv +
                      " KV cache, which " + adopters + (adopters.find(" and ") == std::string::npos ? " uses" : " use") +
                      " under --kv-cache-dtype auto; these figures are for " + std::string(format_info(o.k_format).name) +
                      " (--kv-dtype " + (m.quant.checkpoint_kv == "FP8" ? "fp8" : "nvfp4") + " for theirs)");

  if (!a.weight_format.empty()) {
    apply_weight_format(m, a.weight_format, "--weight-format");
    rm.weight_override = a.weight_format;
  }
  return rm;
}

ojson model_inputs_json(const ModelSpec& m, const KvOptions& o, const std::string& arg, const std::string& origin,
                        const std::string& mla_layout, bool ignore_windows, const std::string& weight_override) {
  return ojson{{"model", arg},
               {"model_origin", origin},
               {"model_type", m.model_type},
               {"architecture", m.architecture},
               {"num_layers", decoder_layers(m.layers)},
               {"model_dtype", format_info(m.dtype).name},
               {"kv_cache_dtype", kv_pair_name(o.k_format, o.v_format)},
               {"k_cache_type", format_info(o.k_format).name},
               {"v_cache_type", format_info(o.v_format).name},
               {"state_dtype", format_info(o.state_format).name},
               {"mla_layout", mla_layout},
               {"ignore_windows", ignore_windows},
               {"weight_format", weight_override.empty() ? ojson(nullptr) : ojson(weight_override)}};
}

ojson model_inputs_json(const ResolvedModel& rm) {
  return model_inputs_json(rm.spec, rm.kv_options, rm.args.model, rm.origin, rm.args.mla_layout, rm.args.ignore_windows, rm.weight_override);
}

}  // namespace kvplan::cli
