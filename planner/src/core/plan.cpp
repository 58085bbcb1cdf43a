// Capacity planning: per-GPU budget and each engine's KV sizing rule. Every formula is stated
// where it is coded; docs/engine-rules.md gives the engines' sources.
#include "kvplan/core/plan.hpp"

#include "kvplan/core/search.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>

#include "kvplan/core/paging.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/core/weights.hpp"

namespace kvplan {

namespace {

constexpr i64 kMiB = 1LL << 20;
constexpr i64 kGiB = 1LL << 30;

// Default overheads (bytes per GPU). Sources: ../shared/reference/engines.md "Fixed overheads":
// CUDA context ~290-670 MB; vLLM non-torch memory 0.16-0.4 GiB on one GPU (more with NCCL);
// CUDA graphs 0.2-0.4 GiB.
constexpr i64 kCudaContext = 512 * kMiB;
constexpr i64 kNonTorchSingle = 384 * kMiB;
constexpr i64 kNonTorchMulti = 1 * kGiB;
constexpr i64 kCudaGraph = 384 * kMiB;

i64 floor_fraction(i64 total, double f) { return static_cast<i64>(std::floor(static_cast<long double>(total) * f)); }

i64 layer_bytes_per_token(const Layer& l, const KvOptions& o) {
  return add(layer_k_bytes_per_token(l, o), layer_v_bytes_per_token(l, o), "KV bytes per token per layer");
}

bool holds_tokens(KvKind k) { return k != KvKind::ssm && k != KvKind::none; }

// Widest MLP of the rank in the units a profiling pass materialises: dense I, or top_k x expert I + shared I.
i64 effective_intermediate(const ModelSpec& m) {
  i64 widest = 0;
  for (const Layer& l : m.layers) {
    i64 w = 0;
    if (l.mlp == MlpKind::gated || l.mlp == MlpKind::plain) w = l.intermediate;
    if (l.mlp == MlpKind::moe) w = add(mul(l.experts_active, l.expert_intermediate), l.shared_intermediate);
    widest = std::max(widest, w);
  }
  return widest;
}

}  // namespace

// TensorRT-LLM (PyTorch backend) with speculative decoding: KVCacheManager.prepare_resources
// (tensorrt_llm/_torch/pyexecutor/resource_manager.py) adds num_extra_kv_tokens tokens to a new sequence and, every
// step, one token plus get_draft_token_length(req) = max_draft_len draft tokens (rejected ones are rewound after the
// step); get_num_extra_kv_tokens (tensorrt_llm/_torch/speculative/utils.py) is max_draft_len - 1 for the one-model
// modes (MTP, Eagle3 one-model), else 0. A request of T tokens so holds up to T + k + (k - 1) slots (T + k otherwise).
namespace {
i64 trtllm_spec_extra_tokens(const SpeculativeSettings& sp) {
  if (!sp.on() || sp.num_tokens <= 0) return 0;
  const bool one_model = sp.method == SpecMethod::mtp || sp.method == SpecMethod::eagle3;
  return add(sp.num_tokens, one_model ? sp.num_tokens - 1 : 0, "speculative KV tokens");
}
}  // namespace

i64 lora_buffer_bytes(const ModelSpec& rank, i64 slots, i64 lora_rank) {
  // vLLM lora/layers (create_lora_weights): column-parallel projections keep A [rank, full input] and B
  // [output / tp, rank]; row-parallel ones A [rank, input / tp] and B [full output, rank]; one stacked A/B
  // per slice of a merged projection (q, k, v; gate, up). `rank` is one TP rank's model, so its widths
  // are already per rank.
  const i64 h = rank.hidden;
  i64 per_slot_rank = 0;  // elements per adapter slot per unit of LoRA rank
  for (const Layer& l : rank.layers) {
    if (l.mixer == Mixer::attention && l.kv != KvKind::cross) {  // KV-sharing layers (kv none) keep q and o
      const i64 q_out = mul(l.q_heads, l.k_head_dim);
      const i64 kv_out = (l.kv_projections > 0 ? mul(l.kv_heads, l.k_head_dim) : 0) + (l.kv_projections > 1 ? mul(l.kv_heads, l.v_head_dim) : 0);
      per_slot_rank = add(per_slot_rank, add(mul(3, h), q_out + kv_out));              // qkv: 3 A + B
      per_slot_rank = add(per_slot_rank, add(mul(l.q_heads, l.v_head_dim), h));         // o: A + B
    }
    if (l.mlp == MlpKind::gated) per_slot_rank = add(per_slot_rank, add(mul(2, h), mul(2, l.intermediate)) + l.intermediate + h);
    else if (l.mlp == MlpKind::plain) per_slot_rank = add(per_slot_rank, add(h, l.intermediate) + l.intermediate + h);
  }
  return mul(mul(mul(per_slot_rank, lora_rank, "LoRA buffers"), slots, "LoRA buffers"), format_info(rank.dtype).block_bytes, "LoRA buffers");
}

i64 activation_peak_bytes(const ModelSpec& rank, i64 tokens, i64 max_seqs, ElemFormat act, i64 logits_vocab) {
  const i64 elem = format_info(act).block_bytes;
  const i64 mlp = mul(mul(tokens, mul(4, effective_intermediate(rank))), elem, "activation bytes");
  const i64 logits = rank.has_lm_head ? mul(mul(max_seqs, logits_vocab), 4, "logits bytes") : 0;
  return add(mlp, logits, "activation bytes");
}

// vLLM's multimodal profiling (vllm-project/vllm main @ 003ad86e, read 2026-12: vllm/v1/worker/gpu_model_runner.py
// profile_run; vllm/multimodal/encoder_budget.py _get_max_items; vllm/v1/core/encoder_cache_manager.py
// compute_mm_encoder_budget). The encoder runs on a dummy batch of N items of the largest size, T tokens
// each, and the outputs are put in the encoder cache while the text model's dummy batch runs, so the peak
// vLLM measures grows by N x E x width x dtype bytes (the encoder cache's budget, held outside the KV pool):
//   budget = max(max_num_batched_tokens, T)   (encoder_cache_size and the encoder compute budget default
//                                              to max_num_batched_tokens)
//   N = max(1, min(budget // T, max_num_seqs x max(1, min(limit, max_model_len // T))))   (chunked prefill)
// limit = --limit-mm-per-prompt's count of the profiled modality (999 when not given). With every limit 0
// vLLM initialises no encoder cache and skips the encoder profiling (text-only). 0 bytes when T is not modelled.
// T counts an item's placeholder tokens (registry.py get_max_tokens_per_item_by_modality ->
// get_mm_max_contiguous_tokens); the cache holds what the encoder returns (profile_run stores
// get_multimodal_embeddings' outputs as they are): E embeddings an item (E < T only where the placeholder has
// separator tokens: Llama 4), each embed_width wide (the text hidden; Qwen3-VL adds its deepstack levels).
// The modality profiled is the one with most tokens an item (get_modality_with_max_tokens; image on a tie).
// Qwen2/2.5/3-VL also take videos (vllm @ 002d181a qwen2_vl.py get_max_video_tokens, with mm_counts of one
// item a modality): frames of the largest image size, as many as keep grid_t x T_image <= max_model_len
// (_get_max_video_frames), at most 14 (_MAX_FRAMES_PER_VIDEO), grid_t = frames rounded up to temporal_patch_size
// / temporal_patch_size, so T_video = grid_t x T_image. Their T_image follows --mm-processor-kwargs max_pixels.
static i64 vllm_mm_encoder_bytes(const ModelSpec& m, i64 text_hidden, const EngineSettings& e, std::string& basis) {
  const VisionTower& v = m.vision;
  if (!v.present || v.tokens_per_item <= 0) return 0;
  i64 image = v.tokens_per_item, image_embeds = v.embeds_per_item > 0 ? v.embeds_per_item : image;
  std::string how = v.tokens_basis;
  if (v.max_pixels > 0 && e.mm_max_pixels > 0) {
    image = image_embeds = dynamic_image_tokens(e.mm_max_pixels, v.patch, v.merge);
    how = "largest image " + std::to_string(image) + " tokens: --mm-processor-kwargs max_pixels " +
          std::to_string(e.mm_max_pixels) + ", patch " + std::to_string(v.patch) + " x merge " +
          std::to_string(v.merge);
  }
  i64 video = 0, frames = 0;
  if (v.temporal > 0 && e.mm_video_limit != 0) {
    const auto grid_t = [&](i64 f) { return std::max<i64>((f + f % v.temporal) / v.temporal, 1); };
    for (frames = 1; frames < 14 && mul(grid_t(frames + 1), image, "video tokens") <= e.max_model_len;) ++frames;
    video = mul(grid_t(frames), image, "video tokens");
  }
  const bool image_on = e.mm_image_limit != 0;
  if (!image_on && video == 0) return 0;
  const bool vid = video > 0 && (!image_on || video > image);
  const i64 t = vid ? video : image, embeds = vid ? video : image_embeds;
  const i64 given = vid ? e.mm_video_limit : e.mm_image_limit, limit = given < 0 ? 999 : given;
  const i64 budget = std::max(e.max_num_batched_tokens, t);
  const i64 per_prompt = std::max<i64>(1, std::min(limit, e.max_model_len / t));
  const i64 items = std::max<i64>(1, std::min(budget / t, mul(e.max_num_seqs, per_prompt, "multimodal items")));
  const i64 width = v.embed_width > 0 ? v.embed_width : text_hidden;
  const std::string what = vid ? " videos of " + std::to_string(frames) + " frames" : " images";
  basis = std::to_string(items) + what + " x " + std::to_string(embeds) + " embeddings x " +
          (v.embed_width > 0 ? "width " : "hidden ") + std::to_string(width) + " x " +
          std::string(format_info(m.dtype).name) + " (vLLM profiles the encoder cache budget " +
          std::to_string(budget) + "; --limit-mm-per-prompt " + (vid ? "video " : "image ") +
          (given < 0 ? "999 default" : std::to_string(limit)) + ")" + (how.empty() ? "" : "; " + how);
  return mul(mul(items, embeds, "encoder cache"), mul(width, format_info(m.dtype).block_bytes), "encoder cache bytes");
}

Planner::Planner(PlanSpec s) : spec_(std::move(s)) {
  const ModelSpec& m = spec_.model;
  const EngineSettings& e = spec_.engine;
  const BudgetOverrides& ov = spec_.overrides;
  total_ = ov.gpu_memory.value_or(spec_.gpu.memory_bytes);
  if (total_ <= 0) throw InputError("gpu_memory_bytes", "must be > 0");
  max_seqs_ = e.max_num_seqs;
  if (e.kind == EngineKind::llamacpp) {
    if (spec_.parallel.tp != 1 || spec_.parallel.pp != 1)
      throw InputError("tensor_parallel_size", "llama.cpp has no tensor or pipeline parallelism: it splits one model over its GPUs",
                       "give the GPUs with --gpu-count N (and --split-mode / --tensor-split) instead of --tensor-parallel-size / --pipeline-parallel-size");
    build_llamacpp();
    return;
  }
  check_parallel(m, spec_.parallel, spec_.engine.kind == EngineKind::vllm);
  max_len_ = e.max_model_len;

  bool first = true;
  for (i64 stage = 0; stage < spec_.parallel.pp; ++stage) {
    Planner trial = *this;  // state for this stage; the stage with the fewest pool units wins
    trial.budget_.clear();
    trial.groups_.clear();
    trial.report_ = EngineReport{};
    trial.startup_limit_.clear();
    trial.stage_ = stage;
    ModelSpec rank = rank_shard(m, spec_.parallel, stage);
    if (e.attention_dp > 1) {
      // attention data parallel (SGLang dp_attention.py: attn_tp_size = tp_size // dp_size; TensorRT-LLM
      // enable_attention_dp: attention TP 1): attention weights and KV heads are split over TP / attention_dp ranks
      // only; the MLP keeps the full TP split. MLA: the latent is one per rank either way.
      if (spec_.parallel.tp % e.attention_dp != 0)
        throw InputError("data_parallel_size", "attention data-parallel size " + std::to_string(e.attention_dp) + " does not divide the tensor-parallel size " +
                                                   std::to_string(spec_.parallel.tp),
                         "use a --dp-size that divides --tp-size");
      Parallel ap = spec_.parallel;
      ap.tp = spec_.parallel.tp / e.attention_dp;
      const ModelSpec attn = rank_shard(m, ap, stage);
      for (std::size_t i = 0; i < rank.layers.size(); ++i) {
        rank.layers[i].q_heads = attn.layers[i].q_heads;
        rank.layers[i].kv_heads = attn.layers[i].kv_heads;
      }
      trial.report_.notes.push_back("attention data parallel: " + std::to_string(e.attention_dp) + " attention groups of TP " + std::to_string(ap.tp) +
                                    ", each with its own requests and KV pool");
    }
    trial.rank_model_ = rank;
    const bool multi = spec_.parallel.tp * spec_.parallel.pp > 1;
    auto term = [&](const std::string& name, std::optional<i64> override_v, i64 modelled, const std::string& basis, bool inside) {
      trial.budget_.push_back({name, override_v.value_or(modelled), override_v ? "given" : basis, inside, override_v.has_value()});
      return trial.budget_.back().bytes;
    };
    trial.budget_.push_back({"gpu_total", total_, ov.gpu_memory ? "given" : spec_.gpu.id + " " + spec_.gpu.memory_bytes_kind + " total", true, ov.gpu_memory.has_value()});
    const ParamCount pc = count_params(rank);
    // --cpu-offload-gb: that many bytes of this rank's weights stay in host memory (vLLM UVA / SGLang offload)
    const i64 rank_weights = weight_bytes(rank, pc).total;
    // only the decoder layers' weights move (vLLM wraps each layer in maybe_offload_to_cpu, make_layers in
    // model_executor/models/utils.py): the embedding, the output head and a vision tower stay on the GPU (the final norm
    // too, a few KiB, counted here with the layers' norms)
    i64 layer_bytes = 0, all_bytes = 0;
    for (const auto& part : pc.parts) {
      const i64 b = part_weight_bytes(rank, part);
      all_bytes = add(all_bytes, b, "weight bytes");
      if (part.name != "embedding" && part.name != "position_embedding" && part.name != "lm_head" && part.name != "vision" &&
          part.name != "per_layer_embedding")
        layer_bytes = add(layer_bytes, b, "weight bytes");
    }
    const i64 offloadable = all_bytes > 0 ? static_cast<i64>(static_cast<double>(rank_weights) * static_cast<double>(layer_bytes) /
                                                             static_cast<double>(all_bytes))
                                          : rank_weights;
    const i64 offloaded = std::min(e.cpu_offload_bytes, offloadable);
    trial.report_.host_weight_bytes = ov.weights ? 0 : offloaded;
    const i64 weights = term("weights", ov.weights, rank_weights - offloaded,
                             "this rank's parameters (" + weight_bytes(rank, pc).basis + ")" +
                                 (offloaded > 0 ? " - " + human_bytes(offloaded) + " kept in host memory (--cpu-offload-gb)" : ""),
                             true);
    // SGLang without chunked prefill: a prefill batch holds up to max_prefill_tokens (the tokens its reserve counts)
    const i64 act_tokens = sglang_unchunked(e) ? e.max_prefill_tokens.value_or(kSglangMaxPrefillTokens) : e.max_num_batched_tokens;
    // vLLM V1's LogitsProcessor all-gathers the logits: every rank holds max_num_seqs x the full vocabulary
    // in fp32 during the profiling sampler run (vllm/model_executor/layers/logits_processor.py _gather_logits)
    const bool full_vocab = e.kind == EngineKind::vllm;
    const i64 activation = term("activation_peak", ov.activation,
                                activation_peak_bytes(rank, act_tokens, e.max_num_seqs, m.dtype, full_vocab ? m.vocab : rank.vocab),
                                std::to_string(act_tokens) + " batched tokens x 4 x widest MLP x " + std::string(format_info(m.dtype).name) +
                                    " + max_num_seqs x " + (full_vocab ? "vocab (gathered on every rank)" : "vocab/tp") + " x 4 B logits",
                                e.kind != EngineKind::sglang);
    std::string mm_basis;
    const i64 mm_bytes = e.kind == EngineKind::vllm ? vllm_mm_encoder_bytes(rank, m.hidden, e, mm_basis) : 0;
    const i64 mm = mm_bytes > 0 ? term("mm_encoder_cache", std::nullopt, mm_bytes, mm_basis, true) : 0;
    const i64 non_torch = term("non_torch", ov.non_torch, multi ? kNonTorchMulti : kNonTorchSingle,
                               multi ? "cuBLAS/attention workspaces + NCCL buffers (estimate)" : "cuBLAS/attention workspaces (estimate, vLLM logs 0.16-0.4 GiB)", true);
    const bool sglang = e.kind == EngineKind::sglang;
    const i64 context = term("cuda_context", ov.cuda_context, kCudaContext, "CUDA context (estimate: 290-670 MB)",
                             sglang || e.kind == EngineKind::trtllm || e.kind == EngineKind::generic);
    // CUDA graphs come out of the KV budget where the engine measures or estimates them first: vLLM >= 0.21
    // (profile_cudagraph_memory), TensorRT-LLM 1.x (graphs captured before the KV profiling), the generic engine
    const bool graphs_inside = e.kind == EngineKind::generic || (e.kind == EngineKind::vllm && e.rules->cuda_graphs_in_budget) ||
                               (e.kind == EngineKind::trtllm && e.rules->trt_graphs_outside_torch);
    const i64 graphs = term("cuda_graphs", ov.cuda_graph, e.enforce_eager ? 0 : kCudaGraph,
                            e.enforce_eager ? "enforce eager: none" : "CUDA graph pool (estimate: 0.2-0.4 GiB)", graphs_inside);
    const i64 extra = term("extra", ov.extra, 0, "--overhead-bytes", true);
    // LoRA buffers are allocated with the model, before the KV profiling: they come out of every engine's pool
    const i64 lora = e.lora_slots > 0 ? term("lora_adapters", std::nullopt, lora_buffer_bytes(rank, e.lora_slots, e.lora_rank),
                                             std::to_string(e.lora_slots) + " adapters x rank " + std::to_string(e.lora_rank) +
                                                 " x (A + B of qkv, o, gate/up, down per layer) x " + std::string(format_info(m.dtype).name),
                                             true)
                                      : 0;
    // Speculative decoding: the draft's weights on this rank, sharded by the draft's tensor-parallel size, on the
    // last pipeline stage (it proposes from the final hidden states). vLLM loads them before the KV profiling
    // (gpu_model_runner.load_model -> drafter.load_model), TensorRT-LLM before measuring free memory; SGLang loads the
    // draft worker after the target's pool, from the share mem_fraction_static leaves (EAGLEWorker.__init__).
    const SpeculativeSettings& sp = e.spec;
    const bool has_draft = sp.on() && spec_.draft && stage == spec_.parallel.pp - 1;
    ModelSpec draft_rank;
    i64 draft_w = 0;
    if (has_draft) {
      Parallel dpar;
      dpar.tp = sp.draft_tp > 0 ? sp.draft_tp : spec_.parallel.tp;
      dpar.ep = sp.method == SpecMethod::mtp ? spec_.parallel.ep : 1;
      draft_rank = rank_shard(*spec_.draft, dpar, 0);
      const WeightBytes dw = weight_bytes(draft_rank, count_params(draft_rank));
      const i64 fc = draft_fc_params(sp.method, spec_.draft->hidden);
      draft_w = term("draft_weights", std::nullopt, add(dw.total, mul(fc, format_info(m.dtype).block_bytes, "draft fc bytes"), "draft weights"),
                     spec_.draft->id + ": " + std::to_string(draft_rank.layers.size()) + " layer(s) / draft TP " + std::to_string(dpar.tp) + " (" +
                         dw.basis + ")" + (fc > 0 ? " + fc " + std::to_string(fc / spec_.draft->hidden / spec_.draft->hidden) + " x hidden^2, replicated" : "") +
                         (draft_rank.has_embedding ? "" : "; embedding" + std::string(draft_rank.has_lm_head ? "" : " and head") + " shared with the target"),
                     e.kind != EngineKind::sglang);
    }
    const i64 draft_in = e.kind == EngineKind::sglang ? 0 : draft_w;

    // What the engine may spend on KV on this rank.
    i64 available = 0;
    std::string avail_basis;
    switch (e.kind) {
      case EngineKind::vllm: {
        // gpu_worker.determine_available_memory: total x utilization - (weights + torch peak + non-torch);
        // the CUDA context (and before 0.21 the graphs) live in the (1 - utilization) share left outside.
        // From 0.21 the CUDA graph estimate is subtracted too (#38284).
        const i64 usable = floor_fraction(total_, e.memory_fraction);
        const i64 graphs_in = graphs_inside ? graphs : 0;
        available = usable - weights - activation - mm - non_torch - graphs_in - extra - lora - draft_in;
        avail_basis = "floor(total x " + std::to_string(e.memory_fraction).substr(0, 4) +
                      ") - weights - activation_peak" + (mm > 0 ? " - mm_encoder_cache" : "") + " - non_torch" +
                      (graphs_inside ? " - cuda_graphs" : "") + " - extra" + (lora > 0 ? " - lora_adapters" : "") +
                      (draft_in > 0 ? " - draft_weights" : "");
        if (context + graphs - graphs_in > total_ - usable)
          trial.report_.notes.push_back("CUDA context" + std::string(graphs_inside ? "" : " + graphs") + " (" + human_bytes(context + graphs - graphs_in) +
                                        ") exceed the " + human_bytes(total_ - usable) + " vLLM leaves outside gpu_memory_utilization: risk of OOM");
        break;
      }
      case EngineKind::sglang:
        // profile_max_num_token: rest = free_after_weights - free_before_weights x (1 - mem_fraction_static),
        // free_before_weights = total - cuda_context, free_after_weights = that - weights - non-torch
        available = floor_fraction(total_ - context, e.memory_fraction) - weights - non_torch - extra - lora;
        avail_basis = "(total - cuda_context) x mem_fraction_static - weights - non_torch - extra";
        break;
      case EngineKind::trtllm: {
        // KV gets free_gpu_memory_fraction of the memory free after the engine and weights load (0.x
        // kvCacheManager.cpp getMaxNumTokens); 1.x measures after CUDA graph warmup, so graphs count as used
        // (_torch/pyexecutor/_util.py KvCacheCreator: (total - peak + temporary KV) x fraction)
        const i64 graphs_in = graphs_inside ? graphs : 0;
        const i64 free_after = total_ - context - weights - activation - non_torch - graphs_in - extra - lora - draft_in;
        available = floor_fraction(std::max<i64>(free_after, 0), e.memory_fraction);
        avail_basis = std::string("(total - cuda_context - weights - activation_peak - non_torch") + (graphs_inside ? " - cuda_graphs" : "") +
                      " - extra) x free_gpu_memory_fraction";
        break;
      }
      default:
        available = floor_fraction(total_, e.memory_fraction) - weights - activation - non_torch - context - graphs - extra - lora - draft_in;
        avail_basis = "total x fraction - every other term";
        break;
    }
    if (e.kv_cache_memory_bytes) {
      available = *e.kv_cache_memory_bytes;
      avail_basis = "--kv-cache-memory-bytes";
    }
    if (available <= 0) trial.startup_limit_ = "weights";
    trial.kv_deficit_ = std::min<i64>(available, 0);
    trial.budget_.push_back({"kv_cache_available", std::max<i64>(available, 0), avail_basis, true, e.kv_cache_memory_bytes.has_value()});
    trial.report_.available_kv_bytes = std::max<i64>(available, 0);
    trial.report_.kind = e.kind;
    trial.report_.rules_version = e.rules->label;
    const i64 avail = std::max<i64>(available, 0);
    // vLLM: the draft's attention layers register in the same static forward context, so get_kv_cache_spec returns
    // them with the target's and one block pool is split across all of them (v1/spec_decode/eagle.py
    // draft_attn_layer_names); TensorRT-LLM 1.x sizes bytes per token over target + draft layers
    // (_torch/pyexecutor/_util.py KvCacheCreator). SGLang's draft worker keeps a pool of its own (build_sglang).
    ModelSpec kv_rank = rank;
    i64 draft_bpt = 0;
    if (has_draft) {
      for (const Layer& l : draft_rank.layers)
        if (holds_tokens(l.kv) && l.kv != KvKind::cross) draft_bpt = add(draft_bpt, layer_bytes_per_token(l, spec_.kv), "draft KV bytes per token");
      if (e.kind != EngineKind::sglang) kv_rank.layers.insert(kv_rank.layers.end(), draft_rank.layers.begin(), draft_rank.layers.end());
    }
    switch (e.kind) {
      case EngineKind::vllm: trial.build_vllm(kv_rank, avail); break;
      case EngineKind::sglang: trial.build_sglang(rank, avail, draft_bpt); break;
      case EngineKind::trtllm: trial.build_trtllm(kv_rank, avail); break;
      default: trial.build_generic(kv_rank, avail); break;
    }
    if (has_draft && draft_bpt > 0) {
      // the draft's KV: in vLLM and TensorRT-LLM the draft layers' share of the one pool (counted in
      // kv_cache_available, not again in the fixed terms); in SGLang a second pool of the same token count
      if (e.kind == EngineKind::vllm)
        trial.budget_.push_back({"draft_kv", pages_bytes(trial.pool_units_, mul(trial.unit_tokens_, draft_bpt, "draft page bytes")),
                                 std::to_string(trial.pool_units_) + " blocks x " + std::to_string(trial.unit_tokens_) + " tokens x " +
                                     std::to_string(draft_bpt) + " B draft KV per token: the draft layers' share of the pool (they join the target's KV cache groups)",
                                 true, false});
      else if (e.kind == EngineKind::trtllm)
        trial.budget_.push_back({"draft_kv", mul(trial.report_.max_tokens, draft_bpt, "draft KV bytes"),
                                 std::to_string(trial.report_.max_tokens) + " tokens x " + std::to_string(draft_bpt) +
                                     " B draft KV per token: the draft layers' share of the pool (bytes per token include them)",
                                 true, false});
      else if (e.kind == EngineKind::sglang)
        trial.budget_.push_back({"draft_kv", mul(trial.report_.max_total_num_tokens, draft_bpt, "draft KV bytes"),
                                 std::to_string(trial.report_.max_total_num_tokens) + " tokens x " + std::to_string(draft_bpt) +
                                     " B draft cell: the draft worker's own pool of draft_runner_cache_size tokens, allocated after the target's",
                                 false, false});
    }
    // every non-KV byte on this GPU, inside or outside the engine's usable share
    trial.fixed_ = 0;
    for (const auto& t : trial.budget_)
      if (t.name != "gpu_total" && t.name != "kv_cache_available" && !(t.name == "draft_kv" && e.kind != EngineKind::sglang))
        trial.fixed_ = add(trial.fixed_, t.bytes);
    if (trial.fixed_ > total_ && trial.startup_limit_.empty()) trial.startup_limit_ = "gpu_memory";
    // a pool set by hand (--kv-cache-memory-bytes, vLLM --num-gpu-blocks-override) is allocated whatever memory is
    // free: beside the other terms it must fit the GPU, or the cache allocation runs out of memory at startup
    if (e.kv_cache_memory_bytes || (e.kind == EngineKind::vllm && e.num_gpu_blocks_override)) {
      const i64 pool = e.kind == EngineKind::vllm ? trial.report_.kv_pool_bytes : avail;
      if (add(trial.fixed_, pool, "GPU bytes") > total_) {
        if (trial.startup_limit_.empty()) trial.startup_limit_ = "gpu_memory";
        trial.report_.startup_ok = false;
        trial.report_.notes.push_back("the KV pool set by hand (" + human_bytes(pool) + ") and the other terms (" + human_bytes(trial.fixed_) +
                                      ") exceed the GPU's " + human_bytes(total_) + ": allocating the cache runs out of memory");
      }
    }
    if (first || trial.pool_units_ < pool_units_) {
      *this = std::move(trial);
      first = false;
    }
  }
  if (spec_.parallel.pp > 1)
    report_.notes.push_back("pipeline stage " + std::to_string(stage_) + " has the smallest KV pool; every stage uses its block count");
  // host KV tiers, per rank. vLLM --kv-offloading-size is summed over the TP ranks (CacheConfig.kv_offloading_size);
  // its blocks hold tokens at the GPU pool's bytes per token. SGLang HiCache (memory_pool_host.py HostKVCache):
  // --hicache-size GB (10^9) // bytes per token, else the device pool's tokens x --hicache-ratio.
  // Connectors (io/deployment_build.cpp kv_connector_tiers): OffloadingConnector cpu_bytes_to_use is summed over
  // the ranks like --kv-offloading-size; its older num_cpu_blocks counts blocks per rank of block_size tokens
  // (default: the GPU block size); LMCache sizes are per rank and hold whole chunks of kv_chunk_tokens tokens.
  // tokens = bytes per rank / (GPU pool bytes / GPU pool tokens), rounded down to whole chunks.
  if (e.kind == EngineKind::vllm && report_.kv_pool_bytes > 0 && report_.kv_cache_tokens > 0) {
    const long double per_token = static_cast<long double>(report_.kv_pool_bytes) / report_.kv_cache_tokens;
    auto tokens_of = [&](i64 bytes) {
      const i64 t = static_cast<i64>(static_cast<long double>(bytes) / per_token);
      return e.kv_chunk_tokens > 0 ? t / e.kv_chunk_tokens * e.kv_chunk_tokens : t;
    };
    std::string how;
    if (e.kv_offload_cpu_blocks > 0) {
      const i64 bt = e.kv_offload_block_tokens > 0 ? e.kv_offload_block_tokens : report_.block_size;
      report_.host_kv_tokens = mul(e.kv_offload_cpu_blocks, bt, "host KV tokens");
      report_.host_kv_bytes = static_cast<i64>(static_cast<long double>(report_.host_kv_tokens) * per_token);
      how = std::to_string(e.kv_offload_cpu_blocks) + " blocks x " + std::to_string(bt) + " tokens at the GPU pool's bytes per token";
    } else if (e.kv_offload_bytes > 0 || e.kv_offload_rank_bytes > 0) {
      report_.host_kv_bytes = add(e.kv_offload_bytes / spec_.parallel.tp, e.kv_offload_rank_bytes);
      report_.host_kv_tokens = tokens_of(report_.host_kv_bytes);
      how = e.kv_offload_bytes > 0 ? human_bytes(e.kv_offload_bytes) + " summed over TP " + std::to_string(spec_.parallel.tp) + " / the ranks"
                                   : human_bytes(e.kv_offload_rank_bytes) + " per rank";
    }
    // LMCache local_cpu false: the pinned buffer is allocated but holds no chunks (LocalCPUBackend use_hot)
    if (!e.kv_offload_holds) report_.host_kv_tokens = 0;
    if (report_.host_kv_bytes > 0)
      report_.tier_terms.push_back({"host", "kv_offload", report_.host_kv_bytes, "pinned",
                                    how + (e.kv_offload_basis.empty() ? "" : " (" + e.kv_offload_basis + ")") +
                                        (e.kv_offload_holds ? "" : "; local_cpu false: a staging buffer, no chunks kept")});
    if (e.disk_kv_bytes > 0) {
      report_.disk_kv_bytes = e.disk_kv_bytes;
      report_.disk_kv_tokens = tokens_of(e.disk_kv_bytes);
      report_.tier_terms.push_back({"disk", "kv_offload", e.disk_kv_bytes, "disk",
                                    human_bytes(e.disk_kv_bytes) + " per rank, whole chunks" +
                                        (e.disk_kv_basis.empty() ? "" : " (" + e.disk_kv_basis + ")")});
    }
  }
  if (e.kind == EngineKind::sglang && e.hierarchical_cache && report_.cell_size > 0) {
    report_.host_kv_tokens = e.hicache_bytes > 0 ? e.hicache_bytes / report_.cell_size
                                                 : static_cast<i64>(static_cast<double>(report_.max_total_num_tokens) * e.hicache_ratio);
    report_.host_kv_bytes = mul(report_.host_kv_tokens, report_.cell_size, "host KV bytes");
    report_.tier_terms.push_back({"host", "kv_offload", report_.host_kv_bytes, "pinned",
                                  std::to_string(report_.host_kv_tokens) + " tokens x " + std::to_string(report_.cell_size) +
                                      " B cell (SGLang HiCache, memory_pool_host.py HostKVCache)"});
  }
  if (report_.host_weight_bytes > 0)
    report_.tier_terms.push_back({"host", "cpu_offload_weights", report_.host_weight_bytes, "pinned",
                                  "--cpu-offload-gb: this rank's weights kept in host memory"});
  if (e.kind == EngineKind::trtllm && (report_.spec_extra_tokens = trtllm_spec_extra_tokens(e.spec)) > 0)
    report_.notes.push_back("speculative decoding: each request holds " + std::to_string(report_.spec_extra_tokens) +
                            " KV tokens beyond its own (max_draft_len draft tokens per step" +
                            (report_.spec_extra_tokens > e.spec.num_tokens ? " + max_draft_len - 1 extra tokens of the one-model drafter" : "") +
                            "; resource_manager.py KVCacheManager.prepare_resources)");
  // vLLM's CPU LoRA cache (vllm/lora/worker_manager.py LRUCacheWorkerLoRAManager: each worker loads adapters with
  // device="cpu" into an LRU cache of capacity max_cpu_loras, vllm/config/lora.py LoRAConfig: default max_loras, at
  // least max_loras). Each worker holds whole (unsharded) adapters: rank x (in + out) elements per adapted
  // projection per layer x lora_dtype (the model's): lora_buffer_bytes of the full model for max_cpu_loras slots.
  if (e.kind == EngineKind::vllm && e.lora_slots > 0) {
    const i64 cpu = e.lora_cpu_slots > 0 ? e.lora_cpu_slots : e.lora_slots;
    const i64 bytes = lora_buffer_bytes(spec_.model, cpu, e.lora_rank);
    report_.host_weight_bytes = add(report_.host_weight_bytes, bytes, "host weights");
    report_.tier_terms.push_back({"host", "lora_cpu_cache", bytes, "pinned",
                                  std::to_string(cpu) + " adapters (max_cpu_loras" + (e.lora_cpu_slots > 0 ? "" : " = max_loras") + ") x rank " +
                                      std::to_string(e.lora_rank) + " x (in + out of q, k, v, o, gate, up, down per layer, unsharded) x " +
                                      std::string(format_info(spec_.model.dtype).name) +
                                      " (vllm lora/worker_manager.py LRUCacheWorkerLoRAManager, config/lora.py max_cpu_loras)"});
  }
}

// ---------------------------------------------------------------- vLLM V1
// Per layer page = block_size x (K row + V row) bytes (MLA: one latent row, coefficient 1).
// Layers with identical specs form a type; with several types vLLM splits them into groups of
// group_size layers (the smallest type's count, or the largest when it is < 1.5 x the smallest),
// padding the last group of a type. The pool has group_size tensors of num_blocks pages:
// num_blocks = available // (page x group_size).
void Planner::build_vllm(const ModelSpec& rank, i64 available) {
  const EngineSettings& e = spec_.engine;
  if (e.chunked_prefill == false && e.rules && !e.rules->v0_engine && !e.rules->v1_chunked_optional)
    report_.notes.push_back("vLLM 0.8-0.11 (V1) chunks prompts whatever --no-enable-chunked-prefill says (EngineArgs sets "
                            "enable_chunked_prefill = True); it takes effect from 0.12");
  i64 block = e.block_size;
  // Hybrid attention + Mamba: attention block size grows (in multiples of 16) until its page holds a
  // Mamba state; Mamba pages are padded to the attention page (HybridAttentionMambaModelConfig).
  i64 attn_pt = 0, state = 0;
  for (const Layer& l : rank.layers) {
    // the cache dtype's page: a layer kept in the model dtype does not set it (platforms/interface.py
    // _align_hybrid_block_size sizes the attention page by cache_config.cache_dtype)
    if (holds_tokens(l.kv) && l.kv != KvKind::cross && !l.kv_model_dtype) attn_pt = std::max(attn_pt, layer_bytes_per_token(l, spec_.kv));
    if (l.kv == KvKind::ssm) state = std::max(state, layer_state_bytes(l, spec_.kv.state_format));
  }
  if (attn_pt > 0 && state > 0) {
    const i64 attn_block = mul(16, ceil_div(state, mul(16, attn_pt)));
    if (attn_block > block) {
      report_.notes.push_back("hybrid Mamba model: attention block size raised from " + std::to_string(block) + " to " +
                              std::to_string(attn_block) + " so one page holds a Mamba state");
      block = attn_block;
    }
  }
  // vLLM >= 0.25 (#42890, platforms/interface.py _align_heterogeneous_kv_block_size): with a skip list in force and
  // the quantised (primary) per-token page smaller than the model-dtype one, the block grows in steps of
  // max(kernel block, block) until a primary page covers a model-dtype page of the backend's smallest kernel block;
  // TurboQuant's primary is sized as a 1-byte cache of D. shared_page (skip_page_size_padded) is then the page every
  // sliding-window layer pads to, at the largest kernel block whose own page fits (attention.py
  // _largest_kernel_block_within: FlashInfer 16 / 32 / 64, the other backends MultipleOf(16), so 16)
  i64 shared_page = 0;
  if (e.rules->skip_block_align && spec_.kv.skip_list) {
    const auto first = std::find_if(rank.layers.begin(), rank.layers.end(), [](const Layer& l) {
      return l.kv == KvKind::full || l.kv == KvKind::sliding || l.kv == KvKind::chunked || l.kv == KvKind::mla_latent || l.kv == KvKind::mla_expanded;
    });
    if (first != rank.layers.end()) {
      Layer primary = *first, padded = *first;
      primary.kv_model_dtype = false;
      padded.kv_model_dtype = true;
      KvOptions o = spec_.kv;
      if (is_turboquant(o.k_format)) o.k_format = o.v_format = ElemFormat::int8;
      const i64 primary_pt = add(layer_k_bytes_per_token(primary, o.k_format), layer_v_bytes_per_token(primary, o.v_format));
      const i64 padded_pt = layer_bytes_per_token(padded, spec_.kv);
      // the backend's smallest kernel block: 16 (FlashAttention, FlashInfer, Triton, TurboQuant); an MLA backend's one
      // size (vllm_mla_block)
      const i64 kernel_block = is_mla(first->kv) ? vllm_mla_block(*e.rules, spec_.gpu.compute_capability, rank.sparse_mla) : 16;
      if (padded_pt > primary_pt && primary_pt > 0) {
        const i64 align = std::max(kernel_block, block);
        const i64 aligned = mul(align, ceil_div(mul(padded_pt, kernel_block), mul(align, primary_pt)), "vLLM block size");
        if (aligned > block) {
          report_.notes.push_back("attention block size raised from " + std::to_string(block) + " to " + std::to_string(aligned) +
                                  " so a quantised page (" + std::to_string(primary_pt) + " B a token) covers a model-dtype page (" +
                                  std::to_string(padded_pt) + " B a token) of " + std::to_string(kernel_block) + " tokens");
          block = aligned;
        }
        shared_page = mul(block, primary_pt, "vLLM shared page");
      }
    }
  }
  struct Type { KvKind kind; i64 window; i64 bpt; i64 page; i64 n = 0; i64 block_tokens = 0; i64 base_block = 0; };
  std::vector<Type> types;
  i64 max_page = 0;
  for (const Layer& l : rank.layers) {
    if (l.kv == KvKind::none) continue;
    Type t{l.kv, l.window, 0, 0};
    t.base_block = block;
    if (l.kv == KvKind::ssm) {
      t.page = layer_state_bytes(l, spec_.kv.state_format);
    } else {
      t.bpt = layer_bytes_per_token(l, spec_.kv);
      t.page = mul(block, t.bpt, "vLLM page bytes");
      if (l.kv == KvKind::sliding && shared_page > 0) {
        const bool flashinfer = spec_.kv.k_format == ElemFormat::nvfp4;
        i64 sw_block = 16;
        for (const i64 b : {32, 64})
          if (flashinfer && mul(b, t.bpt) <= shared_page) sw_block = b;
        t.base_block = sw_block;
        t.page = std::max(shared_page, mul(sw_block, t.bpt, "vLLM page bytes"));
      }
    }
    if (t.kind == KvKind::mla_expanded) t.kind = KvKind::full;
    // vLLM 0.8-0.9 unify_hybrid_kv_cache_specs: sliding-window layers become full attention (no saving)
    if (!e.rules->sliding_window_kept && (t.kind == KvKind::sliding || t.kind == KvKind::chunked)) {
      if (std::none_of(report_.notes.begin(), report_.notes.end(), [](const std::string& n) { return n.rfind("vLLM 0.8-0.9", 0) == 0; }))
        report_.notes.push_back("vLLM 0.8-0.9 caches sliding-window layers at full length (unify_hybrid_kv_cache_specs)");
      t.kind = KvKind::full;
      t.window = 0;
    }
    auto it = std::find_if(types.begin(), types.end(), [&](const Type& x) {
      return x.kind == t.kind && x.window == t.window && x.bpt == t.bpt && x.page == t.page && x.base_block == t.base_block;
    });
    if (it == types.end()) { types.push_back(t); it = types.end() - 1; }
    ++it->n;
    max_page = std::max(max_page, t.page);
  }
  if (types.empty()) throw InputError("model", "has no layer that keeps a cache", "check the config");
  // vLLM >= 0.11 (#25101, UniformTypeKVCacheSpecs): layers of one attention type whose pages differ (other head counts
  // or sizes, layers kept in the model dtype beside a quantised cache) form one group: a block holds block_size tokens
  // in every layer, each layer at its own page, so a block spans the sum of the layers' pages (kv_cache_interface.py
  // UniformTypeKVCacheSpecs.page_size_bytes; kv_cache_utils.py get_kv_cache_groups)
  const bool one_type = types.size() > 1 && e.rules->uniform_type_group && types.front().kind != KvKind::ssm &&
                        std::all_of(types.begin(), types.end(), [&](const Type& t) { return t.kind == types.front().kind && t.window == types.front().window; });
  i64 uniform_block_bytes = 0;
  if (one_type) {
    Type merged = types.front();
    merged.n = 0;
    std::string parts;
    for (const auto& t : types) {
      merged.n += t.n;
      uniform_block_bytes = add(uniform_block_bytes, mul(t.n, t.page, "vLLM block bytes"), "vLLM block bytes");
      parts += (parts.empty() ? "" : " + ") + std::to_string(t.n) + " x " + std::to_string(t.page) + " B";
    }
    merged.bpt = ceil_div(uniform_block_bytes, mul(merged.n, block));  // the layers' mean, for display
    merged.page = max_page;
    report_.notes.push_back("layers' pages differ: one KV cache group whose block spans " + parts + " = " + std::to_string(uniform_block_bytes) +
                            " B (vLLM UniformTypeKVCacheSpecs)");
    types = {merged};
  }
  // Uniform page size (kv_cache_utils.py unify_kv_cache_spec_page_size): Mamba pages are padded to the largest page;
  // an attention layer with a smaller page (Gemma 4: sliding and full layers of different head sizes) gets its block
  // size multiplied by largest / its page, so its page holds that many more tokens; one that does not divide the
  // largest keeps its block size and pads its page (newer vLLM, backends that index KV by block stride; older
  // releases refuse to start)
  for (auto& t : types) {
    t.block_tokens = t.base_block;
    if (t.kind == KvKind::sliding && shared_page > 0 && t.page > mul(t.base_block, t.bpt))
      report_.notes.push_back("sliding-window layers' page padded from " + std::to_string(mul(t.base_block, t.bpt)) + " B (" + std::to_string(t.base_block) +
                              " tokens) to the shared " + std::to_string(t.page) + " B (skip_page_size_padded)");
    if (t.page < max_page && t.kind == KvKind::ssm) {
      report_.notes.push_back("Mamba state page " + std::to_string(t.page) + " B padded to the attention page " + std::to_string(max_page) + " B");
    } else if (t.page < max_page && max_page % t.page == 0) {
      t.block_tokens = mul(t.base_block, max_page / t.page, "vLLM block tokens");
      report_.notes.push_back(std::string(kv_kind_name(t.kind)) + " layers' block size raised from " + std::to_string(t.base_block) + " to " +
                              std::to_string(t.block_tokens) + " tokens so their page matches the largest (" + std::to_string(max_page) + " B)");
    } else if (t.page < max_page) {
      report_.notes.push_back(std::string(kv_kind_name(t.kind)) + " layers' page " + std::to_string(t.page) + " B does not divide the largest (" +
                              std::to_string(max_page) + " B): padded to it (vLLM releases without page_size_padded refuse to start)");
    }
    t.page = max_page;
  }
  i64 group_size = 0, num_groups = 0, layers = 0;
  if (types.size() == 1) {
    group_size = types[0].n;
    num_groups = 1;
    layers = types[0].n;
  } else {
    i64 mn = types[0].n, mx = types[0].n;
    for (const auto& t : types) { mn = std::min(mn, t.n); mx = std::max(mx, t.n); layers += t.n; }
    group_size = static_cast<double>(mx) < 1.5 * static_cast<double>(mn) ? mx : mn;
    for (const auto& t : types) num_groups += ceil_div(t.n, group_size);
  }
  report_.padding_layers = num_groups * group_size - layers;
  if (report_.padding_layers > 0)
    report_.notes.push_back("vLLM adds " + std::to_string(report_.padding_layers) + " padding layers to equalise KV cache groups");
  groups_.clear();
  for (const auto& t : types)
    groups_.push_back({t.kind, t.n, t.window, t.bpt, t.kind == KvKind::ssm ? t.page : 0, t.page, ceil_div(t.n, group_size), t.block_tokens});
  unit_bytes_ = one_type ? uniform_block_bytes : mul(max_page, group_size, "vLLM block bytes");
  // Decode context parallel (-dcp, #23734): each of the dcp ranks holds every dcp-th token of a sequence, so a block
  // of block_size slots on a rank serves block_size x dcp tokens; the scheduler's block size becomes block_size x dcp
  // (kv_cache_utils.py resolve_kv_cache_block_sizes) and the printed token count is blocks x block_size x dcp
  const i64 dcp = e.decode_context_parallel.value_or(1);
  if (dcp < 1) throw InputError("decode_context_parallel_size", "must be >= 1");
  if (dcp > 1) {
    if (spec_.parallel.tp % dcp != 0)
      throw InputError("decode_context_parallel_size", std::to_string(dcp) + " does not divide the tensor-parallel size " + std::to_string(spec_.parallel.tp),
                       "use a divisor of --tensor-parallel-size");
    for (const auto& t : types)
      if (t.kind == KvKind::sliding || t.kind == KvKind::chunked || t.kind == KvKind::ssm)
        throw InputError("decode_context_parallel_size", "vLLM shards only full-attention and MLA caches across decode-context-parallel ranks",
                         "drop --decode-context-parallel-size for models with sliding-window or Mamba layers");
    report_.notes.push_back("decode context parallel " + std::to_string(dcp) + ": each rank holds 1/" + std::to_string(dcp) +
                            " of a sequence's KV; a block serves " + std::to_string(block * dcp) + " tokens");
  }
  unit_tokens_ = mul(block, dcp, "vLLM block tokens");
  pool_units_ = pages_in_bytes(available, unit_bytes_);
  if (e.num_gpu_blocks_override) {
    // vLLM get_kv_cache_config: "Overriding num_gpu_blocks=N with num_gpu_blocks_override=M" - the pool is M
    // blocks whatever memory profiling found (more than fits runs out of memory when the cache is allocated)
    report_.notes.push_back("Overriding num_gpu_blocks=" + std::to_string(pool_units_) + " with num_gpu_blocks_override=" +
                            std::to_string(*e.num_gpu_blocks_override));
    pool_units_ = *e.num_gpu_blocks_override;
  }
  report_.block_size = block;
  report_.page_bytes = max_page;
  report_.group_size = group_size;
  report_.num_groups = num_groups;
  report_.num_gpu_blocks = pool_units_;
  report_.kv_pool_bytes = pages_bytes(pool_units_, unit_bytes_);
  // _report_kv_cache_config: tokens = num_blocks // num_groups x block_size
  const i64 per_req = vllm_blocks_for(e.max_model_len);
  report_.max_concurrency = per_req > 0 ? static_cast<double>(pool_units_) / static_cast<double>(per_req) : 0;
  // "GPU KV cache size: N tokens": num_blocks // num_groups x block_size (_report_kv_cache_config, 0.10-0.20);
  // from 0.21 int(max_concurrency x max_model_len), group-aware (#41069)
  // (the smallest block size of the groups: min_block_size)
  i64 min_block = group_block_tokens(groups_.front());
  for (const auto& g : groups_) min_block = std::min(min_block, group_block_tokens(g));
  report_.kv_cache_tokens = e.rules->kv_tokens_from_concurrency
                                ? static_cast<i64>(report_.max_concurrency * static_cast<double>(e.max_model_len))
                                : mul(pool_units_ / num_groups, min_block);
  report_.startup_ok = per_req <= pool_units_;
  // the startup check counts every block, but V1's BlockPool hands one out as its null block (block_pool.py
  // null_block = free_block_queue.popleft()): requests get the others (cell, max_concurrency), and a pool of exactly
  // one max-length request's blocks starts while a request that long never gets its last block
  reserved_units_ = e.rules->v0_engine ? 0 : 1;
  if (report_.startup_ok && reserved_units_ > 0 && units_per_request(e.max_model_len) > request_units())
    report_.notes.push_back("a max_model_len request needs all " + std::to_string(pool_units_) +
                            " blocks: vLLM starts (its check counts them all), but V1 keeps one as its null block, so a request that long "
                            "never gets its last block (one block more, or a shorter max_model_len)");
  // vLLM refuses to start when one max_model_len request does not fit the pool (check_enough_kv_cache_memory:
  // "To serve at least one request with the model's max seq len ..."): nothing fits a deployment that does not start
  if (!report_.startup_ok && startup_limit_.empty()) startup_limit_ = "does_not_start";
  if (!report_.startup_ok)  // vLLM estimate_max_model_len: the longest whose blocks fit the pool
    report_.estimated_max_model_len = std::max<i64>(largest_passing(1, e.max_model_len, [&](i64 len) { return vllm_blocks_for(len) <= pool_units_; }), 0);
}

// Blocks one request of `tokens` tokens needs (vLLM max_memory_usage_bytes per group, in blocks):
// full/MLA cdiv(tokens, block); sliding cdiv(min(window - 1 + max_num_batched_tokens, tokens), block) + 1;
// chunked cdiv(min(chunk + max_num_batched_tokens, tokens), block); Mamba 1; cross cdiv(encoder, block).
// Tokens one block of a group holds: vLLM's per-group block size (raised by unify_kv_cache_spec_page_size) x the
// decode-context-parallel ranks; the other engines' groups take the planner's unit.
i64 Planner::group_block_tokens(const CacheGroup& g) const {
  if (g.block_tokens <= 0) return unit_tokens_;
  return mul(g.block_tokens, spec_.engine.decode_context_parallel.value_or(1), "vLLM block tokens");
}

i64 Planner::vllm_blocks_for(i64 tokens) const {
  const i64 mnbt = spec_.engine.max_num_batched_tokens;
  i64 blocks = 0;
  for (const auto& g : groups_) {
    const i64 block = group_block_tokens(g);
    i64 b = 0;
    switch (g.kind) {
      case KvKind::sliding: b = pages_for_tokens(std::min(g.window - 1 + mnbt, tokens), block) + 1; break;
      case KvKind::chunked: b = pages_for_tokens(std::min(g.window + mnbt, tokens), block); break;
      case KvKind::ssm: b = 1; break;
      case KvKind::cross: b = pages_for_tokens(spec_.kv.encoder_tokens, block); break;
      default: b = pages_for_tokens(tokens, block); break;
    }
    blocks = add(blocks, mul(b, g.groups), "blocks per request");
  }
  return blocks;
}

// ---------------------------------------------------------------- SGLang
namespace {
constexpr const char* kSglangNewest = "0.5.10";  // planner/data/engine-flags/sglang: the newest release read

// The SGLang release the hybrid SWA and speculative-pool rules read: the one named, else the newest flag table read
// (main's rules after it, Gemma 4 and the pool configurator, take an explicit --engine sglang@0.5.11 or later)
std::string sglang_release(const EngineSettings& e) { return is_newest_version(e.version) ? kSglangNewest : e.version; }

// SGLang's hybrid SWA pool (two pools: the full layers' tokens and ratio x as many for the sliding-window layers), by
// release: model_config.py is_hybrid_swa_model and server_args.py _handle_model_specific_adjustments, read at
// v0.5.2 (b0d25e7), v0.5.6 (7ae368e), v0.5.7-v0.5.10 and main (35591c7). Before 0.5.8 no model takes it by default
// (gpt-oss and Gemma 2/3 force --disable-hybrid-swa-memory; Llama-4 needs --hybrid-kvcache-ratio); from 0.5.8
// Llama-4 and gpt-oss (#17261) do, gpt-oss not under the trtllm_mha backend (its default on SM 10.x) before 0.5.10
// (#19079) nor with speculative decoding in 0.5.8 (#17517); MiMo-V2-Flash from 0.5.7, Step-3.5 from 0.5.9, Gemma 4
// after 0.5.10 (#21952). Returns why not ("" when it applies).
std::string sglang_no_hybrid_swa(const PlanSpec& s) {
  const EngineSettings& e = s.engine;
  const std::string at = sglang_release(e);
  auto from = [&](const char* v) { return compare_versions(at, v) >= 0; };
  const std::string& a = s.model.architecture;
  const std::string release = "SGLang " + at;
  if (e.disable_hybrid_swa) return "--disable-hybrid-swa-memory";
  if (a == "Llama4ForConditionalGeneration") return from("0.5.8") ? "" : release + " gives Llama-4 the hybrid pool only with --hybrid-kvcache-ratio (until 0.5.8)";
  if (a == "GptOssForCausalLM") {
    if (!from("0.5.8")) return release + " turns it off for gpt-oss (until 0.5.8)";
    const bool sm100 = is_sm10x(s.gpu.compute_capability);
    if (sm100 && !from("0.5.10")) return release + " turns it off for gpt-oss under trtllm_mha, the default attention backend on SM 10.x (until 0.5.10)";
    if (e.spec.on() && !from("0.5.9")) return release + " turns it off for gpt-oss with speculative decoding";
    return "";
  }
  if (a == "MiMoV2FlashForCausalLM" || a == "Step3p5ForCausalLM") {
    if (!from(a == "MiMoV2FlashForCausalLM" ? "0.5.7" : "0.5.9")) return release + " has no hybrid pool for " + a;
    if (e.hierarchical_cache && from("0.5.8")) return "--enable-hierarchical-cache turns it off for " + a;
    return "";
  }
  if (a == "Gemma4ForCausalLM" || a == "Gemma4ForConditionalGeneration") return from("0.5.11") ? "" : release + " has no hybrid pool for Gemma 4 (main after 0.5.10, #21952)";
  return a + " is not one of SGLang's hybrid SWA architectures";
}
}  // namespace

// cell_size = sum over the rank's layers of (K row + V row) bytes per token (MLA: the latent);
// max_total_num_tokens = available // cell_size, aligned down to page_size; --max-total-tokens caps it.
// Speculative decoding (model_runner.py init_memory_pool, 0.4.6 to 0.5.6): the target's pool grows by a headroom
// for the draft and verify tokens in flight, max_num_reqs x (num_steps x topk + num_draft_tokens) + 100 (#15748 removed
// it: 0.5.7 on), and the draft worker allocates a pool of the same number of tokens (draft_runner_cache_size) at the
// draft's cell size.
// max_num_reqs is --max-running-requests, else clamp(profiled tokens / context_len x 512, 2048, 4096).
void Planner::build_sglang(const ModelSpec& rank, i64 available, i64 draft_cell) {
  const EngineSettings& e = spec_.engine;
  // SGLang's pool holds a buffer for every hidden layer (ModelConfig.num_attention_layers = num_hidden_layers): Gemma's
  // KV-sharing layers, which read their donor's buffer (RadixAttention layer_id = kv_shared_layer_index), keep an
  // unused one of their own geometry
  i64 cell = 0, state = 0, shared = 0;
  for (const Layer& stored : rank.layers) {
    const Layer l = with_own_cache(stored);
    shared += shares_kv(stored) ? 1 : 0;
    if (holds_tokens(l.kv) && l.kv != KvKind::cross) cell = add(cell, layer_bytes_per_token(l, spec_.kv));
    state = add(state, layer_state_bytes(l, spec_.kv.state_format));
  }
  if (shared > 0)
    report_.notes.push_back("SGLang allocates a KV buffer for each of the " + std::to_string(shared) +
                            " KV-sharing layers too (every hidden layer has one; they read their donor's)");
  if (cell == 0) throw InputError("engine", "the model keeps no per-token KV cache", "use --engine vllm for pure state-space models");
  const i64 derived = spec_.model.max_context_sglang > 0 ? spec_.model.max_context_sglang : spec_.model.max_context;
  if (derived > 0 && e.max_model_len > derived)
    report_.notes.push_back("context_length " + std::to_string(e.max_model_len) + " is above the " + std::to_string(derived) +
                            " SGLang derives from the config: it warns and uses it (" +
                            (e.allow_long_context.value_or(false) ? std::string("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN set")
                                                  : "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN defaults on in SGLang 0.4.4-0.5.0") + ")");
  // the hybrid SWA pool: full-layer bytes F and sliding-layer bytes S per token (sums over the rank's layers)
  i64 full_b = 0, swa_b = 0, window = 0;
  for (const Layer& stored : rank.layers) {
    const Layer l = with_own_cache(stored);
    if (!holds_tokens(l.kv) || l.kv == KvKind::cross) continue;
    const bool sliding = l.kv == KvKind::sliding || l.kv == KvKind::chunked;
    (sliding ? swa_b : full_b) = add(sliding ? swa_b : full_b, layer_bytes_per_token(l, spec_.kv));
    if (sliding) window = std::max(window, l.window);
  }
  const std::string no_swa = swa_b > 0 ? sglang_no_hybrid_swa(spec_) : "no sliding-window layers";
  const bool hybrid = swa_b > 0 && no_swa.empty();
  const double ratio = e.swa_full_tokens_ratio;
  if (swa_b > 0 && !hybrid)
    report_.notes.push_back("SGLang caches the sliding-window layers at full length here: " + no_swa);
  if (state > 0) {
    // Mamba/linear-attention state pool: one state per running request, taken before the KV pool
    const i64 pool = mul(state, e.max_num_seqs == 4096 ? 0 : e.max_num_seqs);
    if (pool > 0) available -= pool;
    report_.state_bytes = state;
    report_.notes.push_back("recurrent state " + human_bytes(state) + " per request is held in a separate pool");
  }
  const i64 page = e.block_size;
  i64 tokens = available > 0 ? available / cell : 0;
  // #15748 ("removing wrong logic about max total token in spec decoding", first in v0.5.7) dropped the headroom
  const bool spec_headroom = compare_versions(sglang_release(e), "0.5.7") < 0;
  if (!spec_headroom && e.spec.on() && tokens > 0 && draft_cell > 0)
    report_.notes.push_back("speculative decoding: the draft worker keeps a pool of as many tokens as the target's");
  if (spec_headroom && e.spec.on() && tokens > 0) {
    const i64 reqs = e.max_num_seqs > 0 ? e.max_num_seqs / e.attention_dp
                                        : std::clamp<i64>(max_len_ > 0 ? static_cast<i64>(static_cast<double>(tokens) / static_cast<double>(max_len_) * 512.0) : 4096,
                                                          2048, 4096);
    const i64 headroom = add(mul(reqs, add(mul(e.spec.num_steps, e.spec.topk, "speculative tokens"), e.spec.num_tokens), "speculative headroom"), 100);
    report_.notes.push_back("speculative decoding: the pool holds " + std::to_string(headroom) + " more tokens for draft and verify tokens in flight (" +
                            std::to_string(reqs) + " requests x (" + std::to_string(e.spec.num_steps) + " steps x top-" + std::to_string(e.spec.topk) +
                            " + " + std::to_string(e.spec.num_tokens) + " draft tokens) + 100)" +
                            (draft_cell > 0 ? "; the draft worker keeps a pool of as many tokens" : ""));
    tokens = add(tokens, headroom);
  }
  tokens = tokens / page * page;
  if (e.max_total_tokens) tokens = std::min(tokens, *e.max_total_tokens / page * page);
  i64 swa_tokens = 0;
  if (hybrid) {
    // 0.5.7-0.5.10 (model_runner set_num_tokens_hybrid_swa; #18039 from 0.5.9): T tokens as if one pool held every layer
    // (capped and page-aligned above), full = align(T x (F + S) / (F + ratio x S)); main (pool_configurator.py
    // HybridSWAPoolConfigurator): full = align(available // (F + ratio x S)), --max-total-tokens capping full. Then
    // swa = align(int(full x ratio)). F = S per layer (gpt-oss, Llama-4) makes 0.5.8's equal-bytes split the same.
    const i64 swa_cell = full_b + static_cast<i64>(std::floor(ratio * static_cast<double>(swa_b)));
    const bool configurator = compare_versions(sglang_release(e), "0.5.11") >= 0;
    const double weighted = static_cast<double>(full_b) + ratio * static_cast<double>(swa_b);
    i64 full = configurator ? static_cast<i64>(std::floor(static_cast<double>(std::max<i64>(available, 0)) / weighted))
                            : static_cast<i64>(std::floor(static_cast<double>(tokens) * static_cast<double>(cell) / weighted));
    full = full / page * page;
    if (configurator && e.max_total_tokens) full = std::min(full, *e.max_total_tokens / page * page);
    swa_tokens = static_cast<i64>(std::floor(static_cast<double>(full) * ratio)) / page * page;
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", ratio);
    report_.notes.push_back("SGLang's hybrid SWA pool (--swa-full-tokens-ratio " + std::string(shown) + "): full_layer_tokens=" + std::to_string(full) +
                            ", swa_layer_tokens=" + std::to_string(swa_tokens) + "; a request holds its whole length in the full layers' pool and " +
                            "at most its window (" + std::to_string(window) + " tokens) in the sliding layers'");
    tokens = full;
    cell = swa_cell;
    swa_window_ = window;
    swa_units_ = swa_tokens / page;
  }
  report_.cell_size = cell;
  report_.page_bytes = cell;
  report_.block_size = page;
  report_.max_total_num_tokens = tokens;
  report_.swa_layer_tokens = swa_tokens;
  report_.kv_pool_bytes = hybrid ? add(mul(tokens, full_b), mul(swa_tokens, swa_b)) : mul(tokens, cell);
  unit_tokens_ = page;
  unit_bytes_ = mul(cell, page);
  pool_units_ = tokens / page;
  // max_running_requests (tp_worker.py / scheduler _resolve_max_num_reqs): the req_to_token pool holds
  // clamp(tokens / context_len x 512, 2048, 4096) requests; unset, tokens // 2 caps it, else the value given
  const i64 req_pool = std::clamp<i64>(max_len_ > 0 ? static_cast<i64>(static_cast<double>(tokens) / static_cast<double>(max_len_) * 512.0) : 4096,
                                       2048, 4096);
  // with --enable-dp-attention each group takes max_running_requests // dp_size
  max_seqs_ = std::min(e.max_num_seqs > 0 ? e.max_num_seqs / e.attention_dp : tokens / 2, req_pool);
  // SGLang starts whenever the pool holds tokens (scheduler: "Not enough memory" only at 0) and caps a
  // request at max_req_len = min(context_len - 1, max_total_num_tokens - 1) (scheduler.py init_memory_pool_and_cache)
  report_.startup_ok = tokens > 0;
  if (tokens > 0 && tokens - 1 < max_len_) {
    report_.notes.push_back("SGLang caps requests at " + std::to_string(tokens - 1) + " tokens (max_total_num_tokens - 1), below the context length " +
                            std::to_string(max_len_));
    max_len_ = tokens - 1;
  }
  groups_ = {{KvKind::full, static_cast<i64>(rank.layers.size()), 0, cell, 0, 0, 1}};
}

// ---------------------------------------------------------------- TensorRT-LLM
// bytes per token = sum of (K row + V row) over the rank's layers; tokens = min(kv_bytes // bytes per
// token, max_tokens); blocks = cdiv(tokens, tokens_per_block) (KVCacheManager rounds up to whole blocks).
void Planner::build_trtllm(const ModelSpec& rank, i64 available) {
  const EngineSettings& e = spec_.engine;
  i64 bpt = 0;
  for (const Layer& l : rank.layers)
    if (holds_tokens(l.kv) && l.kv != KvKind::cross) bpt = add(bpt, layer_bytes_per_token(l, spec_.kv));
  if (bpt == 0) throw InputError("engine", "the model keeps no per-token KV cache", "use --engine vllm for pure state-space models");
  const i64 tpb = e.block_size;
  const i64 block_bytes = mul(bpt, tpb, "TRT block bytes");
  i64 tokens = pages_in_bytes(available, bpt);
  if (e.max_tokens) tokens = std::min(tokens, *e.max_tokens);
  const i64 blocks = pages_for_tokens(tokens, tpb);
  report_.page_bytes = bpt;
  report_.block_size = tpb;
  report_.num_gpu_blocks = blocks;
  report_.max_tokens = mul(blocks, tpb);
  report_.kv_pool_bytes = mul(blocks, block_bytes);
  unit_tokens_ = tpb;
  unit_bytes_ = block_bytes;
  pool_units_ = blocks;
  // TensorRT-LLM starts with a pool that cannot hold one max_seq_len request and shortens the limit to
  // what the blocks hold ("Adjusted max_seq_len to N", KV cache manager / executor config): a start with a
  // shorter limit, not a failure
  report_.startup_ok = blocks > 0;
  const i64 held = mul(blocks, tpb);
  if (blocks > 0 && held < max_len_) {
    report_.notes.push_back("Adjusted max_seq_len to " + std::to_string(held) + " (the KV cache holds " + std::to_string(held) + " tokens)");
    max_len_ = held;
  }
  groups_ = {{KvKind::full, static_cast<i64>(rank.layers.size()), 0, bpt, 0, 0, 1}};
}

// ---------------------------------------------------------------- generic paged engine
// Pages of block_size tokens per layer; sliding and chunked layers hold at most their window.
// Pool and requests are counted in bytes.
void Planner::build_generic(const ModelSpec& rank, i64 available) {
  groups_.clear();
  for (const Layer& l : rank.layers) {
    if (l.kv == KvKind::none) continue;
    const i64 bpt = l.kv == KvKind::ssm ? 0 : layer_bytes_per_token(l, spec_.kv);
    const i64 st = layer_state_bytes(l, spec_.kv.state_format);
    auto it = std::find_if(groups_.begin(), groups_.end(), [&](const CacheGroup& g) {
      return g.kind == l.kv && g.window == l.window && g.bytes_per_token == bpt && g.state_bytes == st;
    });
    if (it == groups_.end()) { groups_.push_back({l.kv, 0, l.window, bpt, st, 0, 1}); it = groups_.end() - 1; }
    ++it->layers;
  }
  unit_tokens_ = spec_.engine.block_size;
  unit_bytes_ = 1;
  pool_units_ = available;
  report_.block_size = unit_tokens_;
  report_.kv_pool_bytes = available;
  report_.startup_ok = units_per_request(spec_.engine.max_model_len) <= pool_units_;
}

// ---------------------------------------------------------------- llama.cpp layer placement
// ggml-org/llama.cpp src/llama-model.cpp llama_model::load_tensors ("calculate the split points", get_layer_buft_list).
std::vector<int> llamacpp_layer_devices(i64 n_layer, i64 n_gpu_layers, const std::vector<double>& split, bool output_first) {
  std::vector<int> dev(static_cast<size_t>(n_layer + 1), -1);
  const size_t n = split.size();
  if (n == 0 || n_gpu_layers <= 0) return dev;
  const bool all_zero = std::all_of(split.begin(), split.end(), [](double x) { return x == 0.0; });
  std::vector<float> points(n);
  float sum = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    sum += all_zero ? 1.0f : static_cast<float>(split[i]);
    points[i] = sum;
  }
  for (auto& p : points) p /= sum;
  const i64 start = std::max<i64>((output_first ? n_layer + 1 : n_layer) - n_gpu_layers, 0);
  const i64 offloaded = std::min(n_gpu_layers, n_layer + 1);
  for (i64 il = start; il <= n_layer && il - start < offloaded; ++il) {
    const float at = static_cast<float>(il - start) / static_cast<float>(offloaded);
    const auto d = std::upper_bound(points.begin(), points.end(), at) - points.begin();
    dev[static_cast<size_t>(il)] = static_cast<int>(std::min<std::ptrdiff_t>(d, static_cast<std::ptrdiff_t>(n) - 1));
  }
  return dev;
}

