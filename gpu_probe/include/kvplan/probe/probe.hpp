// The probe: allocates the KV pool the plan predicts, fills it through a block allocator, runs
// decode attention while sequences grow, finish and hand their pages back, checks the numbers
// against a double-precision reference, and measures memory, bandwidth ceilings and time.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kvplan/probe/backend.hpp"

namespace kvplan::probe {

/// Free-list block allocator over block ids [0, num_blocks). Ids are handed out in a random
/// permutation (no repeats, so caches cannot flatter gathers) or in order (the contiguous control).
class BlockAllocator {
 public:
  BlockAllocator(i64 num_blocks, bool shuffled, std::uint64_t seed);
  /// Pages for `tokens` tokens (paging.hpp pages_for_tokens); empty when not enough are free.
  std::vector<std::int32_t> allocate(i64 tokens, int page_size);
  /// One more page (a sequence crossing a page boundary); -1 when none is free.
  std::int32_t allocate_one();
  void release(const std::vector<std::int32_t>& pages);
  i64 free_blocks() const { return static_cast<i64>(free_.size()); }
  i64 used_blocks() const { return total_ - free_blocks(); }
  i64 reused() const { return reused_; }  // allocations that got a block some sequence had released

 private:
  i64 total_;
  std::vector<std::int32_t> free_;
  std::vector<bool> ever_used_;
  i64 reused_ = 0;
};

/// float <-> cache element conversions shared by the CPU backend and the reference.
std::uint16_t to_bf16(float x);
float from_bf16(std::uint16_t x);
std::uint16_t to_f16(float x);
float from_f16(std::uint16_t x);
std::uint8_t to_fp8_e4m3(float x);  // saturating to +-448, round to nearest even
float from_fp8_e4m3(std::uint8_t x);
std::uint8_t to_fp8_e5m2(float x);  // saturating to +-57344, round to nearest even
float from_fp8_e5m2(std::uint8_t x);
/// The value a float becomes after storing in a plain element type `d` with `scale` (fp8: x / scale,
/// read back x scale). Block types (q8_0, q4_0) quantise whole rows: use quantise_row.
float quantise(float x, CacheDtype d, float scale);
/// Stores a row of n floats (n a multiple of 32 for q8_0/q4_0) as kernels::kv_row_bytes(d, n) bytes at `out`
/// (fp8: x / scale; q8_0/q4_0: llama.cpp's quantize_row_q8_0_ref / quantize_row_q4_0_ref).
void encode_row(const float* x, int n, CacheDtype d, float scale, std::uint8_t* out);
/// Reads a stored row back as floats (the portable path; the CPU backend's SIMD paths must agree).
void decode_row(const std::uint8_t* in, int n, CacheDtype d, float scale, float* out);
/// encode_row then decode_row: the values the kernels read for a row written as `x`.
void quantise_row(const float* x, int n, CacheDtype d, float scale, float* out);

struct ProbeCase {
  int num_seqs = 64;
  i64 context = 8192;
  CacheDtype dtype = CacheDtype::bf16;
  bool shuffled = true;  // random page permutation (false: contiguous control)
};

struct ProbeOptions {
  PoolSpec shape;             // heads, head_dim, page size (dtype and num_blocks set per case)
  std::vector<ProbeCase> cases;
  int live_steps = 64;        // decode steps of the live mode
  double seconds_per_timing = 2.0;
  double time_cap_s = 300;    // hard cap for the whole run
  std::uint64_t seed = 42;
  int check_pairs = 16;       // (sequence, head) pairs checked against the double reference
  double bandwidth_efficiency = 0.8;  // the planner's default, for the predicted time
  double datasheet_bandwidth = 0;     // bytes/s; 0: use the measured contiguous ceiling
};

struct CaseResult {
  ProbeCase c;
  i64 blocks = 0;
  i64 predicted_pool_bytes = 0;  // the planner's arithmetic: blocks x page bytes
  i64 ledger_pool_bytes = 0;     // what the backend allocated for the pool
  TimingStats timing;
  double bytes_moved = 0;        // KV bytes read + q and out
  double flops = 0;
  double achieved_bytes_per_s = 0;
  double fraction_of_contiguous = 0, fraction_of_paged = 0;
  double max_abs_err = 0, max_rel_err = 0;
  int pairs_checked = 0;
  bool finite = true;            // no NaN in the output: NaN-filled unused slots were never read
  double predicted_s = 0, predicted_error = 0;  // planner's bytes / (bandwidth x efficiency)
};

struct LiveResult {
  int steps = 0;
  i64 sequences_started = 0, sequences_finished = 0;
  i64 peak_blocks_used = 0;
  i64 blocks_reused = 0;
  double internal_fragmentation = 0;  // unused token slots in allocated pages / allocated slots (mean over steps)
  double max_abs_err = 0;
  TimingStats step_timing;
};

struct CapacityResult {
  i64 free_bytes = 0;
  i64 max_blocks = 0;             // largest pool that allocates (never asking for more than is free)
  i64 max_concurrency = 0;        // at the first case's context
};

struct ProbeResult {
  DeviceInfo device;
  TimingStats contiguous, paged;
  double contiguous_bytes_per_s = 0, paged_bytes_per_s = 0;
  std::vector<CaseResult> cases;
  LiveResult live;
  CapacityResult capacity;
  std::vector<LedgerEntry> ledger_at_peak;
  i64 free_before_pool = 0, free_after_pool = 0;
  bool time_capped = false;
};

/// Runs every case, the live mode and the capacity search. `progress` gets one-line updates.
ProbeResult run_probe(Backend& b, const ProbeOptions& o, const std::function<void(const std::string&)>& progress);

/// Double-precision decode attention for sequence s, q head h, reading the same quantised values the
/// backend stored (the reference the kernels are checked against). `kv` holds the float K and V each
/// token was appended with, per token index of the sequence.
std::vector<double> reference_attention(const std::vector<float>& q_row, const std::vector<float>& k_tokens,
                                        const std::vector<float>& v_tokens, i64 tokens, int kv_head, const PoolSpec& spec,
                                        const Fp8Scales& scales);

}  // namespace kvplan::probe
