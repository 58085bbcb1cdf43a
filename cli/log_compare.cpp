// Startup log vs plan, term by term (see log_compare.hpp). Every kvplan value below is one of the
// planner's formulas applied to printed inputs; the engine rule each row replays is named in its basis.
#include "log_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "kvplan/core/gguf_recipe.hpp"
#include "kvplan/core/kv.hpp"
#include "kvplan/core/transform.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/engine_flags.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;


std::string show_bytes(double v) {
  const double a = std::abs(v);
  if (a >= kGiB) return fmt(v / kGiB, 3) + " GiB";
  if (a >= 1024.0 * 1024.0) return fmt(v / (1024.0 * 1024.0), 2) + " MiB";
  return grouped(static_cast<long long>(std::llround(v))) + " B";
}

std::string show(double v, const std::string& unit) {
  if (unit == "bytes") return show_bytes(v);
  if (unit == "ratio") return fmt(v, 4);
  return grouped(static_cast<long long>(std::llround(v)));
}

struct Ctx {
  const io::EngineLog& log;
  const Deployment* d;
  LogComparison& out;
  const io::LogFigure* f(const std::string& key) const { return log.find(key); }
  // the last printed value: TensorRT-LLM 1.x allocates a small temporary KV cache before the real one
  const io::LogFigure* last(const std::string& key) const {
    const io::LogFigure* x = nullptr;
    for (const auto& g : log.figures)
      if (g.key == key) x = &g;
    return x;
  }
  double res(const io::LogFigure* x) const { return x ? x->resolution : 0; }
  // the engine's args line: the last value given for `key` (as printed: "None" for unset); nullopt when not printed
  std::optional<std::string> arg(const std::string& key) const {
    std::optional<std::string> v;
    for (const auto& [k, val] : log.args)
      if (k == key) v = val;
    return v;
  }

  LogRow& row(const std::string& term, const std::string& unit, const std::string& kind, const io::LogFigure* printed, const std::string& basis) {
    LogRow r;
    r.term = term;
    r.unit = unit;
    r.kind = kind;
    r.basis = basis;
    if (printed) {
      r.printed = printed->value;
      r.printed_text = printed->text;
      r.line = printed->line;
      r.tolerance = printed->resolution;
    }
    out.rows.push_back(r);
    return out.rows.back();
  }
  LogRow& rule(const std::string& term, const std::string& unit, const io::LogFigure* printed, double lo, double hi, const std::string& basis) {
    LogRow& r = row(term, unit, "rule", printed, basis);
    r.lo = std::min(lo, hi);
    r.hi = std::max(lo, hi);
    return r;
  }
  LogRow& estimate(const std::string& term, const std::string& unit, const io::LogFigure* printed, double v, const std::string& basis,
                   const std::string& note) {
    LogRow& r = row(term, unit, "estimate", printed, basis);
    r.lo = r.hi = v;
    r.note = note;
    return r;
  }
};

// A plan of the deployment with the spec changed by `edit` (replays start from printed figures).
Planner replay(const Deployment& d, const std::function<void(PlanSpec&)>& edit) {
  PlanSpec s = d.spec;
  edit(s);
  return Planner(s);
}

