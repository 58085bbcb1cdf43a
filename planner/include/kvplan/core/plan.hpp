// Capacity planning for one deployment point: the per-GPU memory budget (every term shown and
// overridable), the engine's own KV sizing (blocks, tokens, concurrency as the engine prints them),
// parallel layouts (the most loaded rank decides), paging waste, shared prefixes, and whether a
// workload (tokens per request x concurrency) fits, with the term that limits it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/engine.hpp"
#include "kvplan/core/gpu.hpp"
#include "kvplan/core/kv.hpp"
#include "kvplan/core/parallel.hpp"

namespace kvplan {

/// Overrides for budget terms (bytes per GPU); unset terms use the modelled defaults.
struct BudgetOverrides {
  std::optional<i64> weights;        // --weight-bytes
  std::optional<i64> activation;     // --activation-bytes
  std::optional<i64> non_torch;      // --non-torch-bytes (library workspaces, NCCL buffers)
  std::optional<i64> cuda_context;   // --cuda-context-bytes
  std::optional<i64> cuda_graph;     // --cuda-graph-bytes
  std::optional<i64> extra;          // --overhead-bytes (anything else you reserve)
  std::optional<i64> gpu_memory;     // --gpu-memory-bytes (replace the profile's total)
};

/// llama-server speculative decoding with a draft model (--model-draft): every slot gets its own draft context of
/// ctx_size cells (0: the slot's context, n_ctx_seq) with its own cache types; the draft's layers are placed on
/// its devices (empty: every GPU) by the same tensor split and -ngld.
struct LlamaDraft {
  ModelSpec model;
  i64 n_gpu_layers = -1;                  // -ngld (-1: all)
  i64 ctx_size = 0;                       // -cd (0: n_ctx_seq of the target)
  ElemFormat k_format = ElemFormat::f16;  // -ctkd (llama.cpp's default f16)
  ElemFormat v_format = ElemFormat::f16;  // -ctvd
  i64 draft_max = 16;                     // --draft-max: tokens drafted per step (a batch of draft_max + 1: no buffer of its own)
  std::vector<i64> devices;               // --device-draft as GPU indices (empty: every GPU)
};

/// llama.cpp --override-tensor: one tensor that a PATTERN=BUFFER override moves, found by the front end (which
/// matches the patterns against the tensor names). `layer`: its block (0..n_layer-1), n_layer for the output layer.
struct LlamaTensorMove {
  std::string name;
  i64 layer = 0;
  i64 bytes = 0;
  i64 gpu = -1;         // -1: host memory (=CPU), else that GPU (=CUDA<n>)
  bool expert = false;  // a routed-expert tensor (ffn_*_exps): --n-cpu-moe may already keep it in host memory
};

struct PlanSpec;
/// GPUs a deployment uses: tensor x pipeline x data parallel, or llama.cpp's GPU count.
i64 deployment_gpus(const PlanSpec& s);

struct PlanSpec {
  ModelSpec model;
  KvOptions kv;  // formats (context is per call)
  GpuSpec gpu;
  Parallel parallel;
  EngineSettings engine;  // resolved (resolve_engine_defaults)
  BudgetOverrides overrides;
  std::optional<ModelSpec> draft;  // speculative decoding's draft model, whole (a draft LLM, an EAGLE head, the MTP layers)
  std::optional<LlamaDraft> llama_draft;  // llama.cpp --model-draft
  std::vector<LlamaTensorMove> llama_tensor_moves;  // llama.cpp --override-tensor
  std::vector<LlamaTensorMove> llama_lora_tensors;  // llama.cpp --lora / --lora-scaled: each adapter tensor (name: its base tensor's)
  i64 llama_mmproj_bytes = 0;                       // llama.cpp --mmproj: the projector's tensor bytes
  bool llama_mmproj_offload = true;                 // --no-mmproj-offload: the projector stays in host memory
};

/// One line of the per-GPU budget. `inside` = counted inside the engine's usable memory
/// (e.g. vLLM's total x utilization); otherwise it must fit in what the engine leaves free.
struct BudgetTerm {
  std::string name;
  i64 bytes = 0;
  std::string basis;  // formula or source
  bool inside = true;
  bool overridden = false;
};

/// One thing the host (or disk) tier holds, per rank: what it is, its bytes, the kind of memory (mapped: file-backed
/// page cache the kernel may reclaim; anonymous: allocated host RAM; pinned: page-locked for DMA; locked: mlock'ed;
/// disk) and the basis (formula and source).
struct TierTerm {
  std::string tier;    // host or disk
  std::string name;
  i64 bytes = 0;
  std::string memory;
  std::string basis;
};

/// Cache geometry of one group of identical layers on one rank (paged engines).
struct CacheGroup {
  KvKind kind = KvKind::full;
  i64 layers = 0;               // layers of this kind on the rank
  i64 window = 0;               // sliding window / chunk
  i64 bytes_per_token = 0;      // per layer (K + V)
  i64 state_bytes = 0;          // per layer, per sequence (ssm)
  i64 page_bytes = 0;           // per layer page (vLLM)
  i64 groups = 0;               // vLLM kv_cache_groups of this kind
  i64 block_tokens = 0;         // vLLM: tokens per block of this kind (the block size, raised where its page was smaller)
};

/// What the engine itself would report at start-up.
struct EngineReport {
  EngineKind kind = EngineKind::vllm;
  std::string rules_version;
  i64 available_kv_bytes = 0;   // KV pool bytes per GPU
  i64 kv_pool_bytes = 0;        // bytes the pool actually allocates (whole blocks/tokens)
  i64 block_size = 0;           // tokens per page (vLLM block_size after hybrid adjustment)
  i64 page_bytes = 0;           // vLLM per-layer page; SGLang/TRT bytes per token
  i64 group_size = 0;           // vLLM layers per KV cache group (tensors)
  i64 num_groups = 0;           // vLLM KV cache groups
  i64 padding_layers = 0;       // vLLM padding layers added to equalise groups
  i64 num_gpu_blocks = 0;       // vLLM "# GPU blocks"; TRT blocks
  i64 kv_cache_tokens = 0;      // vLLM "GPU KV cache size: N tokens"
  double max_concurrency = 0;   // vLLM "Maximum concurrency for L tokens per request: X"
  i64 max_total_num_tokens = 0; // SGLang (with the hybrid SWA pool: full_layer_tokens)
  i64 cell_size = 0;            // SGLang bytes per token (all layers of the rank; hybrid SWA: full + ratio x SWA layers)
  i64 swa_layer_tokens = 0;     // SGLang hybrid SWA pool: tokens of the sliding-window layers' pool (0: no such pool)
  i64 max_tokens = 0;           // TensorRT-LLM tokens in the paged KV cache
  // llama.cpp
  i64 n_ctx = 0, n_ctx_seq = 0, kv_cells = 0, swa_cells = 0;  // swa_cells: per stream, as llama.cpp prints them
  i64 kv_streams = 1;           // llama.cpp: 1 with a unified cache, else one stream per slot
  i64 kv_bytes = 0, k_bytes = 0, v_bytes = 0, state_bytes = 0;
  i64 gpu_kv_bytes = 0;         // part of kv_bytes on the GPU (n_gpu_layers; 0 with --no-kv-offload)
  i64 host_weight_bytes = 0;    // weights in host memory per rank (--cpu-offload-gb, vLLM's CPU LoRA cache;
                                // llama.cpp: also the input layer and the layers -ngl leaves on the CPU)
  i64 host_input_bytes = 0;     // llama.cpp: the input layer's part of that (token embedding, read a row per token)
  // llama.cpp: weights the CPU computes with (the layers -ngl leaves on the CPU, --n-cpu-moe experts, -ot =CPU tensors),
  // and of those the routed experts (a step reads only the experts its tokens touch): the performance model's host reads
  i64 cpu_weight_bytes = 0, cpu_expert_bytes = 0;
  i64 disk_kv_bytes = 0, disk_kv_tokens = 0;  // the disk KV tier per rank (LMCache local disk)
  i64 host_kv_bytes = 0, host_kv_tokens = 0;  // the host KV tier per rank (vLLM --kv-offloading-size, SGLang HiCache, llama.cpp -nkvo)
  std::vector<TierTerm> tier_terms;  // what the host and disk tiers hold, term by term (host_weight_bytes etc. are their sums)
  i64 spec_extra_tokens = 0;    // KV slots a request holds beyond its tokens for speculative decoding (vLLM lookahead, TRT drafts)
  i64 gpu_layers = 0, total_layers = 0;  // layers offloaded (after --fit) of the repeating layers + output
  bool startup_ok = true;       // one max-length request fits
  i64 estimated_max_model_len = 0;  // when not: the longest that would (vLLM estimate_max_model_len; llama.cpp -c)
  i64 n_cpu_moe = 0;                // llama.cpp: layers whose MoE experts are in host memory (--n-cpu-moe, or chosen by --fit)
  i64 suggested_gpu_layers = -1;    // llama.cpp, when it does not start: the most -ngl layers that would (-1: none)
  std::vector<std::string> notes;
};

/// What one GPU of a llama.cpp deployment holds (llama.cpp splits a model over several GPUs; other engines' ranks
/// are in the budget of the most loaded one).
struct DeviceBudget {
  i64 index = 0;                 // the GPU (0-based, as CUDA numbers them)
  i64 layers = 0;                // repeating layers of the model on it
  bool output_layer = false;     // holds the output layer (lm_head)
  i64 draft_layers = 0;          // repeating layers of the draft model on it
  i64 weights = 0, kv = 0, compute = 0, draft_weights = 0, draft_kv = 0, draft_compute = 0, lora = 0, mmproj = 0, context = 0, extra = 0;
  i64 total = 0;                 // the sum
};

/// The engine's own name for its cap on running requests (vLLM max_num_seqs, SGLang max_running_requests,
/// TensorRT-LLM max_batch_size, llama.cpp parallel) and on a request's tokens (max_model_len, context_length,
/// max_seq_len, ctx_size): a cell's limiting term says it as the engine does.
const char* seqs_limit_name(EngineKind kind);
const char* length_limit_name(EngineKind kind);
/// The flag that raises the running-request cap (--max-num-seqs, --max-running-requests, --max_batch_size, -np).
const char* seqs_limit_flag(EngineKind kind);

/// The result of one (tokens per request, concurrency) point.
struct Cell {
  i64 tokens = 0;               // tokens per request (prompt + output)
  i64 concurrency = 0;          // requests (whole deployment; split across data-parallel replicas)
  i64 kv_bytes = 0;             // KV the requests occupy on the most loaded GPU (whole pages)
  i64 total_bytes = 0;          // everything on that GPU: fixed terms + kv_bytes
  i64 headroom_bytes = 0;       // pool bytes left (negative: short by)
  bool fits = false;
  std::string limiting;         // "fits", or the term that limits: kv_cache, the engine's seqs or length cap (seqs_limit_name), weights, ...
  i64 units_needed = 0, units_available = 0;  // blocks / tokens / slots
};

class Planner {
 public:
  explicit Planner(PlanSpec spec);

