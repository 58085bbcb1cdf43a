// Capacity planning: per-GPU budget and each engine's KV sizing rule. Every formula is stated
// where it is coded; docs/engine-rules.md gives the engines' sources.
#include "kvplan/core/plan.hpp"

#include "kvplan/core/search.hpp"

#include <algorithm>
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
  return add(layer_k_bytes_per_token(l, o.k_format), layer_v_bytes_per_token(l, o.v_format), "KV bytes per token per layer");
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

i64 lora_buffer_bytes(const ModelSpec& rank, i64 slots, i64 lora_rank) {
  // vLLM lora/layers (create_lora_weights): column-parallel projections keep A [rank, full input] and B
  // [output / tp, rank]; row-parallel ones A [rank, input / tp] and B [full output, rank]; one stacked A/B
  // per slice of a merged projection (q, k, v; gate, up). `rank` is one TP rank's model, so its widths
  // are already per rank.
  const i64 h = rank.hidden;
  i64 per_slot_rank = 0;  // elements per adapter slot per unit of LoRA rank
  for (const Layer& l : rank.layers) {
    if (l.kv == KvKind::full || l.kv == KvKind::sliding || l.kv == KvKind::chunked) {
      const i64 q_out = mul(l.q_heads, l.k_head_dim), kv_out = mul(l.kv_heads, l.k_head_dim) + mul(l.kv_heads, l.v_head_dim);
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
// compute_mm_encoder_budget). The encoder runs on a dummy batch of N items of the largest size, T embeddings
// each, and the outputs are put in the encoder cache while the text model's dummy batch runs, so the peak
// vLLM measures grows by N x T x hidden x dtype bytes (the encoder cache's budget, held outside the KV pool):
//   budget = max(max_num_batched_tokens, T)   (encoder_cache_size and the encoder compute budget default
//                                              to max_num_batched_tokens)
//   N = max(1, min(budget // T, max_num_seqs x max(1, min(limit, max_model_len // T))))   (chunked prefill)
// limit = --limit-mm-per-prompt's image count (999 when not given). A limit of 0 leaves no modality: vLLM
// initialises no encoder cache and skips the encoder profiling (text-only). 0 bytes when T is not modelled.
static i64 vllm_mm_encoder_bytes(const ModelSpec& m, i64 text_hidden, const EngineSettings& e, std::string& basis) {
  const i64 t = m.vision.tokens_per_item;
  if (!m.vision.present || t <= 0 || e.mm_image_limit == 0) return 0;
  const i64 limit = e.mm_image_limit < 0 ? 999 : e.mm_image_limit;
  const i64 budget = std::max(e.max_num_batched_tokens, t);
  const i64 per_prompt = std::max<i64>(1, std::min(limit, e.max_model_len / t));
  const i64 items = std::max<i64>(1, std::min(budget / t, mul(e.max_num_seqs, per_prompt, "multimodal items")));
  basis = std::to_string(items) + " images x " + std::to_string(t) + " embeddings x hidden " +
          std::to_string(text_hidden) + " x " + std::string(format_info(m.dtype).name) +
          " (vLLM profiles the encoder cache budget " + std::to_string(budget) + "; --limit-mm-per-prompt image " +
          (e.mm_image_limit < 0 ? "999 default" : std::to_string(limit)) + ")";
  return mul(mul(items, t, "encoder cache"), mul(text_hidden, format_info(m.dtype).block_bytes), "encoder cache bytes");
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
      throw InputError("tensor_parallel_size", "kvplan models llama.cpp on one GPU per replica",
                       "use --tensor-parallel-size 1 and --pipeline-parallel-size 1 with --engine llama.cpp");
    build_llamacpp();
    return;
  }
  check_parallel(m, spec_.parallel);
  max_len_ = e.max_model_len;

  bool first = true;
  for (i64 stage = 0; stage < spec_.parallel.pp; ++stage) {
    Planner trial = *this;  // state for this stage; the stage with the fewest pool units wins
    trial.budget_.clear();
    trial.groups_.clear();
    trial.report_ = EngineReport{};
    trial.startup_limit_.clear();
    trial.stage_ = stage;
    const ModelSpec rank = rank_shard(m, spec_.parallel, stage);
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
    const i64 offloaded = std::min(e.cpu_offload_bytes, rank_weights);
    trial.report_.host_weight_bytes = ov.weights ? 0 : offloaded;
    const i64 weights = term("weights", ov.weights, rank_weights - offloaded,
                             "this rank's parameters (" + weight_bytes(rank, pc).basis + ")" +
                                 (offloaded > 0 ? " - " + human_bytes(offloaded) + " kept in host memory (--cpu-offload-gb)" : ""),
                             true);
    const i64 act_tokens = e.max_num_batched_tokens;
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
        available = usable - weights - activation - mm - non_torch - graphs_in - extra - lora;
        avail_basis = "floor(total x " + std::to_string(e.memory_fraction).substr(0, 4) +
                      ") - weights - activation_peak" + (mm > 0 ? " - mm_encoder_cache" : "") + " - non_torch" +
                      (graphs_inside ? " - cuda_graphs" : "") + " - extra";
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
        const i64 free_after = total_ - context - weights - activation - non_torch - graphs_in - extra - lora;
        available = floor_fraction(std::max<i64>(free_after, 0), e.memory_fraction);
        avail_basis = std::string("(total - cuda_context - weights - activation_peak - non_torch") + (graphs_inside ? " - cuda_graphs" : "") +
                      " - extra) x free_gpu_memory_fraction";
        break;
      }
      default:
        available = floor_fraction(total_, e.memory_fraction) - weights - activation - non_torch - context - graphs - extra - lora;
        avail_basis = "total x fraction - every other term";
        break;
    }
    if (e.kv_cache_memory_bytes) {
      available = *e.kv_cache_memory_bytes;
      avail_basis = "--kv-cache-memory-bytes";
    }
    if (available <= 0) trial.startup_limit_ = "weights";
    trial.budget_.push_back({"kv_cache_available", std::max<i64>(available, 0), avail_basis, true, e.kv_cache_memory_bytes.has_value()});
    trial.report_.available_kv_bytes = std::max<i64>(available, 0);
    trial.report_.kind = e.kind;
    trial.report_.rules_version = e.rules->label;
    const i64 avail = std::max<i64>(available, 0);
    switch (e.kind) {
      case EngineKind::vllm: trial.build_vllm(rank, avail); break;
      case EngineKind::sglang: trial.build_sglang(rank, avail); break;
      case EngineKind::trtllm: trial.build_trtllm(rank, avail); break;
      default: trial.build_generic(rank, avail); break;
    }
    // every non-KV byte on this GPU, inside or outside the engine's usable share
    trial.fixed_ = 0;
    for (const auto& t : trial.budget_)
      if (t.name != "gpu_total" && t.name != "kv_cache_available") trial.fixed_ = add(trial.fixed_, t.bytes);
    if (trial.fixed_ > total_ && trial.startup_limit_.empty()) trial.startup_limit_ = "gpu_memory";
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
  if (e.kind == EngineKind::vllm && e.kv_offload_bytes > 0 && report_.kv_pool_bytes > 0) {
    report_.host_kv_bytes = e.kv_offload_bytes / spec_.parallel.tp;
    report_.host_kv_tokens = static_cast<i64>(static_cast<long double>(report_.host_kv_bytes) * report_.kv_cache_tokens / report_.kv_pool_bytes);
  }
  if (e.kind == EngineKind::sglang && e.hierarchical_cache && report_.cell_size > 0) {
    report_.host_kv_tokens = e.hicache_bytes > 0 ? e.hicache_bytes / report_.cell_size
                                                 : static_cast<i64>(static_cast<double>(report_.max_total_num_tokens) * e.hicache_ratio);
    report_.host_kv_bytes = mul(report_.host_kv_tokens, report_.cell_size, "host KV bytes");
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
  i64 block = e.block_size;
  // Hybrid attention + Mamba: attention block size grows (in multiples of 16) until its page holds a
  // Mamba state; Mamba pages are padded to the attention page (HybridAttentionMambaModelConfig).
  i64 attn_pt = 0, state = 0;
  for (const Layer& l : rank.layers) {
    if (holds_tokens(l.kv) && l.kv != KvKind::cross) attn_pt = std::max(attn_pt, layer_bytes_per_token(l, spec_.kv));
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
  struct Type { KvKind kind; i64 window; i64 bpt; i64 page; i64 n = 0; };
  std::vector<Type> types;
  i64 max_page = 0;
  for (const Layer& l : rank.layers) {
    if (l.kv == KvKind::none) continue;
    Type t{l.kv, l.window, 0, 0};
    if (l.kv == KvKind::ssm) {
      t.page = layer_state_bytes(l, spec_.kv.state_format);
    } else {
      t.bpt = layer_bytes_per_token(l, spec_.kv);
      t.page = mul(block, t.bpt, "vLLM page bytes");
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
      return x.kind == t.kind && x.window == t.window && x.bpt == t.bpt && x.page == t.page;
    });
    if (it == types.end()) { types.push_back(t); it = types.end() - 1; }
    ++it->n;
    max_page = std::max(max_page, t.page);
  }
  if (types.empty()) throw InputError("model", "has no layer that keeps a cache", "check the config");
  // Uniform page size: Mamba pages are padded to the attention page; smaller attention pages are
  // not unified here (vLLM raises their block size) - the page is taken as the largest.
  for (auto& t : types) {
    if (t.page < max_page && t.kind == KvKind::ssm)
      report_.notes.push_back("Mamba state page " + std::to_string(t.page) + " B padded to the attention page " + std::to_string(max_page) + " B");
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
    groups_.push_back({t.kind, t.n, t.window, t.bpt, t.kind == KvKind::ssm ? t.page : 0, t.page, ceil_div(t.n, group_size)});
  unit_bytes_ = mul(max_page, group_size, "vLLM block bytes");
  unit_tokens_ = block;
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
  report_.kv_cache_tokens = e.rules->kv_tokens_from_concurrency
                                ? static_cast<i64>(report_.max_concurrency * static_cast<double>(e.max_model_len))
                                : mul(pool_units_ / num_groups, block);
  report_.startup_ok = per_req <= pool_units_;
  // vLLM refuses to start when one max_model_len request does not fit the pool (check_enough_kv_cache_memory:
  // "To serve at least one request with the model's max seq len ..."): nothing fits a deployment that does not start
  if (!report_.startup_ok && startup_limit_.empty()) startup_limit_ = "does_not_start";
  if (!report_.startup_ok)  // vLLM estimate_max_model_len: the longest whose blocks fit the pool
    report_.estimated_max_model_len = std::max<i64>(largest_passing(1, e.max_model_len, [&](i64 len) { return vllm_blocks_for(len) <= pool_units_; }), 0);
}

// Blocks one request of `tokens` tokens needs (vLLM max_memory_usage_bytes per group, in blocks):
// full/MLA cdiv(tokens, block); sliding cdiv(min(window - 1 + max_num_batched_tokens, tokens), block) + 1;
// chunked cdiv(min(chunk + max_num_batched_tokens, tokens), block); Mamba 1; cross cdiv(encoder, block).
i64 Planner::vllm_blocks_for(i64 tokens) const {
  const i64 block = unit_tokens_;
  const i64 mnbt = spec_.engine.max_num_batched_tokens;
  i64 blocks = 0;
  for (const auto& g : groups_) {
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
// cell_size = sum over the rank's layers of (K row + V row) bytes per token (MLA: the latent);
// max_total_num_tokens = available // cell_size, aligned down to page_size; --max-total-tokens caps it.
void Planner::build_sglang(const ModelSpec& rank, i64 available) {
  const EngineSettings& e = spec_.engine;
  i64 cell = 0, state = 0;
  for (const Layer& l : rank.layers) {
    if (holds_tokens(l.kv) && l.kv != KvKind::cross) cell = add(cell, layer_bytes_per_token(l, spec_.kv));
    state = add(state, layer_state_bytes(l, spec_.kv.state_format));
  }
  if (cell == 0) throw InputError("engine", "the model keeps no per-token KV cache", "use --engine vllm for pure state-space models");
  const i64 derived = spec_.model.max_context_sglang > 0 ? spec_.model.max_context_sglang : spec_.model.max_context;
  if (derived > 0 && e.max_model_len > derived)
    report_.notes.push_back("context_length " + std::to_string(e.max_model_len) + " is above the " + std::to_string(derived) +
                            " SGLang derives from the config: it warns and uses it (SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN defaults on)");
  for (const Layer& l : rank.layers)
    if (l.kv == KvKind::sliding || l.kv == KvKind::chunked) {
      report_.notes.push_back("SGLang sizes sliding-window layers like full layers here (its hybrid SWA pool ratio is not modelled)");
      break;
    }
  if (state > 0) {
    // Mamba/linear-attention state pool: one state per running request, taken before the KV pool
    const i64 pool = mul(state, e.max_num_seqs == 4096 ? 0 : e.max_num_seqs);
    if (pool > 0) available -= pool;
    report_.state_bytes = state;
    report_.notes.push_back("recurrent state " + human_bytes(state) + " per request is held in a separate pool");
  }
  const i64 page = e.block_size;
  i64 tokens = available > 0 ? available / cell : 0;
  tokens = tokens / page * page;
  if (e.max_total_tokens) tokens = std::min(tokens, *e.max_total_tokens / page * page);
  report_.cell_size = cell;
  report_.page_bytes = cell;
  report_.block_size = page;
  report_.max_total_num_tokens = tokens;
  report_.kv_pool_bytes = mul(tokens, cell);
  unit_tokens_ = page;
  unit_bytes_ = mul(cell, page);
  pool_units_ = tokens / page;
  // max_running_requests (tp_worker.py / scheduler _resolve_max_num_reqs): the req_to_token pool holds
  // clamp(tokens / context_len x 512, 2048, 4096) requests; unset, tokens // 2 caps it, else the value given
  const i64 req_pool = std::clamp<i64>(max_len_ > 0 ? static_cast<i64>(static_cast<double>(tokens) / static_cast<double>(max_len_) * 512.0) : 4096,
                                       2048, 4096);
  max_seqs_ = std::min(e.max_num_seqs > 0 ? e.max_num_seqs : tokens / 2, req_pool);
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

// ---------------------------------------------------------------- llama.cpp
// n_ctx padded to 256 cells (#17046; mid-2025 builds padded to 32 without flash attention); one cache of n_ctx
// cells shared by the --parallel slots (kv_unified) or n_ctx_seq = pad(n_ctx / parallel) cells per slot. Full
// layers hold n_ctx cells; sliding layers pad(min(n_ctx, n_swa x (unified ? parallel : 1) + n_ubatch), 256)
// unless --swa-full. Bytes per layer: ggml_row_size(type_k, n_embd_k_gqa) x cells, likewise V. MLA (latent):
// K rows of kv_lora_rank + qk_rope_head_dim, V rows of kv_lora_rank. Recurrent state in f32 per slot.
// --fit (on by default from b7376, llama_params_fit): when the GPU would hold more than its memory less
// --fit-target, an unset -c is lowered (not below --fit-ctx), then, if -ngl was not given, layers move to the host.
namespace {
struct LlamaLayout {
  i64 n_ctx = 0, n_ctx_seq = 0, k = 0, v = 0, state = 0, gpu_kv = 0, swa_cells = 0, gpu_weights = 0, gpu_total = 0, host_expert_bytes = 0;
};
}  // namespace

void Planner::build_llamacpp() {
  const EngineSettings& e = spec_.engine;
  const ModelSpec& m = spec_.model;
  const BudgetOverrides& ov = spec_.overrides;
  rank_model_ = m;
  const bool unified = e.kv_unified.value_or(true);
  const i64 n_layer = static_cast<i64>(m.layers.size());
  // llama_init_from_model (from #19067): "model does not support different K and V cache types" for MLA
  if (!e.rules->mla_v_cache && spec_.kv.k_format != spec_.kv.v_format &&
      std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kv == KvKind::mla_latent; }))
    throw InputError("cache_type_v", std::string("llama.cpp caches MLA as K only, so K and V cache types must match (K ") +
                                         std::string(format_info(spec_.kv.k_format).name) + ", V " + std::string(format_info(spec_.kv.v_format).name) + ")",
                     std::string("give --cache-type-v ") + std::string(format_info(spec_.kv.k_format).name));
  const ParamCount pc = count_params(m);
  const WeightBytes wb = weight_bytes(m, pc);
  // compute buffer: n_ubatch x (vocab + 4 x widest MLP) x 4 B (f32 logits and FFN activations)
  const i64 compute = ov.activation.value_or(mul(e.ubatch_size, mul(add(m.vocab, mul(4, effective_intermediate(m))), 4), "compute buffer"));
  const i64 context = ov.cuda_context.value_or(kCudaContext);
  const i64 extra = ov.extra.value_or(0);

  auto layout = [&](i64 ctx, i64 ngl) {
    LlamaLayout L;
    L.n_ctx = round_up(ctx, 256, "n_ctx");
    L.n_ctx_seq = L.n_ctx;
    if (!unified && e.parallel > 1) {
      L.n_ctx_seq = round_up(L.n_ctx / e.parallel, 256, "n_ctx_seq");
      L.n_ctx = mul(L.n_ctx_seq, e.parallel, "n_ctx");
    }
    const i64 first_gpu_layer = n_layer - std::min(ngl, n_layer);  // llama.cpp offloads the last ngl layers
    for (i64 i = 0; i < n_layer; ++i) {
      const Layer& l = m.layers[static_cast<size_t>(i)];
      i64 cells = 0, krow = 0, vrow = 0;
      switch (l.kv) {
        case KvKind::sliding:
        case KvKind::chunked: {
          // llama_kv_cache_iswa: each stream (one, or one per slot without a unified cache) holds
          // pad(min(size_base, n_swa x (unified ? n_seq_max : 1) + n_ubatch), 256) cells, size_base = n_ctx_seq
          const i64 streams = unified ? 1 : e.parallel;
          const i64 base = L.n_ctx / streams;
          const i64 per_stream = e.swa_full ? base : round_up(std::min(base, add(mul(l.window, unified ? e.parallel : 1), e.ubatch_size)), 256);
          L.swa_cells = per_stream;
          cells = mul(per_stream, streams, "SWA cells");
          break;
        }
        case KvKind::ssm:
        case KvKind::none:
        case KvKind::cross: cells = 0; break;
        default: cells = L.n_ctx;
      }
      if (l.kv == KvKind::mla_latent) {
        krow = row_bytes(spec_.kv.k_format, add(l.kv_lora_rank, l.qk_rope_head_dim), "K row (kv_lora_rank + qk_rope_head_dim)");
        // from #19067 the latent is K only (has_v = !is_mla): V reads a view of it
        vrow = e.rules->mla_v_cache ? row_bytes(spec_.kv.v_format, l.kv_lora_rank, "V row (kv_lora_rank)") : 0;
      } else if (cells > 0) {
        krow = row_bytes(spec_.kv.k_format, mul(l.kv_heads, l.k_head_dim), "K row (n_embd_k_gqa)");
        vrow = row_bytes(spec_.kv.v_format, mul(l.kv_heads, l.v_head_dim), "V row (n_embd_v_gqa)");
        if (format_info(spec_.kv.k_format).block_elems > 1) row_bytes(spec_.kv.k_format, l.k_head_dim, "K head row (head_dim)");
      }
      const i64 lk = mul(krow, cells), lv = mul(vrow, cells);
      const i64 ls = mul(layer_state_bytes(l, ElemFormat::f32), e.parallel, "recurrent state");
      L.k = add(L.k, lk);
      L.v = add(L.v, lv);
      L.state = add(L.state, ls);
      // --no-kv-offload: every layer's cache stays in host memory, GPU layers included
      if (i >= first_gpu_layer && e.kv_offload) L.gpu_kv = add(L.gpu_kv, add(add(lk, lv), ls));
    }
    // weights on the GPU: the offloaded share of the layers (the output layer counts as one more), less the
    // MoE experts --n-cpu-moe keeps in host memory (the first N layers', at the model's average bytes per parameter)
    i64 host_experts = 0;
    for (i64 i = std::max<i64>(first_gpu_layer, 0); i < std::min(e.n_cpu_moe, n_layer); ++i)
      host_experts = add(host_experts, expert_params(m, m.layers[static_cast<size_t>(i)]), "expert params");
    L.host_expert_bytes = static_cast<i64>(static_cast<long double>(host_experts) * wb.total / std::max<i64>(pc.total, 1));
    L.gpu_weights = ov.weights.value_or(static_cast<i64>(static_cast<long double>(wb.total) * ngl / (n_layer + 1)) - L.host_expert_bytes);
    L.gpu_total = add(add(add(L.gpu_weights, L.gpu_kv), add(compute, context)), extra, "GPU bytes");
    return L;
  };

  i64 ngl = e.n_gpu_layers < 0 ? n_layer + 1 : std::min(e.n_gpu_layers, n_layer + 1);
  i64 ctx = e.ctx_size;
  LlamaLayout L = layout(ctx, ngl);
  if (e.fit.value_or(false)) {
    const i64 limit = total_ - e.fit_target_bytes;
    if (L.gpu_total > limit && !e.ctx_given && ctx > e.fit_ctx) {
      const i64 floor_ctx = e.fit_ctx;
      const i64 best = largest_passing(floor_ctx, ctx, [&](i64 c) { return layout(c, ngl).gpu_total <= limit; });
      const i64 chosen = best < floor_ctx ? floor_ctx : best;
      report_.notes.push_back("--fit lowered n_ctx from " + std::to_string(ctx) + " to " + std::to_string(round_up(chosen, 256)) +
                              (best < floor_ctx ? " (--fit-ctx, the floor)" : "") + " to leave --fit-target " + human_bytes(e.fit_target_bytes) + " free");
      ctx = chosen;
      L = layout(ctx, ngl);
    }
    if (L.gpu_total > limit && !e.gpu_layers_given) {
      const i64 best = largest_passing(0, ngl, [&](i64 n) { return layout(ctx, n).gpu_total <= limit; });
      const i64 keep = std::max<i64>(best, 0);
      report_.notes.push_back("--fit keeps " + std::to_string(keep) + " of " + std::to_string(n_layer + 1) +
                              " layers on the GPU and moves the rest to host memory");
      ngl = keep;
      L = layout(ctx, ngl);
    }
  }
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
  report_.host_weight_bytes = L.host_expert_bytes;
  report_.host_kv_bytes = sub(add(add(L.k, L.v), L.state), L.gpu_kv);  // layers on the CPU, or all with -nkvo
  report_.host_kv_tokens = report_.host_kv_bytes > 0 && L.gpu_kv == 0 ? L.n_ctx : 0;  // whole tokens only when no layer's KV is on the GPU
  if (L.host_expert_bytes > 0)
    report_.notes.push_back("--n-cpu-moe keeps " + human_bytes(L.host_expert_bytes) + " of MoE expert weights in host memory");
  report_.total_layers = n_layer + 1;

  budget_.push_back({"gpu_total", total_, ov.gpu_memory ? "given" : spec_.gpu.id + " " + spec_.gpu.memory_bytes_kind + " total", true, ov.gpu_memory.has_value()});
  budget_.push_back({"weights", L.gpu_weights, ov.weights ? "given" : std::to_string(ngl) + " of " + std::to_string(n_layer + 1) + " layers offloaded (" + wb.basis + ")", true, ov.weights.has_value()});
  budget_.push_back({"kv_cache", L.gpu_kv, "K + V (+ recurrent state) of the offloaded layers", true, false});
  budget_.push_back({"compute_buffer", compute, ov.activation ? "given" : "n_ubatch x (vocab + 4 x widest MLP) x 4 B (estimate)", true, ov.activation.has_value()});
  budget_.push_back({"cuda_context", context, ov.cuda_context ? "given" : "CUDA context (estimate: 290-670 MB)", true, ov.cuda_context.has_value()});
  budget_.push_back({"extra", extra, "--overhead-bytes", true, ov.extra.has_value()});
  fixed_ = 0;
  for (const auto& t : budget_)
    if (t.name != "gpu_total" && t.name != "kv_cache") fixed_ = add(fixed_, t.bytes);
  if (add(fixed_, L.gpu_kv) > total_) {
    startup_limit_ = "gpu_memory";
    // the nearest settings that start: the longest -c with these layers, the most -ngl layers with this -c
    const i64 c = largest_passing(1, L.n_ctx, [&](i64 x) { return layout(x, ngl).gpu_total <= total_; });
    if (c >= 1) report_.estimated_max_model_len = c / 256 * 256 > 0 ? c / 256 * 256 : c;
    report_.suggested_gpu_layers = largest_passing(0, ngl, [&](i64 n) { return layout(ctx, n).gpu_total <= total_; });
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

i64 Planner::budget_bytes(const std::string& name) const {
  for (const auto& t : budget_)
    if (t.name == name) return t.bytes;
  return 0;
}

i64 Planner::shared_units(i64 shared_prefix) const {
  if (shared_prefix <= 0) return 0;
  const EngineKind k = spec_.engine.kind;
  if (k == EngineKind::llamacpp) return 0;
  if (k == EngineKind::generic) {
    i64 b = 0;
    for (const auto& g : groups_)
      if (g.kind == KvKind::full || g.kind == KvKind::mla_latent || g.kind == KvKind::mla_expanded)
        b = add(b, mul(mul(shared_prefix / unit_tokens_ * unit_tokens_, g.bytes_per_token), g.layers));
    return b;
  }
  // whole pages of the prefix are held once (vLLM prefix caching shares full blocks only)
  i64 groups = 0;
  for (const auto& g : groups_)
    if (g.kind == KvKind::full || g.kind == KvKind::mla_latent || g.kind == KvKind::mla_expanded) groups += g.groups;
  return mul(shared_prefix / unit_tokens_, groups);
}

i64 Planner::units_per_request(i64 tokens, i64 shared_prefix) const {
  const EngineKind k = spec_.engine.kind;
  i64 units = 0;
  switch (k) {
    case EngineKind::vllm: units = vllm_blocks_for(tokens); break;
    case EngineKind::sglang:
    case EngineKind::trtllm: units = pages_for_tokens(tokens, unit_tokens_); break;
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

Cell Planner::cell(i64 tokens, i64 concurrency, i64 shared_prefix) const {
  Cell c;
  c.tokens = tokens;
  c.concurrency = concurrency;
  const i64 per_replica = ceil_div(concurrency, spec_.parallel.dp);
  c.units_available = pool_units_;
  const i64 per_req = units_per_request(tokens, shared_prefix);
  c.units_needed = add(shared_units(std::min(shared_prefix, tokens)), mul(per_replica, per_req, "pool units needed"), "pool units needed");
  const bool llama = spec_.engine.kind == EngineKind::llamacpp;
  c.kv_bytes = llama ? report_.gpu_kv_bytes : mul(c.units_needed, unit_bytes_, "KV bytes");
  c.total_bytes = add(fixed_, c.kv_bytes, "GPU bytes");
  c.headroom_bytes = llama ? total_ - c.total_bytes : mul(pool_units_ - c.units_needed, unit_bytes_, "headroom");
  if (!startup_limit_.empty()) c.limiting = startup_limit_;
  else if (tokens > max_len_) c.limiting = llama ? "ctx_size" : "max_model_len";
  else if (per_replica > max_seqs_) c.limiting = llama ? "parallel" : "max_num_seqs";
  else if (c.units_needed > pool_units_) c.limiting = "kv_cache";
  c.fits = c.limiting.empty();
  if (c.fits) c.limiting = "fits";
  return c;
}

i64 Planner::max_concurrency(i64 tokens, i64 shared_prefix) const {
  if (!startup_limit_.empty() || tokens > max_len_) return 0;
  const i64 per = units_per_request(tokens, shared_prefix);
  const i64 avail = pool_units_ - shared_units(std::min(shared_prefix, tokens));
  i64 n = per > 0 ? std::max<i64>(avail, 0) / per : max_seqs_;
  n = std::min(n, max_seqs_);
  return mul(n, spec_.parallel.dp);
}

i64 Planner::max_context(i64 concurrency, i64 shared_prefix) const {
  return largest_passing(1, max_len_, [&](i64 len) { return cell(len, concurrency, shared_prefix).fits; });
}

}  // namespace kvplan