// ---------------------------------------------------------------- vLLM
void vllm_rows(Ctx& c) {
  const auto *total = c.f("gpu_total_bytes"), *util = c.f("gpu_memory_utilization"), *usable = c.f("usable_bytes"),
             *weights = c.f("weights_bytes"), *act = c.f("activation_bytes"), *nt = c.f("non_torch_bytes"), *peak = c.f("peak_torch_bytes"),
             *kv = c.f("kv_available_bytes"), *blocks = c.f("gpu_blocks"), *tokens = c.f("kv_tokens"), *conc = c.f("max_concurrency"),
             *conc_len = c.f("max_concurrency_tokens"), *graphs = c.f("cuda_graph_bytes"), *est_len = c.f("estimated_max_model_len"),
             *needed = c.f("kv_needed_bytes"), *max_len = c.f("max_model_len"), *held = c.f("max_tokens_in_kv");
  // the instance's share: total x gpu_memory_utilization (gpu_worker / worker determine_available_memory)
  double share = 0, share_res = 0;
  if (total && util) {
    share = total->value * util->value;
    share_res = total->resolution * util->value;
    if (usable) c.rule("usable memory (total x utilization)", "bytes", usable, share - share_res, share + share_res, "total_gpu_memory x gpu_memory_utilization");
  } else if (usable) {
    share = usable->value;
    share_res = usable->resolution;
  }
  // available KV = share - (weights + activation peak + non-torch); V0's peak_torch_memory includes the weights
  if (share > 0 && kv && nt && ((weights && act) || peak)) {
    const double used = peak ? peak->value : weights->value + act->value;
    const double r = share_res + nt->resolution + (peak ? peak->resolution : weights->resolution + act->resolution);
    const double v = share - used - nt->value;
    c.rule("available KV cache memory (from the printed terms)", "bytes", kv, v - r, v + r,
           peak ? "total x utilization - peak_torch_memory - non_torch_memory" : "total x utilization - weights - activation peak - non-torch");
  }
  // block size and the request length from the args or the concurrency line
  i64 block = 16;
  if (const auto v = c.arg("block_size")) block = std::max<i64>(1, std::atoll(v->c_str()));
  const double len = conc_len ? conc_len->value : max_len ? max_len->value : 0;

  if (!c.d) {
    // the log's own arithmetic, assuming one KV cache group (uniform attention)
    if (blocks && tokens)
      c.rule("GPU KV cache size", "tokens", tokens, blocks->value * static_cast<double>(block), blocks->value * static_cast<double>(block),
             "# GPU blocks x block_size " + std::to_string(block) + " (one KV cache group)");
    if (conc && len > 0 && (blocks || tokens)) {
      const double b = blocks ? blocks->value : std::floor(tokens->value / static_cast<double>(block));
      const double per = std::ceil(len / static_cast<double>(block));
      c.rule("maximum concurrency", "ratio", conc, b / per, b / per,
             "blocks / cdiv(" + grouped(static_cast<long long>(len)) + ", " + std::to_string(block) + ") (one KV cache group)")
          .tolerance = 0.005;
    }
    if (held && blocks)
      c.rule("tokens the KV cache holds", "tokens", held, blocks->value * static_cast<double>(block), blocks->value * static_cast<double>(block),
             "# GPU blocks x block_size");
    return;
  }
  const Deployment& d = *c.d;
  const Planner p(d.spec);
  if (weights)
    c.estimate("weights", "bytes", weights, static_cast<double>(p.budget_bytes("weights")), "parameters x bytes (" + d.spec.model.id + ")",
               "measured after load; kvplan counts parameters x bytes");
  if (act) c.estimate("activation peak", "bytes", act, static_cast<double>(p.budget_bytes("activation_peak")), "kvplan estimate", "profiled by the engine");
  if (nt) c.estimate("non-torch memory", "bytes", nt, static_cast<double>(p.budget_bytes("non_torch")), "kvplan estimate", "measured by the engine");
  if (graphs) c.estimate("CUDA graphs", "bytes", graphs, static_cast<double>(p.budget_bytes("cuda_graphs")), "kvplan estimate", "captured by the engine");
  if (!act && !peak && weights && kv && !c.log.args.empty()) {
    // V1 at INFO prints neither the activation peak nor non-torch: their sum is total x utilization - weights - KV
    const double tot = total ? total->value : c.out.gpu_total, u = util ? util->value : c.out.utilization;
    const double sum = tot * u - weights->value - kv->value - (nt ? nt->value : 0) - (p.spec().engine.rules->cuda_graphs_in_budget && graphs ? graphs->value : 0);
    LogRow& r = c.estimate("activation peak + non-torch (total x utilization - weights - KV)", "bytes", nullptr,
                           static_cast<double>(p.budget_bytes("activation_peak") + (nt ? 0 : p.budget_bytes("non_torch"))),
                           "kvplan estimates", "INFO logs print only their sum; total is the planned GPU's");
    r.printed = sum;
    r.printed_text = fmt(sum / kGiB, 2) + " GiB (derived)";
    r.line = kv->line;
    if (sum < 0)  // weights and KV alone exceed the share: the log did not run on this GPU total or utilization
      c.out.log.warnings.push_back("activation peak + non-torch derived as " + fmt(sum / kGiB, 2) + " GiB: the printed weights and KV exceed " +
                                   fmt(tot / kGiB, 2) + " GiB x " + fmt(u, 2) + " (the planned " + d.spec.gpu.id +
                                   "), so the log ran on another GPU or utilization; give --gpu (or --set gpu_memory_bytes) and --set gpu_memory_utilization as it ran");
  }
  if (kv)
    c.estimate("available KV cache memory (kvplan's plan)", "bytes", kv, static_cast<double>(p.engine().available_kv_bytes),
               "the plan's budget (" + std::string(p.engine().rules_version) + ")", "follows the estimates above");
  // replays from the printed KV memory: blocks, tokens, concurrency, start
  auto with_kv = [&](double bytes) {
    return replay(d, [&](PlanSpec& s) {
      s.engine.kv_cache_memory_bytes = static_cast<i64>(std::max(bytes, 0.0));
      if (len > 0) s.engine.max_model_len = static_cast<i64>(len);
    });
  };
  auto with_blocks = [&](double n) {
    return replay(d, [&](PlanSpec& s) {
      s.engine.kv_cache_memory_bytes = 0;
      s.engine.num_gpu_blocks_override = static_cast<i64>(n);
      if (len > 0) s.engine.max_model_len = static_cast<i64>(len);
    });
  };
  if (kv) {
    const Planner lo = with_kv(kv->value - kv->resolution), hi = with_kv(kv->value + kv->resolution);
    if (blocks)
      c.rule("GPU blocks", "count", blocks, static_cast<double>(lo.engine().num_gpu_blocks), static_cast<double>(hi.engine().num_gpu_blocks),
             "available KV // (page x layers per group) (" + grouped(lo.unit_bytes()) + " B per block)");
    if (tokens && !blocks)
      c.rule("GPU KV cache size", "tokens", tokens, static_cast<double>(lo.engine().kv_cache_tokens), static_cast<double>(hi.engine().kv_cache_tokens),
             "from the printed KV memory: " + std::string(lo.engine().rules_version));
    if (conc && !blocks)
      c.rule("maximum concurrency", "ratio", conc, lo.engine().max_concurrency, hi.engine().max_concurrency, "blocks / blocks per max_model_len request")
          .tolerance = 0.005;
    if (c.log.does_not_start || est_len) {
      LogRow& r = c.rule("starts", "count", nullptr, hi.engine().startup_ok ? 1 : 0, lo.engine().startup_ok ? 1 : 0,
                         "one max_model_len request fits the pool (check_enough_kv_cache_memory)");
      r.printed = c.log.does_not_start ? 0 : 1;
      r.printed_text = c.log.does_not_start ? "does not start" : "starts";
      r.line = c.log.start_error_line;
      if (est_len)
        c.rule("estimated maximum model length", "tokens", est_len, static_cast<double>(lo.engine().estimated_max_model_len),
               static_cast<double>(hi.engine().estimated_max_model_len), "estimate_max_model_len: the longest request whose blocks fit");
      if (needed) {
        const double per = static_cast<double>(lo.units_per_request(static_cast<i64>(len)) * lo.unit_bytes());
        c.rule("KV memory one max_model_len request needs", "bytes", needed, per, per, "blocks per request x block bytes");
      }
    }
  }
  if (blocks) {
    const Planner b = with_blocks(blocks->value);
    if (tokens)
      c.rule("GPU KV cache size", "tokens", tokens, static_cast<double>(b.engine().kv_cache_tokens), static_cast<double>(b.engine().kv_cache_tokens),
             "from the printed blocks: " + std::string(b.engine().rules_version));
    if (conc)
      c.rule("maximum concurrency", "ratio", conc, b.engine().max_concurrency, b.engine().max_concurrency,
             "blocks / " + grouped(b.units_per_request(b.spec().engine.max_model_len)) + " blocks per " + grouped(b.spec().engine.max_model_len) + "-token request")
          .tolerance = 0.005;
    if (held)
      c.rule("tokens the KV cache holds", "tokens", held, static_cast<double>(b.pool_units() * b.engine().block_size),
             static_cast<double>(b.pool_units() * b.engine().block_size), "# GPU blocks x block_size");
    if (c.log.does_not_start && !kv) {
      LogRow& r = c.rule("starts", "count", nullptr, b.engine().startup_ok ? 1 : 0, b.engine().startup_ok ? 1 : 0, "one max_model_len request fits the blocks");
      r.printed = 0;
      r.printed_text = "does not start";
      r.line = c.log.start_error_line;
    }
  }
}