namespace {

struct LlamaLayout {
  i64 n_ctx = 0, n_ctx_seq = 0, k = 0, v = 0, state = 0, gpu_kv = 0, swa_cells = 0, host_expert_bytes = 0, gpu_total = 0;
  i64 draft_ctx = 0, draft_kv = 0;
  i64 host_override_bytes = 0;  // weights --override-tensor moved from the GPUs to host memory
  i64 host_layer_bytes = 0;     // the input layer and every layer not offloaded (-ngl), in host memory
  i64 host_adapter_bytes = 0;   // LoRA tensors of host-resident weights, and the projector with --no-mmproj-offload
  i64 cpu_weight_bytes = 0, cpu_expert_bytes = 0;  // weights the CPU computes with, and of them routed experts (EngineReport)
  std::vector<DeviceBudget> dev;  // one per GPU of the deployment
};

// Where llama.cpp puts a model's layers on the deployment's GPUs. KV and compute follow `layer_gpu` (the GPU of
// each of the n_layer + 1 layers, -1: the CPU); weights follow `weight_share` (row split: every offloaded layer's
// matrices over all the model's GPUs by the tensor split).
struct Placement {
  std::vector<int> layer_gpu;
  std::vector<i64> model_gpus;      // the GPUs this model uses (its --device list; split mode none: the main GPU)
  std::vector<double> row_share;    // row split: the share of every layer's weights per model GPU (empty: layer / none)
};

Placement place_llama(i64 n_layer, i64 ngl, const EngineSettings& e, const std::vector<i64>& devices, bool output_first) {
  Placement p;
  p.model_gpus = devices;
  std::vector<double> split(devices.size(), 0.0);
  for (size_t i = 0; i < split.size() && i < e.tensor_split.size(); ++i) split[i] = e.tensor_split[i];
  if (e.split_mode != LlamaSplitMode::layer && !devices.empty()) {
    // none: llama_model_load keeps only devices[main_gpu]; row (common/arg.cpp --main-gpu: "for intermediate results and
    // KV with split-mode = row"): the layers, their KV and the compute on the main GPU, the weight rows split
    if (e.main_gpu < 0 || e.main_gpu >= static_cast<i64>(devices.size()))
      throw InputError("main_gpu", "GPU " + std::to_string(e.main_gpu) + " is not one of the model's " + std::to_string(devices.size()) + " GPUs",
                       "give --main-gpu 0.." + std::to_string(devices.size() - 1));
    if (e.split_mode == LlamaSplitMode::row) {
      const bool all_zero = std::all_of(split.begin(), split.end(), [](double x) { return x == 0.0; });
      double sum = 0;
      for (double x : split) sum += all_zero ? 1.0 : x;
      for (double x : split) p.row_share.push_back((all_zero ? 1.0 : x) / sum);
    }
    p.model_gpus = {devices[static_cast<size_t>(e.main_gpu)]};
    split = {1.0};
  }
  const std::vector<int> local = llamacpp_layer_devices(n_layer, ngl, split, output_first);
  p.layer_gpu.resize(local.size(), -1);
  for (size_t i = 0; i < local.size(); ++i)
    if (local[i] >= 0) p.layer_gpu[i] = static_cast<int>(p.model_gpus[static_cast<size_t>(local[i])]);
  if (!p.row_share.empty()) p.model_gpus = devices;
  return p;
}

// Bytes of one layer's cache in llama.cpp: ggml_row_size(type, n_embd_k_gqa / n_embd_v_gqa) x cells (MLA: the latent
// as K, and V of kv_lora_rank before #19067), sliding layers at swa_cells, recurrent state in f32 per sequence.
struct LayerCache {
  i64 k = 0, v = 0, state = 0;
};
LayerCache llama_layer_cache(const Layer& l, i64 cells, i64 swa_cells, i64 seqs, ElemFormat kf, ElemFormat vf, bool mla_v) {
  LayerCache c;
  i64 n = 0;
  switch (l.kv) {
    case KvKind::sliding:
    case KvKind::chunked: n = swa_cells; break;
    case KvKind::ssm:
    case KvKind::none:
    case KvKind::cross: n = 0; break;
    default: n = cells;
  }
  i64 krow = 0, vrow = 0;
  if (l.kv == KvKind::mla_latent) {
    krow = row_bytes(kf, add(l.kv_lora_rank, l.qk_rope_head_dim), "K row (kv_lora_rank + qk_rope_head_dim)");
    vrow = mla_v ? row_bytes(vf, l.kv_lora_rank, "V row (kv_lora_rank)") : 0;
  } else if (n > 0) {
    krow = row_bytes(kf, mul(l.kv_heads, l.k_head_dim), "K row (n_embd_k_gqa)");
    vrow = row_bytes(vf, mul(l.kv_heads, l.v_head_dim), "V row (n_embd_v_gqa)");
    if (format_info(kf).block_elems > 1) row_bytes(kf, l.k_head_dim, "K head row (head_dim)");
  }
  c.k = mul(krow, n, "K bytes");
  c.v = mul(vrow, n, "V bytes");
  c.state = mul(layer_state_bytes(l, ElemFormat::f32), seqs, "recurrent state");
  return c;
}

// The weights of llama.cpp layer il (0 .. n_layer - 1 a block, n_layer the output layer; core/weights.hpp
// layer_weight_bytes).
i64 layer_bytes(const LayerWeights& w, i64 il) {
  return il < static_cast<i64>(w.blocks.size()) ? w.blocks[static_cast<size_t>(il)] : w.output;
}

// The compute buffer of a context: n_ubatch x (vocab + 4 x widest MLP) x 4 B (f32 logits and FFN activations).
// Over several GPUs the FFN part is on every GPU that holds layers and the logits on the output layer's GPU
// (the last offloaded layer's when the output layer stays on the CPU); with no layer offloaded all of it counts on
// the first GPU.
void add_compute(std::vector<DeviceBudget>& dev, const Placement& p, i64 ubatch, const ModelSpec& m, i64 copies, i64 DeviceBudget::*term,
                 std::optional<i64> given) {
  const i64 ffn = mul(mul(ubatch, mul(4, effective_intermediate(m))), 4, "compute buffer");
  const i64 logits = mul(mul(ubatch, m.vocab), 4, "compute buffer");
  std::vector<bool> holds(dev.size(), false);
  int logits_gpu = -1;
  for (int g : p.layer_gpu)
    if (g >= 0) {
      holds[static_cast<size_t>(g)] = true;
      logits_gpu = g;  // the output layer's GPU, else the last offloaded layer's
    }
  if (logits_gpu < 0) {
    logits_gpu = static_cast<int>(p.model_gpus.empty() ? 0 : p.model_gpus.front());
    holds[static_cast<size_t>(logits_gpu)] = true;
  }
  for (size_t g = 0; g < dev.size(); ++g) {
    if (!holds[g]) continue;
    const i64 one = given ? *given : add(ffn, static_cast<int>(g) == logits_gpu ? logits : 0, "compute buffer");
    dev[g].*term = add(dev[g].*term, mul(one, copies, "compute buffer"), "compute buffer");
  }
}

}  // namespace