  const PlanSpec& spec() const { return spec_; }
  /// Budget of the most loaded GPU (the stage with the smallest KV pool).
  const std::vector<BudgetTerm>& budget() const { return budget_; }
  /// Bytes of the named budget term on the most loaded GPU (0 when the plan has no such term).
  i64 budget_bytes(const std::string& name) const;
  const EngineReport& engine() const { return report_; }
  i64 total_bytes() const { return total_; }
  i64 fixed_bytes() const { return fixed_; }  // every non-KV term on the most loaded GPU
  i64 critical_stage() const { return stage_; }
  const std::vector<CacheGroup>& groups() const { return groups_; }
  /// Tokens one block of a vLLM group holds (its block size, raised where its page was smaller, x decode-context ranks).
  i64 group_block_tokens(const CacheGroup& g) const;
  const ModelSpec& rank_model() const { return rank_model_; }
  /// llama.cpp: every GPU's budget (one entry per GPU of the deployment); empty for the other engines.
  const std::vector<DeviceBudget>& devices() const { return devices_; }

  /// Pool units (blocks, tokens or slots) one request of `tokens` needs, excluding a shared prefix.
  i64 units_per_request(i64 tokens, i64 shared_prefix = 0) const;
  /// Units the shared prefix holds once for all requests.
  i64 shared_units(i64 shared_prefix) const;
  /// Bytes of one pool unit on the most loaded GPU.
  i64 unit_bytes() const { return unit_bytes_; }
  i64 pool_units() const { return pool_units_; }
  i64 max_seqs() const { return max_seqs_; }  // per replica
  i64 max_len() const { return max_len_; }