// ---------------------------------------------------------------- SGLang
void sglang_rows(Ctx& c) {
  const auto *tokens = c.f("kv_tokens"), *total_tokens = c.f("max_total_num_tokens"), *k = c.f("k_bytes"), *v = c.f("v_bytes"),
             *kvb = c.f("kv_bytes"), *weights = c.f("weights_bytes"), *after = c.f("avail_after_weights_bytes"), *frac = c.f("mem_fraction_static"),
             *ctx_len = c.f("context_len"), *running = c.f("max_running_requests");
  // the hybrid SWA pool prints "Use sliding window memory pool. full_layer_tokens=F, swa_layer_tokens=S" and allocates the
  // SWA pool first: its #tokens and K/V sizes are not the full layers'
  const auto *full_l = c.f("full_layer_tokens"), *swa_l = c.f("swa_layer_tokens");
  const bool hybrid = full_l && swa_l;
  if (tokens && total_tokens && !hybrid)
    c.rule("max_total_num_tokens", "tokens", total_tokens, tokens->value, tokens->value, "the token pool allocated (#tokens)");
  if (hybrid && total_tokens)
    c.rule("max_total_num_tokens", "tokens", total_tokens, full_l->value, full_l->value, "the full layers' pool (full_layer_tokens)");
  const bool mamba = c.f("mamba_cache_size") || c.f("ssm_state_bytes");
  const double pool_tokens = total_tokens ? total_tokens->value : tokens ? tokens->value : 0;
  if (pool_tokens > 0 && ctx_len && running) {
    // max_running_requests: min(user value or tokens // 2, clamp(tokens / context_len x 512, 2048, 4096))
    const auto given = c.arg("max_running_requests");
    std::optional<double> user;
    if (given && *given != "None") user = std::atof(given->c_str());
    if (given && !mamba) {
      const double req_pool = std::clamp(std::floor(pool_tokens / ctx_len->value * 512.0), 2048.0, 4096.0);
      const double want = std::min(user.value_or(std::floor(pool_tokens / 2)), req_pool);
      c.rule("max_running_requests", "count", running, want, want, "min(--max-running-requests or tokens // 2, clamp(tokens / context_len x 512, 2048, 4096))");
    }
  }
  if (!c.d) return;
  const Deployment& d = *c.d;
  const Planner p(d.spec);
  const ModelSpec& rank = p.rank_model();
  const i64 page = std::max<i64>(p.spec().engine.block_size, 1);
  if (weights)
    c.estimate("weights", "bytes", weights, static_cast<double>(p.budget_bytes("weights")), "parameters x bytes (" + d.spec.model.id + ")",
               "measured by the engine");
  if (hybrid) {
    // swa_layer_tokens = page-aligned int(full_layer_tokens x --swa-full-tokens-ratio)
    const double r = p.spec().engine.swa_full_tokens_ratio, pg = static_cast<double>(page);
    const double want = std::floor(std::floor(full_l->value * r) / pg) * pg;
    c.rule("swa_layer_tokens", "tokens", swa_l, want, want, "page-aligned int(full_layer_tokens x swa_full_tokens_ratio)");
    c.estimate("swa_layer_tokens (kvplan's plan)", "tokens", swa_l, static_cast<double>(p.engine().swa_layer_tokens), "the plan's budget",
               p.engine().swa_layer_tokens > 0 ? "follows max_total_num_tokens" : "the plan has no hybrid SWA pool at this version");
  }
  if (pool_tokens > 0 && (k || v || kvb) && !hybrid) {
    // MHATokenToKVPool: (size + page_size) rows per layer of kv_heads x head_dim elements (K and V apart; MLA one latent)
    double kb = 0, vb = 0;
    for (const Layer& l : rank.layers) {
      if (l.kv == KvKind::ssm || l.kv == KvKind::none || l.kv == KvKind::cross) continue;
      double lk = static_cast<double>(layer_k_bytes_per_token(l, p.spec().kv));
      if (l.kv == KvKind::mla_latent && l.indexer_head_dim > 0) {
        // NSATokenToKVPool.get_kv_size_bytes: the latent buffer (an fp8 cache stores the record override_kv_cache_dim,
        // kv_lora_rank fp8 + an fp32 scale per 128 + the rope part in bf16) plus the uint8 indexer buffer, whatever
        // the cell size priced
        const ElemFormat f = p.spec().kv.k_format;
        const bool fp8 = f == ElemFormat::fp8_e4m3 || f == ElemFormat::fp8_e5m2;
        const i64 latent = fp8 ? mla_fp8_record_bytes(l) : row_bytes(f, add(l.kv_lora_rank, l.qk_rope_head_dim), "MLA latent row");
        lk = static_cast<double>(latent + layer_indexer_key_bytes(l));
      }
      kb += lk;
      vb += static_cast<double>(layer_v_bytes_per_token(l, p.spec().kv));
    }
    const double rows = pool_tokens + static_cast<double>(page);
    if (k) c.rule("K buffers", "bytes", k, rows * kb, rows * kb, "(max_total_num_tokens + page_size) x sum of K row bytes over the rank's layers");
    if (v) c.rule("V buffers", "bytes", v, rows * vb, rows * vb, "(max_total_num_tokens + page_size) x sum of V row bytes over the rank's layers");
    if (kvb && !k) c.rule("KV buffers", "bytes", kvb, rows * (kb + vb), rows * (kb + vb), "(max_total_num_tokens + page_size) x latent row bytes");
  }
  if (after && weights && frac && total_tokens && !mamba && p.engine().cell_size > 0) {
    // profile_max_num_token: rest = avail_after_load - free_before_load x (1 - mem_fraction_static);
    // free_before_load = avail_after_load + weights usage; tokens = rest // cell_size, page-aligned
    const double cell = static_cast<double>(p.engine().cell_size);
    // --max-total-tokens caps what the memory holds (_apply_token_constraints: min(profiled, max_total_tokens))
    std::optional<double> cap;
    if (const auto given = c.arg("max_total_tokens"); given && *given != "None") cap = std::atof(given->c_str());
    auto tokens_for = [&](double avail, double used) {
      const double rest = avail - (avail + used) * (1 - frac->value);
      double t = std::floor(std::max(rest, 0.0) / cell);
      if (cap && *cap > 0) t = std::min(t, *cap);
      return std::floor(t / static_cast<double>(page)) * static_cast<double>(page);
    };
    c.rule("max_total_num_tokens (from the printed memory)", "tokens", total_tokens, tokens_for(after->value - after->resolution, weights->value + weights->resolution),
           tokens_for(after->value + after->resolution, weights->value - weights->resolution),
           "(avail - (avail + weights) x (1 - mem_fraction_static)) // cell_size " + grouped(p.engine().cell_size) + " B" +
               (cap ? ", at most --max-total-tokens " + grouped(static_cast<i64>(*cap)) : std::string()));
  }
  if (frac)
    c.estimate("mem_fraction_static", "ratio", frac, p.spec().engine.memory_fraction, std::string(p.engine().rules_version),
               "kvplan's default; the command may set it");
  if (total_tokens)
    c.estimate("max_total_num_tokens (kvplan's plan)", "tokens", total_tokens, static_cast<double>(p.engine().max_total_num_tokens), "the plan's budget",
               "follows the estimates above");
}