// ---------------------------------------------------------------- llama.cpp
// n_ctx padded to 256 cells (#17046; mid-2025 builds padded to 32 without flash attention); one cache of n_ctx
// cells shared by the --parallel slots (kv_unified) or n_ctx_seq = pad(n_ctx / parallel) cells per slot. Full
// layers hold n_ctx cells; sliding layers pad(min(n_ctx, n_swa x (unified ? parallel : 1) + n_ubatch), 256)
// unless --swa-full. Bytes per layer: ggml_row_size(type_k, n_embd_k_gqa) x cells, likewise V. MLA (latent):
// K rows of kv_lora_rank + qk_rope_head_dim, V rows of kv_lora_rank. Recurrent state in f32 per slot.
// Each layer's cache sits on its layer's GPU (src/llama-kv-cache.cpp: model.dev_layer(il) when offloading).
// Several GPUs: llamacpp_layer_devices; every GPU the model uses holds a CUDA context and a compute buffer.
// A draft model (llama-server --model-draft; tools/server/server.cpp load_model / init in late-2025 builds): a
// context per slot with n_ctx = -cd, else llama_n_ctx_seq of the target, one sequence, cache types -ctkd/-ctvd
// (default f16), layers placed by -ngld over --device-draft (else every GPU) with the target's split settings.
// --fit (on by default from b7376, llama_params_fit): when the fullest GPU would hold more than its memory less
// --fit-target, an unset -c is lowered (not below --fit-ctx), then, if -ngl was not given, layers move to the host.
void Planner::build_llamacpp() {
  // a CPU host: llama.cpp's CPU backend in one process, every layer in the host's RAM, which is the whole budget.
  // -ngl, --n-cpu-moe and -ot =CPU move nothing (there is no second memory), and --fit, which moves layers off GPU
  // devices, has none to move them from; one host only (llama.cpp splits over GPUs, not over hosts)
  if (spec_.gpu.device_class == "cpu") {
    EngineSettings& c = spec_.engine;
    if (c.gpu_count > 1)
      throw InputError("gpu_count", "llama.cpp runs on one CPU host (" + spec_.gpu.id + ") in one process; it splits layers over GPUs, not hosts",
                       "plan one host (--cpu-sockets N for a host of several sockets)");
    const bool moved = (c.gpu_layers_given && c.n_gpu_layers >= 0) || c.n_cpu_moe > 0 || !spec_.llama_tensor_moves.empty();
    if (moved)
      report_.notes.push_back(spec_.gpu.id + " is a CPU host: every layer is in its RAM, so -ngl, --n-cpu-moe and --override-tensor move nothing");
    c.n_gpu_layers = -1;
    c.gpu_layers_given = false;
    c.n_cpu_moe = 0;
    c.fit = false;
    spec_.llama_tensor_moves.clear();
    if (spec_.llama_draft) spec_.llama_draft->n_gpu_layers = -1;
  }
  const EngineSettings& e = spec_.engine;
  const ModelSpec& m = spec_.model;
  const BudgetOverrides& ov = spec_.overrides;
  rank_model_ = m;
  const bool unified = e.kv_unified.value_or(true);
  // llama.cpp places decoder blocks; a block whose mixers run side by side (Falcon-H1: attention and Mamba2, both
  // cached by llama_memory_hybrid) is two entries of m.layers, the second joins_previous: block_of maps them
  const i64 n_entries = static_cast<i64>(m.layers.size());
  const i64 n_layer = decoder_layers(m.layers);
  const std::vector<i64> block_of = decoder_block_of(m.layers);
  // llama_init_from_model (from #19067): "model does not support different K and V cache types" for MLA
  if (!e.rules->mla_v_cache && spec_.kv.k_format != spec_.kv.v_format &&
      std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kv == KvKind::mla_latent; }))
    throw InputError("cache_type_v", std::string("llama.cpp caches MLA as K only, so K and V cache types must match (K ") +
                                         std::string(format_info(spec_.kv.k_format).name) + ", V " + std::string(format_info(spec_.kv.v_format).name) + ")",
                     std::string("give --cache-type-v ") + std::string(format_info(spec_.kv.k_format).name));
  const i64 gpus = e.gpu_count;
  if (gpus < 1) throw InputError("gpu_count", "must be >= 1");
  std::vector<i64> devices = e.devices;
  if (devices.empty())
    for (i64 g = 0; g < gpus; ++g) devices.push_back(g);
  for (i64 g : devices)
    if (g < 0 || g >= gpus) throw InputError("device", "GPU " + std::to_string(g) + " is not one of the deployment's " + std::to_string(gpus), "give --gpu-count");
  const bool output_first = e.rules->output_layer_first;
  const ParamCount pc = count_params(m);
  const WeightBytes wb = weight_bytes(m, pc);
  const bool cpu_host = spec_.gpu.device_class == "cpu";  // a CPU-only build: no GPU context to create
  const i64 context = ov.cuda_context.value_or(cpu_host ? 0 : kCudaContext);
  const i64 extra = ov.extra.value_or(0);
  const LlamaDraft* draft = spec_.llama_draft ? &*spec_.llama_draft : nullptr;
  // the draft's layers by decoder block too (a Falcon-H1 draft: two entries a block)
  const i64 d_layer = draft ? decoder_layers(draft->model.layers) : 0;
  const std::vector<i64> d_block_of = draft ? decoder_block_of(draft->model.layers) : std::vector<i64>{};
  const i64 d_ngl = draft ? (draft->n_gpu_layers < 0 ? d_layer + 1 : std::min(draft->n_gpu_layers, d_layer + 1)) : 0;
  std::vector<i64> d_devices = draft && !draft->devices.empty() ? draft->devices : std::vector<i64>{};
  if (draft && d_devices.empty())
    for (i64 g = 0; g < gpus; ++g) d_devices.push_back(g);
  for (i64 g : d_devices)
    if (g < 0 || g >= gpus) throw InputError("device_draft", "GPU " + std::to_string(g) + " is not one of the deployment's " + std::to_string(gpus), "give --gpu-count");
  const WeightBytes dwb = draft ? weight_bytes(draft->model, count_params(draft->model)) : WeightBytes{};
  const LayerWeights lw = layer_weight_bytes(m);  // by decoder block
  const LayerWeights dlw = draft ? layer_weight_bytes(draft->model) : LayerWeights{};
  // the draft's layers are placed once (its -ngld is not changed by --fit)
  const Placement dp = draft ? place_llama(d_layer, d_ngl, e, d_devices, output_first) : Placement{};

  auto layout = [&](i64 ctx, i64 ngl, i64 cpu_moe) {
    LlamaLayout L;
    L.n_ctx = round_up(ctx, 256, "n_ctx");
    L.n_ctx_seq = L.n_ctx;
    if (!unified && e.parallel > 1) {
      L.n_ctx_seq = round_up(L.n_ctx / e.parallel, 256, "n_ctx_seq");
      L.n_ctx = mul(L.n_ctx_seq, e.parallel, "n_ctx");
    }
    L.dev.resize(static_cast<size_t>(gpus));
    for (i64 g = 0; g < gpus; ++g) L.dev[static_cast<size_t>(g)].index = g;
    const Placement p = place_llama(n_layer, ngl, e, devices, output_first);
    // llama_kv_cache_iswa: each stream (one, or one per slot without a unified cache) holds
    // pad(min(size_base, n_swa x (unified ? n_seq_max : 1) + n_ubatch), 256) cells, size_base = n_ctx_seq
    const i64 streams = unified ? 1 : e.parallel;
    for (i64 i = 0; i < n_entries; ++i) {
      const Layer& l = m.layers[static_cast<size_t>(i)];
      i64 swa_total = 0;
      if (l.kv == KvKind::sliding || l.kv == KvKind::chunked) {
        const i64 base = L.n_ctx / streams;
        const i64 per_stream = e.swa_full ? base : round_up(std::min(base, add(mul(l.window, unified ? e.parallel : 1), e.ubatch_size)), 256);
        L.swa_cells = per_stream;
        swa_total = mul(per_stream, streams, "SWA cells");
      }
      const LayerCache c = llama_layer_cache(l, L.n_ctx, swa_total, e.parallel, spec_.kv.k_format, spec_.kv.v_format, e.rules->mla_v_cache);
      L.k = add(L.k, c.k);
      L.v = add(L.v, c.v);
      L.state = add(L.state, c.state);
      // --no-kv-offload: every layer's cache stays in host memory, GPU layers included
      const int g = p.layer_gpu[static_cast<size_t>(block_of[static_cast<size_t>(i)])];
      if (g >= 0 && e.kv_offload) L.dev[static_cast<size_t>(g)].kv = add(L.dev[static_cast<size_t>(g)].kv, add(add(c.k, c.v), c.state));
    }
    // weights: each offloaded layer's own bytes (layer_bytes), less the MoE experts --n-cpu-moe keeps in host
    // memory (the first N layers' expert tensors); the input layer and the layers not offloaded stay in host memory
    L.host_layer_bytes = lw.input;
    for (i64 il = 0; il <= n_layer; ++il) {
      const int g = p.layer_gpu[static_cast<size_t>(il)];
      const i64 w = layer_bytes(lw, il);
      if (g < 0) {  // a tied head left on the CPU maps the embedding's own bytes: no second copy there
        L.host_layer_bytes = add(L.host_layer_bytes, il < n_layer ? w : w - lw.output_copy, "host weights");
        // the CPU computes this layer: it reads all of it (the head too, tied or not)
        L.cpu_weight_bytes = add(L.cpu_weight_bytes, w, "CPU weights");
        if (il < n_layer) L.cpu_expert_bytes = add(L.cpu_expert_bytes, lw.experts[static_cast<size_t>(il)], "CPU experts");
        continue;
      }
      const i64 moved = il < n_layer && il < cpu_moe ? lw.experts[static_cast<size_t>(il)] : 0;
      L.host_expert_bytes = add(L.host_expert_bytes, moved, "host weights");
      L.cpu_weight_bytes = add(L.cpu_weight_bytes, moved, "CPU weights");
      L.cpu_expert_bytes = add(L.cpu_expert_bytes, moved, "CPU experts");
      const i64 on_gpu = w - moved;
      if (p.row_share.empty()) {
        L.dev[static_cast<size_t>(g)].weights = add(L.dev[static_cast<size_t>(g)].weights, on_gpu);
      } else {
        for (size_t j = 0; j < p.model_gpus.size(); ++j) {
          auto& d = L.dev[static_cast<size_t>(p.model_gpus[j])];
          d.weights = add(d.weights, static_cast<i64>(static_cast<long double>(on_gpu) * p.row_share[j]));
        }
      }
      if (il < n_layer) ++L.dev[static_cast<size_t>(g)].layers;
      else L.dev[static_cast<size_t>(g)].output_layer = true;
    }
    // --override-tensor: a tensor of a layer on a GPU leaves that GPU for host memory (=CPU) or another GPU; a
    // tensor of a CPU layer moved to a GPU arrives there. Experts --n-cpu-moe already keeps on the host are skipped.
    L.host_override_bytes = 0;
    for (const LlamaTensorMove& t : spec_.llama_tensor_moves) {
      if (t.layer < 0 || t.layer > n_layer) continue;
      if (t.expert && t.layer < n_layer && t.layer < cpu_moe && p.layer_gpu[static_cast<size_t>(t.layer)] >= 0) continue;
      const int from = p.layer_gpu[static_cast<size_t>(t.layer)];
      if (from == t.gpu) continue;
      if (from >= 0) {
        auto& d = L.dev[static_cast<size_t>(from)];
        d.weights = std::max<i64>(sub(d.weights, t.bytes, "override-tensor"), 0);
      }
      if (t.gpu >= 0 && t.gpu < gpus) {
        auto& d = L.dev[static_cast<size_t>(t.gpu)];
        d.weights = add(d.weights, t.bytes, "override-tensor");
      } else if (from >= 0) {
        L.host_override_bytes = add(L.host_override_bytes, t.bytes, "override-tensor");
      }
      if (from < 0 && t.gpu >= 0 && t.gpu < gpus) L.host_layer_bytes = std::max<i64>(sub(L.host_layer_bytes, t.bytes, "override-tensor"), 0);
      // the CPU computes with what reaches host memory and no longer with what leaves it
      const i64 to_cpu = t.gpu >= 0 && t.gpu < gpus ? (from < 0 ? -t.bytes : 0) : (from >= 0 ? t.bytes : 0);
      L.cpu_weight_bytes = std::max<i64>(add(L.cpu_weight_bytes, to_cpu, "override-tensor"), 0);
      if (t.expert) L.cpu_expert_bytes = std::max<i64>(add(L.cpu_expert_bytes, to_cpu, "override-tensor"), 0);
    }
    for (auto& d : L.dev)
      if (ov.weights && (d.weights > 0 || gpus == 1)) d.weights = *ov.weights;
    // --lora: each adapter tensor sits in the buffer of the model tensor it adapts (src/llama-adapter.cpp
    // llama_adapter_lora_init_impl: the model tensor's buffer type): its layer's GPU, where -ot moved that tensor,
    // or host memory
    L.host_adapter_bytes = 0;
    for (const LlamaTensorMove& t : spec_.llama_lora_tensors) {
      int at = t.layer >= 0 && t.layer <= n_layer ? p.layer_gpu[static_cast<size_t>(t.layer)] : -1;
      for (const LlamaTensorMove& o : spec_.llama_tensor_moves)
        if (o.name == t.name) at = static_cast<int>(o.gpu);
      if (at >= 0 && at < gpus) L.dev[static_cast<size_t>(at)].lora = add(L.dev[static_cast<size_t>(at)].lora, t.bytes, "LoRA bytes");
      else L.host_adapter_bytes = add(L.host_adapter_bytes, t.bytes, "LoRA bytes");
    }
    // --mmproj: clip_ctx takes the first GPU backend (ggml_backend_init_by_type), not --main-gpu; host with
    // --no-mmproj-offload
    if (spec_.llama_mmproj_bytes > 0) {
      if (spec_.llama_mmproj_offload) L.dev[0].mmproj = spec_.llama_mmproj_bytes;
      else L.host_adapter_bytes = add(L.host_adapter_bytes, spec_.llama_mmproj_bytes, "mmproj bytes");
    }
    add_compute(L.dev, p, e.ubatch_size, m, 1, &DeviceBudget::compute, ov.activation);
    if (draft) {
      // one draft context per slot: n_ctx = -cd, else the target's n_ctx_seq, padded to 256; one sequence
      L.draft_ctx = round_up(draft->ctx_size > 0 ? draft->ctx_size : (unified ? L.n_ctx : L.n_ctx_seq), 256, "draft n_ctx");
      const i64 d_ubatch = std::min(e.ubatch_size, L.draft_ctx);  // n_batch = the draft's n_ctx
      for (size_t i = 0; i < draft->model.layers.size(); ++i) {
        const Layer& l = draft->model.layers[i];
        const i64 swa = (l.kv == KvKind::sliding || l.kv == KvKind::chunked)
                            ? (e.swa_full ? L.draft_ctx : round_up(std::min(L.draft_ctx, add(l.window, d_ubatch)), 256))
                            : 0;
        const LayerCache c = llama_layer_cache(l, L.draft_ctx, swa, 1, draft->k_format, draft->v_format, e.rules->mla_v_cache);
        const i64 bytes = mul(add(add(c.k, c.v), c.state), e.parallel, "draft KV");
        L.draft_kv = add(L.draft_kv, bytes);
        const int g = dp.layer_gpu[static_cast<size_t>(d_block_of[i])];
        if (g >= 0 && e.kv_offload) L.dev[static_cast<size_t>(g)].draft_kv = add(L.dev[static_cast<size_t>(g)].draft_kv, bytes);
      }
      L.host_layer_bytes = add(L.host_layer_bytes, dlw.input, "host weights");
      for (i64 il = 0; il <= d_layer; ++il) {
        const int g = dp.layer_gpu[static_cast<size_t>(il)];
        const i64 w = layer_bytes(dlw, il);
        if (g < 0) {
          L.host_layer_bytes = add(L.host_layer_bytes, il < d_layer ? w : w - dlw.output_copy, "host weights");
          continue;
        }
        if (dp.row_share.empty()) {
          L.dev[static_cast<size_t>(g)].draft_weights = add(L.dev[static_cast<size_t>(g)].draft_weights, w);
        } else {
          for (size_t j = 0; j < dp.model_gpus.size(); ++j) {
            auto& d = L.dev[static_cast<size_t>(dp.model_gpus[j])];
            d.draft_weights = add(d.draft_weights, static_cast<i64>(static_cast<long double>(w) * dp.row_share[j]));
          }
        }
        if (il < d_layer) ++L.dev[static_cast<size_t>(g)].draft_layers;
      }
      add_compute(L.dev, dp, d_ubatch, draft->model, e.parallel, &DeviceBudget::draft_compute, std::nullopt);
    }
    // every GPU a model uses holds a CUDA context (and --overhead-bytes); with none, the first GPU still does
    std::vector<bool> used(static_cast<size_t>(gpus), false);
    for (i64 g : p.model_gpus) used[static_cast<size_t>(g)] = true;
    for (i64 g : dp.model_gpus) used[static_cast<size_t>(g)] = true;
    if (std::none_of(used.begin(), used.end(), [](bool b) { return b; })) used[0] = true;
    L.gpu_total = 0;
    for (auto& d : L.dev) {
      const bool u = used[static_cast<size_t>(d.index)] || d.compute > 0 || d.mmproj > 0;
      d.context = u ? context : 0;
      d.extra = u ? extra : 0;
      d.total = add(add(add(add(d.weights, d.kv), add(d.compute, d.context)), add(add(d.draft_weights, d.draft_kv), d.draft_compute)),
                    add(add(d.lora, d.mmproj), d.extra), "GPU bytes");
      L.gpu_kv = add(L.gpu_kv, d.kv);
      L.gpu_total = std::max(L.gpu_total, d.total);
    }
    return L;
  };

  i64 ngl = e.n_gpu_layers < 0 ? n_layer + 1 : std::min(e.n_gpu_layers, n_layer + 1);
  i64 ctx = e.ctx_size;
  i64 cpu_moe = e.n_cpu_moe;
  LlamaLayout L = layout(ctx, ngl, cpu_moe);
  if (e.fit.value_or(false)) {
    // llama_params_fit (src/llama.cpp llama_params_fit_impl, #16653): every GPU must keep --fit-target free
    const i64 limit = total_ - e.fit_target_bytes;
    auto fits = [&](const LlamaLayout& x) { return x.gpu_total <= limit; };
    // step 2: an unset -c is lowered, not below --fit-ctx
    if (!fits(L) && !e.ctx_given && ctx > e.fit_ctx) {
      const i64 floor_ctx = e.fit_ctx;
      const i64 best = largest_passing(floor_ctx, ctx, [&](i64 c) { return fits(layout(c, ngl, cpu_moe)); });
      const i64 chosen = best < floor_ctx ? floor_ctx : best;
      report_.notes.push_back("--fit lowered n_ctx from " + std::to_string(ctx) + " to " + std::to_string(round_up(chosen, 256)) +
                              (best < floor_ctx ? " (--fit-ctx, the floor)" : "") + " to leave --fit-target " + human_bytes(e.fit_target_bytes) + " free");
      ctx = chosen;
      L = layout(ctx, ngl, cpu_moe);
    }
    // steps 3-4 move weights, unless the user placed them: -ngl given, a --tensor-split given on several GPUs, row
    // split, or tensor overrides (-ot, --n-cpu-moe, --cpu-moe are overrides) -- llama.cpp aborts the fit there
    const bool user_split = gpus > 1 && std::any_of(e.tensor_split.begin(), e.tensor_split.end(), [](double x) { return x != 0.0; });
    const bool placed = e.gpu_layers_given || user_split || e.split_mode == LlamaSplitMode::row || !spec_.llama_tensor_moves.empty() || e.n_cpu_moe > 0;
    if (!fits(L) && !placed) {
      const bool moe = std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.experts > 0; });
      if (moe && fits(layout(ctx, ngl, n_layer))) {
        // step 3: a MoE model whose dense weights fit keeps every layer and moves the experts of the first layers
        // to host memory, as --n-cpu-moe does: the fewest such layers that fit
        const i64 kept = largest_passing(0, n_layer, [&](i64 j) { return fits(layout(ctx, ngl, n_layer - j)); });
        cpu_moe = n_layer - kept;
        report_.notes.push_back("--fit keeps the MoE experts of the first " + std::to_string(cpu_moe) + " of " + std::to_string(n_layer) +
                                " layers in host memory (as --n-cpu-moe " + std::to_string(cpu_moe) + ") to leave --fit-target " +
                                human_bytes(e.fit_target_bytes) + " free");
      } else {
        // step 4: whole layers move to host memory, the most that fit stay
        const i64 keep = std::max<i64>(largest_passing(0, ngl, [&](i64 n) { return fits(layout(ctx, n, cpu_moe)); }), 0);
        report_.notes.push_back("--fit keeps " + std::to_string(keep) + " of " + std::to_string(n_layer + 1) +
                                " layers on the GPU and moves the rest to host memory");
        ngl = keep;
      }
      L = layout(ctx, ngl, cpu_moe);
    }
  }
  report_.n_cpu_moe = cpu_moe;
  // the fullest GPU decides: its terms are the budget, its KV the pool
  size_t crit = 0;
  for (size_t g = 1; g < L.dev.size(); ++g)
    if (L.dev[g].total > L.dev[crit].total) crit = g;
  const DeviceBudget& C = L.dev[crit];
  devices_ = L.dev;
  report_.kind = e.kind;
  report_.rules_version = e.rules->label;
  report_.n_ctx = L.n_ctx;
  report_.n_ctx_seq = unified ? L.n_ctx : L.n_ctx_seq;
  report_.kv_cells = L.n_ctx;
  report_.swa_cells = L.swa_cells;
  report_.kv_streams = unified ? 1 : e.parallel;
  report_.k_bytes = L.k;
  report_.v_bytes = L.v;
  report_.state_bytes = L.state;
  report_.kv_bytes = add(L.k, L.v);
  report_.gpu_kv_bytes = L.gpu_kv;
  report_.kv_pool_bytes = L.gpu_kv;
  report_.available_kv_bytes = L.gpu_kv;
  report_.gpu_layers = ngl;
  // CPU-resident weights (the input layer, layers -ngl leaves on the CPU, --n-cpu-moe experts, -ot =CPU tensors), each
  // layer at its own bytes. llama_model_loader::load_all_data (src/llama-model-loader.cpp @ 00347649): with mmap (the
  // default) a CPU tensor is allocated over the file mapping (ggml_backend_tensor_alloc(buf_mmap, cur, data)):
  // file-backed page cache the kernel may reclaim and read back; with --no-mmap it is read into its CPU buffer
  // (file->read_raw(cur->data, ...)): anonymous host RAM; --mlock locks either (lmlock->grow_to over the mapped tensors;
  // the CPU buffers with llama_mlock in llama-model.cpp load_tensors).
  const i64 cpu_weights = add(add(ov.weights ? 0 : L.host_layer_bytes, L.host_expert_bytes, "host weights"), L.host_override_bytes, "host weights");
  report_.host_weight_bytes = add(cpu_weights, L.host_adapter_bytes, "host weights");
  report_.host_input_bytes = add(lw.input, dlw.input, "host weights");
  report_.cpu_weight_bytes = L.cpu_weight_bytes;
  report_.cpu_expert_bytes = std::min(L.cpu_expert_bytes, L.cpu_weight_bytes);
  if (cpu_weights > 0) {
    const std::string memory = e.mlock ? "locked" : e.mmap ? "mapped" : "anonymous";
    report_.tier_terms.push_back(
        {"host", "cpu_weights", cpu_weights, memory,
         "the input layer " + human_bytes(lw.input) + ", layers -ngl leaves on the CPU, --n-cpu-moe experts, -ot =CPU tensors, each at its own bytes; " +
             (e.mmap ? "mmap (default): the model file's mapped pages, page cache the kernel may reclaim"
                     : "--no-mmap: read into a CPU buffer, anonymous host RAM") +
             (e.mlock ? "; --mlock: locked in RAM, not reclaimable or swappable" : "") +
             " (llama.cpp src/llama-model-loader.cpp load_all_data)"});
  }
  if (L.host_adapter_bytes > 0)
    report_.tier_terms.push_back({"host", "adapters", L.host_adapter_bytes, "anonymous",
                                  "--lora tensors of CPU tensors and a --no-mmproj-offload projector: read into CPU buffers "
                                  "(src/llama-adapter.cpp, tools/mtmd/clip.cpp)"});
  report_.host_kv_bytes = sub(add(add(L.k, L.v), L.state), L.gpu_kv);  // layers on the CPU, or all with -nkvo
  report_.host_kv_tokens = report_.host_kv_bytes > 0 && L.gpu_kv == 0 ? L.n_ctx : 0;  // whole tokens only when no layer's KV is on the GPU
  if (report_.host_kv_bytes > 0)
    report_.tier_terms.push_back({"host", "kv_cache", report_.host_kv_bytes, "anonymous",
                                  "the KV cache of layers on the CPU (every layer's with --no-kv-offload): CPU buffers (src/llama-kv-cache.cpp)"});
  if (L.host_expert_bytes > 0)
    report_.notes.push_back("--n-cpu-moe keeps " + human_bytes(L.host_expert_bytes) + " of MoE expert weights in host memory");
  if (L.host_override_bytes > 0)
    report_.notes.push_back("--override-tensor moves " + human_bytes(L.host_override_bytes) + " of weights from the GPU to host memory");
  report_.total_layers = n_layer + 1;
  if (gpus > 1)
    report_.notes.push_back("llama.cpp on " + std::to_string(gpus) + " GPUs (split mode " +
                            (e.split_mode == LlamaSplitMode::layer ? "layer" : e.split_mode == LlamaSplitMode::row ? "row" : "none") +
                            "): the budget is GPU " + std::to_string(C.index) + "'s, the fullest");
  if (draft)
    report_.notes.push_back("draft model " + draft->model.id + ": " + std::to_string(e.parallel) + " draft context(s) of " + std::to_string(L.draft_ctx) +
                            " cells (" + human_bytes(L.draft_kv) + " of KV in all)");

  const std::string on = gpus > 1 ? "GPU " + std::to_string(C.index) + ": " : "";
  const std::string weights_how = lw.basis + "; " + wb.basis + "; the input layer, " + human_bytes(lw.input) + ", in host memory";
  const std::string layers_basis = gpus > 1 ? on + std::to_string(C.layers) + (C.output_layer ? " + output" : "") + " of " + std::to_string(n_layer) +
                                                  " layers (" + std::to_string(ngl) + " of " + std::to_string(n_layer + 1) + " offloaded; " + weights_how + ")"
                                            : std::to_string(ngl) + " of " + std::to_string(n_layer + 1) + " layers offloaded (" + weights_how + ")";
  budget_.push_back({"gpu_total", total_, ov.gpu_memory ? "given" : spec_.gpu.id + " " + spec_.gpu.memory_bytes_kind + " total", true, ov.gpu_memory.has_value()});
  budget_.push_back({"weights", C.weights, ov.weights ? "given" : layers_basis, true, ov.weights.has_value()});
  budget_.push_back({"kv_cache", C.kv, on + "K + V (+ recurrent state) of the offloaded layers", true, false});
  budget_.push_back({"compute_buffer", C.compute, ov.activation ? "given" : on + "n_ubatch x (vocab + 4 x widest MLP) x 4 B (estimate)", true, ov.activation.has_value()});
  if (draft) {
    budget_.push_back({"draft_weights", C.draft_weights,
                       on + std::to_string(C.draft_layers) + " of " + std::to_string(d_layer) + " draft layers (" + draft->model.id + ", " + dwb.basis + ")", true, false});
    budget_.push_back({"draft_kv", C.draft_kv,
                       on + std::to_string(e.parallel) + " slot(s) x " + std::to_string(L.draft_ctx) + " cells x draft K " +
                           std::string(format_info(draft->k_format).name) + " + V " + std::string(format_info(draft->v_format).name),
                       true, false});
    budget_.push_back({"draft_compute_buffer", C.draft_compute, on + std::to_string(e.parallel) + " draft context(s) x n_ubatch x (vocab + 4 x widest MLP) x 4 B (estimate)", true, false});
  }
  if (!spec_.llama_lora_tensors.empty())
    budget_.push_back({"lora_adapters", C.lora, on + "--lora adapter tensors with the tensors they adapt (GGUF tensor bytes)", true, false});
  if (spec_.llama_mmproj_bytes > 0)
    budget_.push_back({"mmproj", C.mmproj, spec_.llama_mmproj_offload ? on + "--mmproj tensor bytes (GGUF header), on the first GPU" : "--no-mmproj-offload: in host memory", true, false});
  budget_.push_back({"cuda_context", C.context,
                     ov.cuda_context ? "given" : spec_.gpu.device_class == "cpu" ? "none: a CPU host runs no GPU context" : "CUDA context (estimate: 290-670 MB)", true,
                     ov.cuda_context.has_value()});
  budget_.push_back({"extra", C.extra, "--overhead-bytes", true, ov.extra.has_value()});
  fixed_ = 0;
  for (const auto& t : budget_)
    if (t.name != "gpu_total" && t.name != "kv_cache") fixed_ = add(fixed_, t.bytes);
  crit_kv_ = C.kv;
  if (add(fixed_, C.kv) > total_) {
    startup_limit_ = "gpu_memory";
    // the nearest settings that start: the longest -c with these layers, the most -ngl layers with this -c
    const i64 c = largest_passing(1, L.n_ctx, [&](i64 x) { return layout(x, ngl, cpu_moe).gpu_total <= total_; });
    if (c >= 1) report_.estimated_max_model_len = c / 256 * 256 > 0 ? c / 256 * 256 : c;
    report_.suggested_gpu_layers = largest_passing(0, ngl, [&](i64 n) { return layout(ctx, n, cpu_moe).gpu_total <= total_; });
  }
  unit_tokens_ = 1;
  unit_bytes_ = 0;  // the buffer is allocated whole: cells used cost nothing extra
  pool_units_ = L.n_ctx;
  max_len_ = report_.n_ctx_seq;
  max_seqs_ = e.parallel;
  slots_ = !unified;
  groups_ = {{KvKind::full, n_layer, 0, 0, 0, 0, 1}};
  report_.startup_ok = startup_limit_.empty();
}