  /// Does `concurrency` requests of `tokens` tokens fit? (requests split across dp replicas)
  Cell cell(i64 tokens, i64 concurrency, i64 shared_prefix = 0) const;
  /// Largest concurrency that fits at `tokens` (0 if none).
  i64 max_concurrency(i64 tokens, i64 shared_prefix = 0) const;
  /// Longest tokens per request that fit at `concurrency` (0 if none).
  i64 max_context(i64 concurrency, i64 shared_prefix = 0) const;

 private:
  void build_vllm(const ModelSpec& rank, i64 available);
  void build_sglang(const ModelSpec& rank, i64 available, i64 draft_cell = 0);
  void build_trtllm(const ModelSpec& rank, i64 available);
  void build_generic(const ModelSpec& rank, i64 available);
  void build_llamacpp();
  i64 vllm_blocks_for(i64 tokens) const;

  PlanSpec spec_;
  std::vector<BudgetTerm> budget_;
  EngineReport report_;
  std::vector<CacheGroup> groups_;
  std::vector<DeviceBudget> devices_;
  ModelSpec rank_model_;
  i64 total_ = 0, fixed_ = 0, stage_ = 0;
  i64 crit_kv_ = 0;  // llama.cpp: the KV on the fullest GPU
  i64 unit_bytes_ = 0, pool_units_ = 0, max_seqs_ = 0, max_len_ = 0;
  i64 reserved_units_ = 0;  // pool units no request gets: vLLM V1's null block (block_pool.py null_block)
  i64 request_units() const { return pool_units_ - reserved_units_; }  // the pool units requests can hold
  i64 unit_tokens_ = 1;  // tokens per unit (block size / page size / 1)
  bool slots_ = false;   // llama.cpp: one unit per request up to n_ctx_seq tokens
  std::string startup_limit_;  // a limit that stops any request (weights, headroom)
  i64 kv_deficit_ = 0;  // the serving engines' KV budget below zero (the weights and the rest past the memory), <= 0
  i64 swa_window_ = 0, swa_units_ = 0;  // SGLang hybrid SWA pool: the widest window and the SWA pool's pages
};

/// Activation peak of a profiling forward pass over `tokens` tokens on one rank:
/// tokens x 4 x I_eff x act_bytes, I_eff the widest MLP of the rank (dense width, or
/// experts_per_token x expert width + shared width for MoE), plus max_num_seqs x logits_vocab x 4 B of fp32
/// logits (vLLM V1 gathers the full vocabulary on every rank; other engines hold vocab / tp).
/// GPU bytes of LoRA buffers for `slots` adapters of rank `lora_rank` on one rank (vLLM's stacked A/B per
/// projection): slots x rank x sum over layers (qkv: 3 x hidden + q/k/v outputs; o: its input + hidden;
/// gate/up: 2 x hidden + 2 x MLP width; down: MLP width + hidden) x dtype bytes. MoE experts and Mamba
/// mixers carry none here.
i64 lora_buffer_bytes(const ModelSpec& rank, i64 slots, i64 lora_rank);
i64 activation_peak_bytes(const ModelSpec& rank, i64 tokens, i64 max_seqs, ElemFormat act, i64 logits_vocab);

/// llama.cpp's device for each of n_layer + 1 layers (the last is the output layer): -1 for the CPU, else the
/// index into `split` (one proportion per device). llama_model::load_tensors: split points are the cumulative
/// proportions / their sum; the offloaded layers are i_gpu_start .. i_gpu_start + min(ngl, n_layer + 1) - 1 with
/// i_gpu_start = max(n_layer - ngl, 0) (read at 0034230), or max(n_layer + 1 - ngl, 0) with the output layer offloaded
/// first (#18148; read at de3ff81);
/// layer il goes to the first device whose split point exceeds (il - i_gpu_start) / offloaded (float, as llama.cpp).
/// An empty or all-zero split is equal shares. The token embeddings stay on the CPU.
std::vector<int> llamacpp_layer_devices(i64 n_layer, i64 n_gpu_layers, const std::vector<double>& split, bool output_first);

/// What llama.cpp's own fitting (--fit on, -ngl not given: llama_params_fit, src/llama.cpp) chooses for a
/// deployment at its context: the layers it keeps on the GPUs, the MoE layers whose experts it moves to host memory,
/// and whether every GPU then keeps --fit-target (`margin_bytes`) free. The deployment's -ngl is ignored (that is the
/// question); a --tensor-split, -ot or --n-cpu-moe it gives stops llama.cpp from moving weights, as in llama.cpp.
struct LlamaFit {
  i64 n_gpu_layers = 0, total_layers = 0, n_cpu_moe = 0, n_ctx = 0, margin_bytes = 0, fullest_gpu_bytes = 0;
  bool fits = false;
};
LlamaFit llamacpp_fit(const PlanSpec& s);

}  // namespace kvplan