// ---------------------------------------------------------------- TensorRT-LLM
void trtllm_rows(Ctx& c) {
  const auto *pool = c.last("kv_pool_bytes"), *tokens = c.last("kv_tokens"), *blocks = c.last("gpu_blocks"), *tpb = c.last("tokens_per_block"),
             *bpt = c.last("kv_bytes_per_token"), *adjusted = c.last("max_seq_len_adjusted");
  if (blocks && tpb && tokens)
    c.rule("tokens in the paged KV cache", "tokens", tokens, blocks->value * tpb->value, blocks->value * tpb->value, "primary blocks x tokens per block");
  if (pool && tokens && bpt)
    c.rule("tokens in the paged KV cache (from bytes)", "tokens", tokens, std::floor((pool->value - pool->resolution) / bpt->value),
           std::floor((pool->value + pool->resolution) / bpt->value), "KV bytes / kv size per token");
  if (!c.d) return;
  const Deployment& d = *c.d;
  const Planner p(d.spec);
  const double per_token = static_cast<double>(p.engine().page_bytes);
  if (bpt) c.rule("KV bytes per token", "bytes", bpt, per_token, per_token, "sum over the rank's layers of (K row + V row) bytes");
  if (pool && tokens && !bpt) {
    const double lo = std::floor((pool->value - pool->resolution) / per_token), hi = std::floor((pool->value + pool->resolution) / per_token);
    c.rule("tokens in the paged KV cache", "tokens", tokens, lo, hi, "KV bytes // " + grouped(p.engine().page_bytes) + " B per token");
  }
  if (adjusted && pool) {
    const Planner r = replay(d, [&](PlanSpec& s) { s.engine.kv_cache_memory_bytes = static_cast<i64>(pool->value); });
    c.rule("adjusted max_seq_len", "tokens", adjusted, static_cast<double>(r.max_len()), static_cast<double>(r.max_len()), "the tokens whole blocks hold");
  }
  if (const auto* w = c.f("weights_bytes"))
    c.estimate("weights", "bytes", w, static_cast<double>(p.budget_bytes("weights")), "parameters x bytes (" + d.spec.model.id + ")", "measured by the engine");
  if (const auto* a = c.f("activation_bytes"))
    c.estimate("activation peak", "bytes", a, static_cast<double>(p.budget_bytes("activation_peak")), "kvplan estimate", "profiled by the engine");
  if (const auto* n = c.f("non_torch_bytes"))
    c.estimate("outside torch (NCCL, CUDA graphs)", "bytes", n, static_cast<double>(p.budget_bytes("non_torch") + p.budget_bytes("cuda_graphs")),
               "kvplan non_torch + cuda_graphs estimates", "measured by the engine");
  if (pool)
    c.estimate("KV cache memory (kvplan's plan)", "bytes", pool, static_cast<double>(p.engine().kv_pool_bytes), "the plan's budget",
               "follows the estimates above");
}

// ---------------------------------------------------------------- llama.cpp
void llamacpp_rows(Ctx& c) {
  const auto *heads = c.f("n_head_kv"), *hk = c.f("n_embd_head_k"), *hv = c.f("n_embd_head_v"), *n_ctx = c.f("n_ctx"), *n_layer = c.f("n_layer"),
             *params = c.f("model_params");
  const auto tk = c.log.text.count("type_k") ? parse_format(c.log.text.at("type_k")) : std::nullopt;
  const auto tv = c.log.text.count("type_v") ? parse_format(c.log.text.at("type_v")) : std::nullopt;
  // each KV size line: cells x layers x ggml_row_size(type, n_head_kv x head dim), from the printed hparams
  double k_sum = 0, v_sum = 0;
  int lines = 0;
  for (const auto& fig : c.log.figures) {
    if (fig.key != "k_bytes" && fig.key != "v_bytes") continue;
    const bool is_k = fig.key == "k_bytes";
    const auto fmt_t = is_k ? tk : tv;
    const io::LogFigure* dim = is_k ? hk : hv;
    // the size line prints the cells of one stream ("%u cells, %d layers, %u/%u seqs": n_seq_max / n_stream)
    double cells = n_ctx ? n_ctx->value : 0, layers = n_layer ? n_layer->value : 0, streams = 1;
    for (const auto& g : c.log.figures)
      if (g.line == fig.line && g.key == "kv_cells") cells = g.value;
      else if (g.line == fig.line && g.key == "kv_layers") layers = g.value;
      else if (g.line == fig.line && g.key == "kv_streams") streams = g.value;
    if (is_k) k_sum += fig.value;
    else v_sum += fig.value;
    ++lines;
    if (!fmt_t || !heads || !dim || cells <= 0 || layers <= 0) continue;
    // MLA from #19067 (b7830): the latent is cached as K only, V reads a view of it (has_v = !is_mla)
    // (the latent: one KV head; builds and forks that cache MLA per head print the query heads and keep V)
    const bool v_less = !is_k && c.f("kv_lora_rank") && heads->value == 1 &&
                        !(c.d ? c.d->spec.engine.rules->mla_v_cache : engine_rules(EngineKind::llamacpp, c.log.version).mla_v_cache);
    const double row = v_less ? 0.0 : static_cast<double>(row_bytes(*fmt_t, static_cast<i64>(heads->value * dim->value)));
    const double v = cells * streams * layers * row;
    LogRow& r = c.rule(std::string(is_k ? "K" : "V") + " cache (line " + std::to_string(fig.line) + ")", "bytes", &fig, v, v,
                       grouped(static_cast<long long>(cells)) + " cells x " + (streams > 1 ? grouped(static_cast<long long>(streams)) + " streams x " : "") +
                           grouped(static_cast<long long>(layers)) + " layers x row_bytes(" +
                           std::string(format_info(*fmt_t).name) + ", " + grouped(static_cast<long long>(heads->value * dim->value)) + ")");
    r.line = fig.line;
  }
  if (!c.d) return;
  const Deployment& d = *c.d;
  const Planner p(d.spec);
  const EngineReport& e = p.engine();
  if (lines > 0) {
    const io::LogFigure* first_k = c.f("k_bytes");
    const io::LogFigure* first_v = c.f("v_bytes");
    const double k_tol = first_k ? first_k->resolution * lines : 0, v_tol = first_v ? first_v->resolution * lines : 0;
    if (first_k) {
      LogRow& r = c.rule("K cache (kvplan's plan)", "bytes", first_k, static_cast<double>(e.k_bytes), static_cast<double>(e.k_bytes),
                         "the plan: n_ctx " + grouped(e.n_ctx) + (e.swa_cells ? ", SWA layers " + grouped(e.swa_cells) + " cells" : std::string()));
      r.printed = k_sum;
      r.printed_text = fmt(k_sum / (1024.0 * 1024.0), 2) + " MiB" + (lines > 2 ? " (sum of the size lines)" : "");
      r.tolerance = k_tol;
    }
    if (first_v) {
      LogRow& r = c.rule("V cache (kvplan's plan)", "bytes", first_v, static_cast<double>(e.v_bytes), static_cast<double>(e.v_bytes), "the plan");
      r.printed = v_sum;
      r.printed_text = fmt(v_sum / (1024.0 * 1024.0), 2) + " MiB" + (lines > 2 ? " (sum of the size lines)" : "");
      r.tolerance = v_tol;
    }
  }
  // the context llama.cpp chose for the settings kvplan was given (llama_context constructor)
  if (n_ctx) c.rule("n_ctx", "count", n_ctx, static_cast<double>(e.n_ctx), static_cast<double>(e.n_ctx), "pad(-c, 256); per-slot streams: n_seq_max x pad(n_ctx / n_seq_max, 256)");
  if (const auto* seq = c.f("n_ctx_seq"))
    c.rule("n_ctx_seq", "count", seq, static_cast<double>(e.n_ctx_seq), static_cast<double>(e.n_ctx_seq), "unified: n_ctx; else pad(n_ctx / n_seq_max, 256)");
  if (const auto* seqs = c.f("n_seq_max"))
    c.rule("n_seq_max", "count", seqs, static_cast<double>(p.max_seqs()), static_cast<double>(p.max_seqs()), "-np (auto: 4)");
  if (const auto* u = c.f("kv_unified"))
    c.rule("kv_unified", "count", u, p.spec().engine.kv_unified.value_or(true) ? 1 : 0, p.spec().engine.kv_unified.value_or(true) ? 1 : 0,
           "--kv-unified, else on exactly when the slots are automatic");
  if (const auto* cells = c.f("kv_cells_nonswa"))
    c.rule("non-SWA cache cells", "count", cells, static_cast<double>(e.kv_cells / e.kv_streams), static_cast<double>(e.kv_cells / e.kv_streams),
           "n_ctx_seq per stream (n_ctx with a unified cache)");
  if (const auto* swa = c.f("kv_cells_swa"))
    c.rule("SWA cache cells", "count", swa, static_cast<double>(e.swa_cells), static_cast<double>(e.swa_cells),
           "pad(min(n_ctx, n_swa x (unified ? n_seq_max : 1) + n_ubatch), 256)");
  if (const auto* r = c.f("recurrent_r_bytes"); r && c.f("recurrent_s_bytes")) {
    const io::LogFigure* st = c.f("recurrent_s_bytes");
    LogRow& row = c.rule("recurrent state (R + S)", "bytes", r, static_cast<double>(e.state_bytes), static_cast<double>(e.state_bytes),
                         "n_seq_max x per layer (conv (d_conv - 1) x channels + ssm state) x 4 B (f32)");
    row.printed = r->value + st->value;
    row.printed_text = fmt((r->value + st->value) / (1024.0 * 1024.0), 2) + " MiB (R + S)";
    row.tolerance = r->resolution + st->resolution;
  }
  double compute = 0;
  int compute_line = 0;
  for (const auto& fig : c.log.figures)
    if (fig.key == "compute_buffer_bytes" && fig.scope.find("_Host") == std::string::npos) {
      compute += fig.value;
      compute_line = fig.line;
    }
  if (compute_line > 0) {
    LogRow& r = c.estimate("compute buffer", "bytes", nullptr, static_cast<double>(p.budget_bytes("compute_buffer")),
                           "n_ubatch x (vocab + 4 x widest MLP) x 4 B", "kvplan estimates the graph's largest buffers");
    r.printed = compute;
    r.printed_text = fmt(compute / (1024.0 * 1024.0), 2) + " MiB";
    r.line = compute_line;
  }
  if (params) {
    const double n = static_cast<double>(count_params(d.spec.model).total);
    c.rule("model parameters", "count", params, n, n, "kvplan's parameter count of " + d.spec.model.id);
  }
  // the printed file type priced by llama-quantize's recipe, tensor by tensor (core/gguf_recipe.hpp), when the
  // model's weights are not known otherwise
  ModelSpec m = d.spec.model;
  std::string basis = "parameters x the weight format's bytes", note = "GGUF mixes quant types; kvplan prices one";
  const auto ft = c.log.text.find("file_type");
  if (ft != c.log.text.end() && m.quant.method == "none" && !m.exact_weight_bytes) {
    if (const auto r = gguf_recipe_from_printed(ft->second)) {
      try {
        apply_weight_format(m, r->name, "file type");
        basis = "llama-quantize " + r->name + " recipe, tensor by tensor";
        note = "no importance matrix assumed (it changes a few IQ4 / Q4_0 / Q5_0 choices)";
      } catch (const InputError&) {
        m = d.spec.model;  // a shape llama-quantize would refuse: keep the plain estimate
      }
    }
  }
  if (const auto* size = c.f("model_size_bytes")) c.estimate("model size", "bytes", size, static_cast<double>(weight_bytes(m, count_params(m)).total), basis, note);
  // each GPU's model buffer ("CUDA0 model buffer size"): the layers kvplan places on that GPU, each at its own bytes
  // (core/weights.hpp layer_weight_bytes; the input layer stays on the CPU). CPU_Mapped is not compared: with mmap
  // it spans the file's mapped range, not the CPU tensors' bytes.
  PlanSpec priced = d.spec;
  priced.model = m;
  std::optional<Planner> q;
  for (const auto& fig : c.log.figures) {
    if (fig.key != "model_buffer_bytes" || fig.scope.rfind("CPU", 0) == 0 || fig.scope.find("_Host") != std::string::npos) continue;
    const size_t digits = fig.scope.find_last_not_of("0123456789");
    if (digits == std::string::npos || digits + 1 >= fig.scope.size()) continue;
    const size_t g = static_cast<size_t>(std::stoul(fig.scope.substr(digits + 1)));
    if (!q) q.emplace(priced);
    if (g >= q->devices().size()) continue;
    const DeviceBudget& dev = q->devices()[g];
    LogRow& r = c.estimate("model buffer (" + fig.scope + ")", "bytes", &fig, static_cast<double>(dev.weights),
                           grouped(dev.layers) + " layers" + (dev.output_layer ? " + the output layer" : "") + ", each at its own bytes (" + basis + ")", note);
    r.line = fig.line;
  }
}

}  // namespace