LlamaFit llamacpp_fit(const PlanSpec& s) {
  if (s.engine.kind != EngineKind::llamacpp) throw InputError("engine", "the layer fit is llama.cpp's", "plan llama.cpp (--engine llama.cpp)");
  PlanSpec f = s;
  f.engine.fit = true;
  f.engine.n_gpu_layers = -1;
  f.engine.gpu_layers_given = false;
  const Planner p(f);
  LlamaFit r;
  r.n_gpu_layers = p.engine().gpu_layers;
  r.total_layers = p.engine().total_layers;
  r.n_cpu_moe = p.engine().n_cpu_moe;
  r.n_ctx = p.engine().n_ctx;
  r.margin_bytes = f.engine.fit_target_bytes;
  for (const auto& d : p.devices()) r.fullest_gpu_bytes = std::max(r.fullest_gpu_bytes, d.total);
  r.fits = r.fullest_gpu_bytes <= sub(p.budget_bytes("gpu_total"), r.margin_bytes, "fit margin");
  return r;
}

i64 deployment_gpus(const PlanSpec& s) { return s.engine.kind == EngineKind::llamacpp ? s.engine.gpu_count : s.parallel.gpus(); }

i64 Planner::budget_bytes(const std::string& name) const {
  for (const auto& t : budget_)
    if (t.name == name) return t.bytes;
  return 0;
}