bool LogRow::ok() const {
  if (kind != "rule" || !printed || !lo) return true;
  return *printed >= *lo - tolerance - 1e-9 * std::abs(*lo) && *printed <= *hi + tolerance + 1e-9 * std::abs(*hi);
}

io::EngineLog read_log_file(const std::string& path) {
  io::EngineLog log = io::read_engine_log(io::read_text_file(path, 1LL << 30), path);
  if (log.engine.empty() || log.figures.empty())
    throw InputError(path, log.engine.empty() ? "no vLLM, SGLang, TensorRT-LLM or llama.cpp startup line found"
                                              : "a " + log.engine + " log with no memory figure in it",
                     "give the engine's startup log (the lines up to the first request)");
  return log;
}

namespace {

// The engine flag for a destination name the engine printed ("max_model_len" -> "--max-model-len").
std::string flag_for(const std::string& dest) {
  std::string f = "--" + dest;
  std::replace(f.begin() + 2, f.end(), '_', '-');
  return f;
}

// --set is for settings the log does not show: one the vLLM / SGLang args line shows (the settings the engine was given),
// given another value, would plan a deployment other than the one that printed the figures. Values compared as
// numbers, else case-blind words; a spelling with a conversion (vLLM's 32k, a negated switch) is not compared.
void refuse_shown_conflict(const DeploymentSource& extra, const std::string& key, const std::string& shown, const std::string& where) {
  const auto number = [](const std::string& t, double& v) {
    char* end = nullptr;
    v = std::strtod(t.c_str(), &end);
    return !t.empty() && end == t.c_str() + t.size() && std::isfinite(v);
  };
  for (const auto& [k, value, origin] : extra.settings) {
    if (k != key || origin.kind != io::Origin::Kind::set) continue;
    double a = 0, b = 0;
    const bool both = number(value, a) && number(shown, b);
    const bool differ = both ? std::abs(a - b) > 1e-9 * std::max(std::abs(a), std::abs(b)) : ascii_lower(value) != ascii_lower(shown);
    const auto [def, negated] = setting_spelled(origin.spelling);
    const bool plain = def && !negated && std::all_of(def->kvplan.begin(), def->kvplan.end(), [&](const io::Spelling& sp) {
      return sp.conv == io::Conv::plain || sp.conv == io::Conv::auto_count;
    });
    if (differ && (both || plain))
      throw InputError(origin.where, "the log shows " + key + " = " + shown + " (" + where + "), not " + value,
                       "drop it: --set gives the settings a log does not show");
  }
}

std::string strip_quotes(std::string v) {
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  if (v.rfind("torch.", 0) == 0) v = v.substr(6);
  return v;
}

}  // namespace

std::optional<Deployment> deployment_from_log(const io::EngineLog& log, const DeploymentSource& extra, const io::Profiles& profiles,
                                              std::vector<std::string>& notes) {
  DeploymentSource src = extra;
  const auto kind = parse_engine(log.engine);
  src.engine_hint = log.engine;
  // the engine is the log's: another named by --set would plan one engine's deployment against the other's figures
  for (const auto& [key, value, origin] : extra.settings)
    if (key == "engine" && parse_engine(value.substr(0, value.find('@'))) != kind)
      throw InputError(origin.where, "'" + value + "' is not the engine that wrote the log (" + log.engine + ")", "leave the engine to the log");
  // --engine-version is for a log that prints none: over a printed one it plans another release's rules
  if (!src.version_hint.empty() && !log.version.empty() && src.version_hint != log.version)
    notes.push_back("--engine-version " + src.version_hint + " replaces the version the log printed (" + log.version + ")");
  std::string version = src.version_hint.empty() ? log.version : src.version_hint;
  if (!version.empty() && version[0] == 'b' && kind == EngineKind::llamacpp && log.fork == "ik_llama.cpp") {
    notes.push_back("ik_llama.cpp build " + version + ": its own build numbers; read with llama.cpp's oldest rules");
    version = "b1";
  }
  if (version.empty() && kind == EngineKind::vllm && (log.find("gpu_blocks") || log.find("peak_torch_bytes") || log.find("usable_bytes"))) {
    version = "0.8.3";
    notes.push_back("vLLM version not printed; '# GPU blocks' / memory-profiling lines date the log before 0.10: read with the 0.8-0.9 rules");
  }
  if (version.empty()) notes.push_back("engine version not printed: read with the newest rules kvplan knows");
  src.version_hint = version;
  const io::Origin from_log{io::Origin::Kind::command, "log args line " + std::to_string(log.args_line), ""};
  auto has_setting = [&](const std::string& key) {
    return std::any_of(src.settings.begin(), src.settings.end(), [&](const auto& s) { return std::get<0>(s) == key; });
  };
  // vLLM / SGLang: the printed args as the engine's command line (flags the version's table knows)
  std::string printed_model;  // the model the args line names
  if (kind && (*kind == EngineKind::vllm || *kind == EngineKind::sglang) && !log.args.empty()) {
    const io::FlagTable& table = io::flag_table(*kind, version);
    std::string& model = printed_model;
    std::vector<std::string> argv = {*kind == EngineKind::vllm ? "vllm" : "python3", *kind == EngineKind::vllm ? "serve" : "-m"};
    if (*kind == EngineKind::sglang) argv.push_back("sglang.launch_server");
    std::vector<std::string> flags;
    for (const auto& [dest0, raw] : log.args) {
      std::string dest = dest0 == "max_seq_len" ? "max_model_len" : dest0;
      const std::string v = strip_quotes(raw);
      if (dest == "model" || dest == "model_tag" || dest == "model_path") {
        if (model.empty()) model = v;
        continue;
      }
      if (v == "None" || v.empty() || v.front() == '{' || v.front() == '(') continue;
      const io::FlagDef* def = table.find(flag_for(dest));
      if (!def) continue;
      if (v.front() != '[')
        if (const auto [setting, negated] = setting_spelled(flag_for(dest)); setting && !negated)
          refuse_shown_conflict(extra, setting->key, v, "log line " + std::to_string(log.args_line));
      if (v.front() == '[') {
        // a list the engine printed (vLLM kv_cache_dtype_skip_layers: ['3', '4']): its items, for flags taking a list
        if (def->arity != io::FlagArity::list && def->arity != io::FlagArity::list0) continue;
        std::vector<std::string> items;
        std::string item;
        for (char ch : v.substr(1)) {
          if (ch == ',' || ch == ']') {
            const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
            if (b != std::string::npos)
              if (const std::string it = strip_quotes(item.substr(b, e - b + 1)); !it.empty()) items.push_back(it);
            item.clear();
          } else {
            item += ch;
          }
        }
        if (items.empty()) continue;
        flags.push_back(flag_for(dest));
        flags.insert(flags.end(), items.begin(), items.end());
        continue;
      }
      if (v == "False") continue;
      flags.push_back(flag_for(dest));
      if (v != "True") flags.push_back(v);
    }
    if (*kind == EngineKind::sglang && !model.empty()) {
      argv.push_back("--model-path");
      argv.push_back(model);
    } else if (!model.empty()) {
      argv.push_back(model);
    }
    argv.insert(argv.end(), flags.begin(), flags.end());
    if (!model.empty() || !flags.empty()) {
      src.command = argv;
      src.command_where = "log line " + std::to_string(log.args_line);
    }
  }
  // vLLM's "Maximum concurrency for N tokens per request" and SGLang's "context_len=N": the max_model_len each ran with
  // (its own choice when the args leave it out, or lowered by vLLM's auto-fit); the replays of the printed figures use
  // it, so a --set max_model_len beside it plans the rest of the table only
  if (const auto* n = log.find(kind == EngineKind::vllm ? "max_concurrency_tokens" : "context_len");
      n && (kind == EngineKind::vllm || kind == EngineKind::sglang))
    for (const auto& [key, value, origin] : extra.settings)
      if (key == "max_model_len" && origin.kind == io::Origin::Kind::set && value != std::to_string(static_cast<long long>(n->value)))
        notes.push_back(origin.where + "=" + value + ": the replays of the printed KV figures use the max_model_len the engine ran with, " +
                        grouped(static_cast<i64>(n->value)) + " (log line " + std::to_string(n->line) + "); the plan's other rows use " + value);
  // llama.cpp: the context it printed is the deployment (fitted or not, this is what it allocated)
  if (kind == EngineKind::llamacpp) {
    // the figures it printed are the rules' results (n_ctx rounded, layers offloaded), not the settings asked for: a
    // --set beside them is the request they came from
    auto put = [&](const std::string& key, const std::string& value, int line) {
      if (!has_setting(key)) src.settings.emplace_back(key, value, io::Origin{io::Origin::Kind::command, "log line " + std::to_string(line), key});
    };
    auto num = [&](const char* key) { return log.find(key); };
    if (const auto* n = num("n_ctx")) put("ctx_size", std::to_string(static_cast<long long>(n->value)), n->line);
    if (const auto* n = num("n_seq_max")) put("parallel", std::to_string(static_cast<long long>(n->value)), n->line);
    else if (const auto* s = num("kv_seqs")) put("parallel", std::to_string(static_cast<long long>(s->value)), s->line);
    if (const auto* u = num("kv_unified")) put("kv_unified", u->value != 0 ? "true" : "false", u->line);
    else put("kv_unified", "true", 0);
    if (const auto* n = num("n_ubatch")) put("ubatch_size", std::to_string(static_cast<long long>(n->value)), n->line);
    if (log.text.count("type_k")) put("cache_type_k", log.text.at("type_k"), 0);
    if (log.text.count("type_v")) put("cache_type_v", log.text.at("type_v"), 0);
    if (const auto* g = num("gpu_layers")) put("n_gpu_layers", std::to_string(static_cast<long long>(g->value)), g->line);
    put("fit", "false", 0);  // the printed context is already the fitted one
    // MLA models cached per head (ik_llama.cpp mla_attn = 0, older builds): the printed KV heads are the query heads
    if (const auto* h = num("n_head_kv"); h && h->value > 1 && log.find("kv_lora_rank")) put("mla_layout", "expanded", h->line);
  }
  if (const auto* total = log.find("gpu_total_bytes"); total && !has_setting("gpu_memory_bytes")) {
    src.settings.emplace_back("gpu_memory_bytes", std::to_string(static_cast<long long>(total->value)),
                              io::Origin{io::Origin::Kind::command, "log line " + std::to_string(total->line), "total_gpu_memory"});
    if (!has_setting("gpu")) notes.push_back("GPU not named by the log: its printed total is planned on the default profile's bandwidth");
  } else if (!has_setting("gpu") && !has_setting("gpu_memory_bytes")) {
    // no total printed and none given: the plan's memory is the default profile's, which the log may not be from
    const auto device = log.text.find("device");
    std::string candidates;  // the profiles of that name, one per memory size ("... RTX 4060 Ti 16GB", "... 8GB")
    if (device != log.text.end())
      for (const auto& [id, gp] : profiles.gpus()) {
        const std::string rest = gp.name.rfind(device->second, 0) == 0 ? gp.name.substr(device->second.size()) : "-";
        const bool sized = rest.size() > 3 && rest[0] == ' ' && rest.compare(rest.size() - 2, 2, "GB") == 0 &&
                           rest.find_first_not_of("0123456789", 1) == rest.size() - 2;
        if (rest.empty() || sized) candidates += (candidates.empty() ? "" : " or ") + id;
      }
    notes.push_back(device != log.text.end()
                        ? "the log names its GPU '" + device->second + "' but prints no total: planned on the default profile (h100-sxm); give --gpu " +
                              (candidates.empty() ? "with that GPU's profile (kvplan gpus)" : candidates)
                        : "GPU neither named nor its total printed by the log: planned on the default profile (h100-sxm); give --gpu for the GPU the log ran on");
  }
  const bool model_known = has_setting("model") || !src.command.empty();
  if (!model_known) {
    notes.push_back("no model: only the log's own arithmetic is checked; pass --model ID to compare with kvplan's plan");
    return std::nullopt;
  }
  if (!has_setting("engine")) src.settings.emplace(src.settings.begin(), "engine", log.engine, io::Origin{io::Origin::Kind::command, "the log", "engine"});
  if (!version.empty() && !has_setting("engine_version"))
    src.settings.emplace(src.settings.begin() + 1, "engine_version", version, io::Origin{io::Origin::Kind::command, "the log", "engine_version"});
  Deployment d = resolve_source(src, profiles);
  // --model is for a log whose model kvplan cannot load: over one it can, the comparison is of another model
  const bool model_flag = std::any_of(extra.settings.begin(), extra.settings.end(), [](const auto& t) { return std::get<0>(t) == "model"; });
  if (!printed_model.empty() && model_flag)
    if (const auto printed_id = profiles.model_for_hf_id(printed_model); printed_id && *printed_id != d.spec.model.id)
      d.warnings.push_back("--model " + d.spec.model.id + " replaces the model the log ran (" + printed_model + ", profile " + *printed_id +
                           "): its rows compare another model's plan; leave --model out");
  return d;
}