i64 Planner::shared_units(i64 shared_prefix) const {
  // without the prefix cache (--no-enable-prefix-caching, SGLang --disable-radix-cache, TensorRT-LLM block reuse off,
  // vLLM V0's default) no block is shared: every request holds its own copy of the prefix
  if (shared_prefix <= 0 || spec_.engine.prefix_caching == false) return 0;
  const EngineKind k = spec_.engine.kind;
  if (k == EngineKind::llamacpp) return 0;
  if (k == EngineKind::generic) {
    i64 b = 0;
    for (const auto& g : groups_)
      if (g.kind == KvKind::full || g.kind == KvKind::mla_latent || g.kind == KvKind::mla_expanded)
        b = add(b, mul(mul(shared_prefix / unit_tokens_ * unit_tokens_, g.bytes_per_token), g.layers));
    return b;
  }
  // whole pages of the prefix are held once (vLLM prefix caching shares full blocks only), each group at its own block
  // size (vLLM: raised where its page was smaller; the other engines' groups have none and take the unit)
  i64 units = 0;
  for (const auto& g : groups_)
    if (g.kind == KvKind::full || g.kind == KvKind::mla_latent || g.kind == KvKind::mla_expanded)
      units = add(units, mul(shared_prefix / group_block_tokens(g), g.groups), "shared prefix blocks");
  return units;
}