LogComparison compare_log(const std::string& file, const io::EngineLog& log, const Deployment* d, std::vector<std::string> notes) {
  LogComparison out;
  out.file = file;
  out.log = log;
  out.notes = std::move(notes);
  out.planned = d != nullptr;
  if (d) {
    out.gpu_total = static_cast<double>(d->spec.overrides.gpu_memory.value_or(d->spec.gpu.memory_bytes));
    out.utilization = d->spec.engine.memory_fraction;
    out.total_assumed = !log.find("gpu_total_bytes") && !log.find("usable_bytes") && !d->bag.has("gpu") && !d->bag.has("gpu_memory_bytes");
  }
  Ctx c{log, d, out};
  switch (parse_engine(log.engine).value_or(EngineKind::generic)) {
    case EngineKind::vllm: vllm_rows(c); break;
    case EngineKind::sglang: sglang_rows(c); break;
    case EngineKind::trtllm: trtllm_rows(c); break;
    case EngineKind::llamacpp: llamacpp_rows(c); break;
    default: break;
  }
  for (const auto& r : out.rows)
    if (r.kind == "rule" && r.printed && r.lo) {
      ++out.rules;
      out.rules_ok += r.ok();
    }
  return out;
}

ojson overheads_json(const LogComparison& c) {
  const io::EngineLog& log = c.log;
  ojson terms = ojson::object(), basis = ojson::object();
  auto put = [&](const char* key, double v, const std::string& why) {
    if (v <= 0) return;
    terms[key] = static_cast<long long>(std::llround(v));
    basis[key] = why;
  };
  auto line = [](const io::LogFigure* f) { return " (line " + std::to_string(f->line) + ")"; };
  const auto *act = log.find("activation_bytes"), *nt = log.find("non_torch_bytes"), *graphs = log.find("cuda_graph_bytes"), *peak = log.find("peak_torch_bytes"),
             *weights = log.find("weights_bytes"), *kv = log.find("kv_available_bytes"), *usable = log.find("usable_bytes"), *total = log.find("gpu_total_bytes"),
             *util = log.find("gpu_memory_utilization");
  switch (parse_engine(log.engine).value_or(EngineKind::generic)) {
    case EngineKind::vllm: {
      if (act) put("activation_bytes", act->value, "PyTorch activation peak" + line(act));
      else if (peak && weights) put("activation_bytes", peak->value - weights->value, "peak_torch_memory - weights" + line(peak));
      else if (kv && weights && (usable || (total && util) || c.gpu_total > 0)) {
        const double share = usable ? usable->value : total && util ? total->value * util->value : c.gpu_total * c.utilization;
        // the sum is what the share leaves: a share kvplan assumed, or one the printed terms exceed, measures nothing
        if (!usable && !(total && util) && c.total_assumed)
          throw InputError("--save-overheads", "the log prints no GPU total and names no GPU, so activation + non-torch would be derived from the default profile's",
                           "give --gpu for the GPU the log ran on");
        if (share - weights->value - kv->value - (nt ? nt->value : 0) < 0)
          throw InputError("--save-overheads", "the printed weights and KV exceed total x utilization, so no activation + non-torch can be derived",
                           "give the GPU (--gpu) and utilization (--set gpu_memory_utilization) the log ran with");
        put("activation_bytes", share - weights->value - kv->value - (nt ? nt->value : 0),
            "total x utilization - weights - available KV" + std::string(nt ? " - non-torch" : "") + line(kv) + ": activation peak and non-torch together (INFO logs print their sum)");
        if (!nt && terms.contains("activation_bytes")) {
          terms["non_torch_bytes"] = 0;  // counted in activation_bytes, so the plan does not add its estimate again
          basis["non_torch_bytes"] = "included in activation_bytes" + line(kv);
        }
      }
      if (nt) put("non_torch_bytes", nt->value, "non-torch memory" + line(nt));
      if (graphs) put("cuda_graph_bytes", graphs->value, "CUDA graph capture" + line(graphs));
      break;
    }
    case EngineKind::sglang: {
      const auto *pool_end = log.find("avail_after_pool_bytes"), *gpu_left = log.find("available_gpu_mem_bytes");
      if (pool_end && gpu_left) put("cuda_graph_bytes", pool_end->value - gpu_left->value, "memory pool end - available_gpu_mem" + line(gpu_left));
      break;
    }
    case EngineKind::trtllm: {
      if (const auto* a = log.find("activation_bytes")) put("activation_bytes", a->value, "activation memory" + line(a));
      if (nt) {
        // 1.x prints NCCL and CUDA graphs together as "outside torch": kept as non-torch, graphs 0 so they count once
        put("non_torch_bytes", nt->value, "memory used outside torch (NCCL and CUDA graphs)" + line(nt));
        terms["cuda_graph_bytes"] = 0;
        basis["cuda_graph_bytes"] = "included in non_torch_bytes" + line(nt);
      }
      break;
    }
    case EngineKind::llamacpp: {
      double compute = 0;
      int at = 0;
      for (const auto& f : log.figures)
        if (f.key == "compute_buffer_bytes" && f.scope.rfind("CPU", 0) != 0 && f.scope.find("_Host") == std::string::npos) {
          compute += f.value;
          at = f.line;
        }
      put("activation_bytes", compute, "device compute buffers (line " + std::to_string(at) + ")");
      break;
    }
    default: break;
  }
  if (terms.empty()) throw InputError(c.file, "the log prints no overhead term (activation, non-torch, CUDA graphs)", "save overheads from a log that prints them");
  ojson j;
  j["schema"] = {{"name", "kvplan.overheads"}, {"version", "1.0.0"}};
  j["source"] = {{"log", c.file}, {"engine", log.engine}, {"engine_version", log.version}};
  if (total) j["gpu_memory_bytes"] = static_cast<long long>(total->value);
  j["terms"] = terms;
  j["basis"] = basis;
  return j;
}