i64 Planner::units_per_request(i64 tokens, i64 shared_prefix) const {
  const EngineKind k = spec_.engine.kind;
  i64 units = 0;
  switch (k) {
    case EngineKind::vllm: {
      // speculative decoding: a decode step schedules 1 + k draft tokens, and drafters with their own KV (EAGLE, MTP;
      // from 0.11-0.12 draft models too) ask for k lookahead slots more (v1/core/sched/scheduler.py Scheduler.__init__:
      // num_lookahead_tokens = num_spec_tokens when use_eagle() or uses_draft_model(); kv_cache_manager.allocate_slots
      // needs min(computed + new + lookahead, max_model_len) slots): a request of T tokens holds up to T + 2k (n-gram T + k)
      // without it, a request of T tokens holds T - 1: its last token is sampled, never computed (as simulate's admit_check)
      const SpeculativeSettings& sp = spec_.engine.spec;
      i64 held = std::max<i64>(tokens - 1, 1);
      if (sp.on() && sp.num_tokens > 0) {
        const bool lookahead = sp.method != SpecMethod::ngram;
        held = std::max(tokens, std::min(add(tokens, mul(sp.num_tokens, lookahead ? 2 : 1)), spec_.engine.max_model_len));
      }
      units = vllm_blocks_for(held);
      break;
    }
    case EngineKind::sglang:
      units = pages_for_tokens(tokens, unit_tokens_);
      if (swa_window_ > 0 && swa_units_ <= 0) {
        units = std::max(units, add(pool_units_, 1));  // an SWA pool of no page holds no request
      } else if (swa_window_ > 0) {
        // the hybrid SWA pool: the request also holds min(tokens, window) tokens (and the page in progress) of the
        // sliding layers' pool, swa_units_ pages beside pool_units_: in full-pool pages, the tighter of the two
        const i64 swa_pages = pages_for_tokens(std::min(tokens, swa_window_), unit_tokens_) + (tokens > swa_window_ ? 1 : 0);
        const double scaled = std::ceil(static_cast<double>(swa_pages) * static_cast<double>(pool_units_) / static_cast<double>(swa_units_));
        units = std::max(units, static_cast<i64>(scaled));
      }
      break;
    case EngineKind::trtllm: units = pages_for_tokens(add(tokens, report_.spec_extra_tokens, "tokens per request"), unit_tokens_); break;
    case EngineKind::llamacpp: return slots_ ? report_.n_ctx_seq : tokens;
    case EngineKind::generic:
      for (const auto& g : groups_) {
        i64 held = tokens;
        if (g.kind == KvKind::sliding || g.kind == KvKind::chunked) held = std::min(tokens, g.window);
        if (g.kind == KvKind::cross) held = spec_.kv.encoder_tokens;
        const i64 bytes = g.kind == KvKind::ssm ? g.state_bytes
                                                : pages_bytes(pages_for_tokens(held, unit_tokens_), mul(unit_tokens_, g.bytes_per_token));
        units = add(units, mul(bytes, g.layers), "bytes per request");
      }
      break;
  }
  return std::max<i64>(units - shared_units(shared_prefix), 0);
}