namespace {

// A row's verdict, and kvplan's figure (the middle of its range) less the printed one: the table and the CSV alike.
std::string row_check(const LogRow& r) { return r.kind == "estimate" ? "estimate" : r.ok() ? "ok" : "DIFFERS"; }

std::optional<double> row_difference(const LogRow& r) {
  if (!r.printed || !r.lo) return std::nullopt;
  return (*r.lo + *r.hi) / 2 - *r.printed;
}

}  // namespace

Table log_table(const LogComparison& c) {
  Table t;
  t.title = c.file + ": " + c.log.engine + (c.log.version.empty() ? "" : " " + c.log.version) + " startup log vs kvplan";
  t.columns = {"term", "printed", "kvplan", "difference", "check", "why", "line", "basis"};
  t.right_align = {false, true, true, true, false, false, true, false};
  t.verbose_only = {false, false, false, false, false, false, true, true};
  for (const auto& r : c.rows) {
    std::string kv, diff;
    const bool start_row = r.term == "starts";  // a yes / no, 1 / 0 in the JSON: said in words, no difference to print
    const auto said = [&](double v) { return start_row ? std::string(v >= 0.5 ? "starts" : "does not start") : show(v, r.unit); };
    if (r.lo) kv = *r.lo == *r.hi ? said(*r.lo) : said(*r.lo) + " .. " + said(*r.hi);
    if (const auto dv = row_difference(r); dv && !start_row) {
      diff = (*dv >= 0 ? "+" : "") + (r.unit == "bytes" ? show_bytes(*dv) : fmt(*dv, r.unit == "ratio" ? 4 : 0));
      if (*r.printed != 0) diff += " (" + fmt(100.0 * *dv / std::abs(*r.printed), 1) + "%)";
    }
    const std::string check = row_check(r);
    const std::string why = r.kind == "estimate" ? r.note : r.ok() ? "" : "kvplan's rule: " + r.basis;
    t.rows.push_back({r.term, r.printed_text.empty() && r.printed ? show(*r.printed, r.unit) : r.printed_text, kv, diff, check, why,
                      r.line ? std::to_string(r.line) : "", r.basis});
  }
  return t;
}

Table log_csv_table(const std::vector<LogComparison>& all) {
  Table t;
  t.columns = {"file", "term", "unit", "kind", "printed", "printed_text", "kvplan_low", "kvplan_high", "difference", "difference_pct",
               "check", "line", "basis", "note"};
  auto raw = [](const std::optional<double>& v) {  // the shortest text that reads back as the same double
    if (!v) return std::string();
    if (*v == std::floor(*v) && std::abs(*v) < 9e15) return std::to_string(static_cast<long long>(*v));
    return ojson(*v).dump();
  };
  for (const auto& c : all)
    for (const auto& r : c.rows) {
      const std::optional<double> diff = row_difference(r);
      std::optional<double> pct;
      if (diff && *r.printed != 0) pct = 100.0 * *diff / std::abs(*r.printed);
      t.rows.push_back({c.file, r.term, r.unit, r.kind, raw(r.printed), r.printed_text, raw(r.lo), raw(r.hi), raw(diff), raw(pct), row_check(r),
                        r.line ? std::to_string(r.line) : "", r.basis, r.note});
    }
  return t;
}

ojson log_json(const LogComparison& c) {
  ojson rows = ojson::array();
  for (const auto& r : c.rows) {
    ojson j = {{"term", r.term}, {"unit", r.unit}, {"kind", r.kind}};
    j["printed"] = r.printed ? ojson(*r.printed) : ojson(nullptr);
    j["printed_text"] = r.printed_text;
    j["line"] = r.line;
    j["kvplan_low"] = r.lo ? ojson(*r.lo) : ojson(nullptr);
    j["kvplan_high"] = r.hi ? ojson(*r.hi) : ojson(nullptr);
    j["tolerance"] = r.tolerance;
    j["ok"] = r.ok();
    j["basis"] = r.basis;
    if (!r.note.empty()) j["note"] = r.note;
    rows.push_back(j);
  }
  ojson figures = ojson::array();
  for (const auto& f : c.log.figures)
    figures.push_back({{"key", f.key}, {"value", f.value}, {"resolution", f.resolution}, {"line", f.line}, {"text", f.text}, {"scope", f.scope}});
  return {{"file", c.file},
          {"engine", c.log.engine},
          {"engine_version", c.log.version},
          {"fork", c.log.fork},
          {"does_not_start", c.log.does_not_start},
          {"start_error", c.log.start_error},
          {"planned", c.planned},
          {"rule_checks", c.rules},
          {"rule_checks_ok", c.rules_ok},
          {"rows", rows},
          {"figures", figures},
          {"notes", c.notes},
          {"warnings", c.log.warnings}};
}

}  // namespace kvplan::cli