const char* seqs_limit_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang: return "max_running_requests";
    case EngineKind::trtllm: return "max_batch_size";
    case EngineKind::llamacpp: return "parallel";
    default: return "max_num_seqs";
  }
}

const char* length_limit_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang: return "context_length";
    case EngineKind::trtllm: return "max_seq_len";
    case EngineKind::llamacpp: return "ctx_size";
    default: return "max_model_len";
  }
}

const char* seqs_limit_flag(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang: return "--max-running-requests";
    case EngineKind::trtllm: return "--max_batch_size";
    case EngineKind::llamacpp: return "-np";
    default: return "--max-num-seqs";
  }
}

Cell Planner::cell(i64 tokens, i64 concurrency, i64 shared_prefix) const {
  Cell c;
  c.tokens = tokens;
  c.concurrency = concurrency;
  // requests spread over the data-parallel replicas and, with attention data parallel, over its groups' pools
  const i64 per_replica = ceil_div(concurrency, mul(spec_.parallel.dp, spec_.engine.attention_dp, "request pools"));
  const i64 pool = request_units();
  c.units_available = pool;
  const i64 per_req = units_per_request(tokens, shared_prefix);
  c.units_needed = add(shared_units(std::min(shared_prefix, tokens)), mul(per_replica, per_req, "pool units needed"), "pool units needed");
  const bool llama = spec_.engine.kind == EngineKind::llamacpp;
  c.kv_bytes = llama ? crit_kv_ : mul(c.units_needed, unit_bytes_, "KV bytes");
  c.total_bytes = add(fixed_, c.kv_bytes, "GPU bytes");
  // the serving engines: the pool left after this cell's units; when the weights (and the rest) already pass the
  // memory, the shortfall counts that deficit too, not the KV alone
  c.headroom_bytes = llama ? total_ - c.total_bytes : add(mul(pool - c.units_needed, unit_bytes_, "headroom"), kv_deficit_, "headroom");
  if (!startup_limit_.empty()) c.limiting = startup_limit_;
  else if (tokens > max_len_) c.limiting = length_limit_name(spec_.engine.kind);
  else if (per_replica > max_seqs_ || c.units_needed > pool) {
    // both short: the tighter names the limit (the KV pool when it holds fewer requests than max_num_seqs admits)
    const bool kv_short = c.units_needed > pool;
    const i64 kv_fit = per_req > 0 ? (pool - shared_units(std::min(shared_prefix, tokens))) / per_req : max_seqs_;
    c.limiting = kv_short && (per_replica <= max_seqs_ || kv_fit < max_seqs_) ? "kv_cache" : seqs_limit_name(spec_.engine.kind);
  }
  c.fits = c.limiting.empty();
  if (c.fits) c.limiting = "fits";
  return c;
}

i64 Planner::max_concurrency(i64 tokens, i64 shared_prefix) const {
  if (!startup_limit_.empty() || tokens > max_len_) return 0;
  const i64 per = units_per_request(tokens, shared_prefix);
  const i64 avail = request_units() - shared_units(std::min(shared_prefix, tokens));
  i64 n = per > 0 ? std::max<i64>(avail, 0) / per : max_seqs_;
  n = std::min(n, max_seqs_);
  return mul(mul(n, spec_.parallel.dp), spec_.engine.attention_dp, "max concurrency");
}

i64 Planner::max_context(i64 concurrency, i64 shared_prefix) const {
  return largest_passing(1, max_len_, [&](i64 len) { return cell(len, concurrency, shared_prefix).fits; });
}

}  // namespace kvplan
