// Paged decode attention, CUDA cores, FlashInfer-style: one CTA (256 threads) per (chunk of a
// sequence, KV head), serving every query head of that KV head's GQA group so each K/V row is read
// from memory once. K/V tiles of the chunk stream through a 3-stage cp.async pipeline (16-byte
// copies, zero-filled past the sequence end so NaN-filled unused slots are never read); scores,
// online softmax (running max and denominator, log2 domain) and the P.V accumulation are fp32.
// Long sequences are split across CTAs (split-KV, see split_plan.cuh); each chunk then writes its
// normalised partial output and log-sum-exp, and merge_kernel combines them.
#include <cuda_runtime.h>

#include <cmath>

#include "decode_attention.cuh"
#include "kernel_common.cuh"
#include "split_plan.cuh"

namespace kvplan::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kStages = 3;    // K/V tiles in flight per CTA
constexpr int kOutVec = 8;    // output dims one thread accumulates (one 16-byte V read for 16-bit caches)
constexpr float kLog2e = 1.4426950408889634f;

template <class S>
struct Traits {
  static constexpr int HD = S::head_dim;
  static constexpr int PS = S::page_size;
  static constexpr int EB = S::elem_bytes;
  static constexpr KvDtype DT = S::dtype;
  static constexpr int ROW_BYTES = HD * EB;   // one token of one KV head
  static constexpr int CPR = ROW_BYTES / 16;  // 16-byte chunks per row
  static constexpr int EPC = 16 / EB;         // elements per 16-byte chunk
  // Tokens per pipeline stage: ~8 KiB of K (and as much V) per stage, at most 64 tokens.
  static constexpr int TILE = 8192 / ROW_BYTES < 64 ? 8192 / ROW_BYTES : 64;
  // Shared rows padded by 16 bytes: a warp reading 32 different rows hits distinct bank groups.
  static constexpr int ROW_STRIDE = ROW_BYTES + 16;
  static constexpr int TILE_BYTES = TILE * ROW_STRIDE;
  static constexpr int KV_SMEM = kStages * 2 * TILE_BYTES;
  static constexpr int LOADS = TILE * CPR / kThreads;        // 16-byte copies per thread per tile (K; V alike)
  static constexpr int MAX_HEADS = kThreads * kOutVec / HD;  // query heads whose outputs fit one CTA
  static_assert(TILE * CPR % kThreads == 0, "a tile's copies divide evenly among the threads");
  static_assert((TILE & (TILE - 1)) == 0, "tile is a power of two");
  static_assert(KV_SMEM >= kThreads * kOutVec * 4, "the tile buffers hold the final cross-thread reduction");
};

/// Dynamic shared memory of the decode kernel serving `heads` query heads.
template <class S>
constexpr int decode_smem_bytes(int heads) {
  using T = Traits<S>;
  return T::KV_SMEM + heads * T::HD * 4 + heads * T::TILE * 4 + 3 * heads * 4;
}

/// Eight elements of a V row at `p` (16 bytes for 16-bit caches, 8 for fp8) as floats.
template <KvDtype DT>
__device__ __forceinline__ void load_v8(const unsigned char* p, float (&f)[kOutVec]) {
  if constexpr (kv_dtype_bytes(DT) == 2) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
    words_to_float<DT>(w, f);
  } else {
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    const uint32_t w[2] = {raw.x, raw.y};
    words_to_float<DT>(w, f);
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads, 4) decode_kernel(const DecodeArgs a) {
  using T = Traits<S>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int nh_max = a.plan.heads_per_cta;
  unsigned char* kv_s = smem;                                   // [kStages][K,V][TILE][ROW_STRIDE]
  float* q_s = reinterpret_cast<float*>(smem + T::KV_SMEM);     // [heads][HD], pre-scaled
  float* p_s = q_s + nh_max * T::HD;                            // [heads][TILE] scores, then probabilities
  float* m_s = p_s + nh_max * T::TILE;                          // running max (log2 units)
  float* d_s = m_s + nh_max;                                    // running denominator
  float* alpha_s = d_s + nh_max;                                // this tile's rescale of the old state

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int kvh = a.layout.kv_heads;
  const int ctas_per_chunk = kvh * a.plan.head_groups;
  const int chunk = static_cast<int>(blockIdx.x) / ctas_per_chunk;
  const int within = static_cast<int>(blockIdx.x) % ctas_per_chunk;
  const int kv_head = within / a.plan.head_groups;
  const int group = a.num_q_heads / kvh;
  const int h_first = (within % a.plan.head_groups) * nh_max;
  const int nh = min(nh_max, group - h_first);  // query heads this CTA serves
  const int qh0 = kv_head * group + h_first;    // the first of them
  if (nh <= 0) return;                          // uniform for the CTA; a plan never makes one

  const int seq = find_seq(a.chunk_indptr, a.num_seqs, chunk);
  const int c0 = __ldg(a.chunk_indptr + seq);
  const int n_chunks = __ldg(a.chunk_indptr + seq + 1) - c0;
  const int page_begin = __ldg(a.page_indptr + seq);
  const int pages = __ldg(a.page_indptr + seq + 1) - page_begin;
  const ChunkRange cr = chunk_range<T::PS>(pages, __ldg(a.last_page_len + seq), chunk - c0, a.plan.pages_per_chunk);
  const int ntok = static_cast<int>(cr.end - cr.begin);
  const int ntiles = (ntok + T::TILE - 1) / T::TILE;

  // q of the served heads, scaled so scores come out in log2 units (fp8: K's scale folded in too)
  const float qscale = a.sm_scale * kLog2e * (T::DT == KvDtype::fp8_e4m3 ? a.k_scale : 1.0f);
  const float4* q_g = reinterpret_cast<const float4*>(a.q + (int64_t(seq) * a.num_q_heads + qh0) * T::HD);
  for (int i = tid; i < nh * T::HD / 4; i += kThreads) {
    float4 v = q_g[i];
    v.x *= qscale;
    v.y *= qscale;
    v.z *= qscale;
    v.w *= qscale;
    reinterpret_cast<float4*>(q_s)[i] = v;
  }
  for (int h = tid; h < nh; h += kThreads) {
    m_s[h] = -INFINITY;
    d_s[h] = 0.0f;
  }

  // ---- K/V tile copies: this thread always copies rows/chunks (tid + l * kThreads) of a tile ----
  const unsigned char* pool = static_cast<const unsigned char*>(a.pool);
  const int64_t row_stride = int64_t(kvh) * T::ROW_BYTES;  // slot -> next slot
  const int64_t kv_stride = int64_t(T::PS) * row_stride;   // K page -> V page of the same block
  const unsigned char* head_base = pool + int64_t(kv_head) * T::ROW_BYTES;
  const int32_t* pidx = a.page_indices + page_begin;

  auto tile_pages = [&](int tile, int (&pg)[T::LOADS]) {  // page ids (-1: past the chunk)
#pragma unroll
    for (int l = 0; l < T::LOADS; ++l) {
      const int r = (tid + l * kThreads) / T::CPR;
      const int64_t tok = cr.begin + int64_t(tile) * T::TILE + r;
      pg[l] = tok < cr.end ? __ldg(pidx + tok / T::PS) : -1;
    }
  };
  auto issue = [&](int tile, const int (&pg)[T::LOADS]) {
    unsigned char* ks = kv_s + (tile % kStages) * 2 * T::TILE_BYTES;
    unsigned char* vs = ks + T::TILE_BYTES;
#pragma unroll
    for (int l = 0; l < T::LOADS; ++l) {
      const int idx = tid + l * kThreads;
      const int r = idx / T::CPR, c = idx % T::CPR;
      const int64_t tok = cr.begin + int64_t(tile) * T::TILE + r;
      const int slot = static_cast<int>(tok % T::PS);
      const bool ok = pg[l] >= 0;
      const unsigned char* src = head_base + int64_t(ok ? pg[l] : 0) * 2 * kv_stride + slot * row_stride + c * 16;
      cp_async_16(ks + r * T::ROW_STRIDE + c * 16, ok ? src : pool, ok);
      cp_async_16(vs + r * T::ROW_STRIDE + c * 16, ok ? src + kv_stride : pool, ok);
    }
  };

  int pg[T::LOADS];
#pragma unroll
  for (int l = 0; l < T::LOADS; ++l) pg[l] = -1;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ntiles) {
      tile_pages(s, pg);
      issue(s, pg);
    }
    cp_async_commit();
  }
  if (kStages - 1 < ntiles) tile_pages(kStages - 1, pg);

  // ---- P.V ownership: thread -> (query head, 8 output dims, token subset z) ----
  constexpr int dchunks = T::HD / kOutVec;
  const int slots = nh * dchunks;             // <= kThreads since nh <= MAX_HEADS
  const int zsplit = max(1, kThreads / slots);
  const int o_slot = tid % slots, o_z = tid / slots;
  const bool o_active = o_z < zsplit;
  const int o_head = o_slot / dchunks, o_d0 = (o_slot % dchunks) * kOutVec;
  float o[kOutVec];
#pragma unroll
  for (int i = 0; i < kOutVec; ++i) o[i] = 0.0f;

  for (int it = 0; it < ntiles; ++it) {
    cp_async_wait<kStages - 2>();  // tile `it` has landed (for this thread's copies) ...
    __syncthreads();               // ... for every thread's, and tile it-1 is fully consumed
    {
      const int nt = it + kStages - 1;  // refill the stage tile it-1 used
      if (nt < ntiles) issue(nt, pg);
      cp_async_commit();
      if (nt + 1 < ntiles) tile_pages(nt + 1, pg);  // page ids for the next refill, loaded during the math
    }
    const unsigned char* ks = kv_s + (it % kStages) * 2 * T::TILE_BYTES;
    const unsigned char* vs = ks + T::TILE_BYTES;
    const int valid = min(T::TILE, ntok - it * T::TILE);

    // 1. scores s[h][r] = q_h . k_r (log2 units), -inf past the chunk
    for (int j = tid; j < nh * T::TILE; j += kThreads) {
      const int h = j / T::TILE, r = j % T::TILE;
      float s = -INFINITY;
      if (r < valid) {
        const float* qh = q_s + h * T::HD;
        const unsigned char* krow = ks + r * T::ROW_STRIDE;
        float acc0 = 0.0f, acc1 = 0.0f;
#pragma unroll
        for (int c = 0; c < T::CPR; ++c) {
          const uint4 raw = *reinterpret_cast<const uint4*>(krow + c * 16);
          const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
          float kf[T::EPC];
          words_to_float<T::DT>(w, kf);
#pragma unroll
          for (int e = 0; e < T::EPC; e += 4) {
            const float4 qq = *reinterpret_cast<const float4*>(qh + c * T::EPC + e);
            acc0 = fmaf(qq.x, kf[e], acc0);
            acc1 = fmaf(qq.y, kf[e + 1], acc1);
            acc0 = fmaf(qq.z, kf[e + 2], acc0);
            acc1 = fmaf(qq.w, kf[e + 3], acc1);
          }
        }
        s = acc0 + acc1;
      }
      p_s[j] = s;
    }
    __syncthreads();

    // 2. online softmax, one warp per head: m' = max(m, max_r s), p = 2^(s - m'), d' = d 2^(m - m') + sum p
    for (int h = warp; h < nh; h += kWarps) {
      float* row = p_s + h * T::TILE;
      const float m_old = m_s[h];
      float mx = -INFINITY;
      for (int r = lane; r < T::TILE; r += 32) mx = fmaxf(mx, row[r]);
      mx = warp_max(mx);
      const float m_new = fmaxf(m_old, mx);
      const float base = m_new == -INFINITY ? 0.0f : m_new;  // all masked so far: keep 2^(-inf) = 0
      float sum = 0.0f;
      for (int r = lane; r < T::TILE; r += 32) {
        const float p = exp2f(row[r] - base);
        row[r] = p;
        sum += p;
      }
      sum = warp_sum(sum);
      __syncwarp();
      if (lane == 0) {
        const float alpha = exp2f(m_old - base);
        alpha_s[h] = alpha;
        d_s[h] = d_s[h] * alpha + sum;
        m_s[h] = m_new;
      }
    }
    __syncthreads();

    // 3. o = o * alpha + sum_r p_r v_r over this thread's token subset
    if (o_active) {
      const float alpha = alpha_s[o_head];
#pragma unroll
      for (int i = 0; i < kOutVec; ++i) o[i] *= alpha;
      const float* prow = p_s + o_head * T::TILE;
      const unsigned char* vcol = vs + o_d0 * T::EB;
      for (int r = o_z; r < valid; r += zsplit) {
        const float p = prow[r];
        float vf[kOutVec];
        load_v8<T::DT>(vcol + r * T::ROW_STRIDE, vf);
#pragma unroll
        for (int i = 0; i < kOutVec; ++i) o[i] = fmaf(p, vf[i], o[i]);
      }
    }
  }
  __syncthreads();  // every P.V read of the tile buffers is done; reuse them for the reduction

  if (zsplit > 1) {  // uniform across the CTA
    float* red = reinterpret_cast<float*>(kv_s);  // [zsplit - 1][slots][kOutVec]
    if (o_active && o_z > 0) {
#pragma unroll
      for (int i = 0; i < kOutVec; ++i) red[((o_z - 1) * slots + o_slot) * kOutVec + i] = o[i];
    }
    __syncthreads();
    if (o_z == 0) {
      for (int z = 1; z < zsplit; ++z) {
#pragma unroll
        for (int i = 0; i < kOutVec; ++i) o[i] += red[((z - 1) * slots + o_slot) * kOutVec + i];
      }
    }
  }

  if (o_z == 0) {
    const float dsum = d_s[o_head];
    const float scale = (dsum > 0.0f ? 1.0f / dsum : 0.0f) * (T::DT == KvDtype::fp8_e4m3 ? a.v_scale : 1.0f);
    const int qh = qh0 + o_head;
    float* dst;
    if (n_chunks == 1) {
      dst = a.out + (int64_t(seq) * a.num_q_heads + qh) * T::HD + o_d0;
    } else {
      dst = a.tmp_out + (int64_t(chunk) * a.num_q_heads + qh) * T::HD + o_d0;
      if (o_d0 == 0) a.tmp_lse[int64_t(chunk) * a.num_q_heads + qh] = dsum > 0.0f ? m_s[o_head] + log2f(dsum) : -INFINITY;
    }
    reinterpret_cast<float4*>(dst)[0] = make_float4(o[0] * scale, o[1] * scale, o[2] * scale, o[3] * scale);
    reinterpret_cast<float4*>(dst)[1] = make_float4(o[4] * scale, o[5] * scale, o[6] * scale, o[7] * scale);
  }
}

/// Combines a split sequence's chunks, one warp per (sequence, query head):
/// out = sum_c 2^(lse_c - M) o_c / sum_c 2^(lse_c - M), M = max_c lse_c.
__global__ void __launch_bounds__(kThreads) merge_kernel(const DecodeArgs a) {
  const int64_t w = (int64_t(blockIdx.x) * kThreads + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (w >= int64_t(a.num_seqs) * a.num_q_heads) return;  // uniform per warp
  const int hq = a.num_q_heads, hd = a.layout.head_dim;
  const int seq = static_cast<int>(w / hq), qh = static_cast<int>(w % hq);
  const int c0 = __ldg(a.chunk_indptr + seq);
  const int n = __ldg(a.chunk_indptr + seq + 1) - c0;
  if (n <= 1) return;  // the decode kernel wrote this output directly
  float mx = -INFINITY;
  for (int c = lane; c < n; c += 32) mx = fmaxf(mx, a.tmp_lse[int64_t(c0 + c) * hq + qh]);
  mx = warp_max(mx);
  float4* dst = reinterpret_cast<float4*>(a.out + (int64_t(seq) * hq + qh) * hd);
  for (int d4 = lane; d4 < hd / 4; d4 += 32) {
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float wsum = 0.0f;
    for (int c = 0; c < n; ++c) {
      const int64_t row = int64_t(c0 + c) * hq + qh;
      const float wgt = mx == -INFINITY ? 0.0f : exp2f(a.tmp_lse[row] - mx);
      const float4 v = reinterpret_cast<const float4*>(a.tmp_out + row * hd)[d4];
      acc.x = fmaf(wgt, v.x, acc.x);
      acc.y = fmaf(wgt, v.y, acc.y);
      acc.z = fmaf(wgt, v.z, acc.z);
      acc.w = fmaf(wgt, v.w, acc.w);
      wsum += wgt;
    }
    const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
    dst[d4] = make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
  }
}

template <class S>
cudaError_t set_smem_limit(int smem) {
  return cudaFuncSetAttribute(decode_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
}

}  // namespace

cudaError_t plan_decode(const PagedKvLayout& layout, int num_q_heads, const int32_t* host_page_indptr, int num_seqs,
                        int sm_count, SplitPlan* plan, int32_t* host_chunk_indptr) {
  if (plan == nullptr || host_page_indptr == nullptr || host_chunk_indptr == nullptr || sm_count <= 0 ||
      layout.kv_heads <= 0 || num_q_heads <= 0 || num_q_heads % layout.kv_heads != 0)
    return cudaErrorInvalidValue;
  return dispatch_shape(layout, [&](auto shape) -> cudaError_t {
    using S = decltype(shape);
    using T = Traits<S>;
    const int group = num_q_heads / layout.kv_heads;
    const int head_groups = (group + T::MAX_HEADS - 1) / T::MAX_HEADS;
    const int heads = (group + head_groups - 1) / head_groups;
    const int smem = decode_smem_bytes<S>(heads);
    cudaError_t e = set_smem_limit<S>(smem);
    if (e != cudaSuccess) return e;
    int per_sm = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, decode_kernel<S>, kThreads, smem);
    if (e != cudaSuccess) return e;
    if (per_sm <= 0) return cudaErrorInvalidConfiguration;
    plan->heads_per_cta = heads;
    plan->head_groups = head_groups;
    plan->ctas_per_sm = per_sm;
    return plan_chunks(host_page_indptr, num_seqs, S::page_size, int64_t(layout.kv_heads) * head_groups,
                       int64_t(sm_count) * per_sm, plan, host_chunk_indptr);
  });
}

cudaError_t launch_decode(const DecodeArgs& a, cudaStream_t stream) {
  const int kvh = a.layout.kv_heads;
  if (a.num_seqs <= 0 || kvh <= 0 || a.num_q_heads <= 0 || a.num_q_heads % kvh != 0 || a.pool == nullptr ||
      a.q == nullptr || a.out == nullptr || a.page_indptr == nullptr || a.page_indices == nullptr ||
      a.last_page_len == nullptr || a.chunk_indptr == nullptr || a.plan.pages_per_chunk <= 0 ||
      a.plan.total_chunks < a.num_seqs || a.plan.heads_per_cta <= 0 || a.plan.head_groups <= 0 ||
      int64_t(a.plan.heads_per_cta) * a.plan.head_groups < a.num_q_heads / kvh)
    return cudaErrorInvalidValue;
  if (a.plan.split(a.num_seqs) && (a.tmp_out == nullptr || a.tmp_lse == nullptr)) return cudaErrorInvalidValue;
  return dispatch_shape(a.layout, [&](auto shape) -> cudaError_t {
    using S = decltype(shape);
    using T = Traits<S>;
    if (a.plan.heads_per_cta > T::MAX_HEADS) return cudaErrorInvalidValue;
    const int smem = decode_smem_bytes<S>(a.plan.heads_per_cta);
    cudaError_t e = set_smem_limit<S>(smem);
    if (e != cudaSuccess) return e;
    const int64_t grid = int64_t(a.plan.total_chunks) * kvh * a.plan.head_groups;
    if (grid > INT32_MAX) return cudaErrorInvalidConfiguration;
    decode_kernel<S><<<static_cast<unsigned>(grid), kThreads, smem, stream>>>(a);
    e = cudaGetLastError();
    if (e != cudaSuccess || !a.plan.split(a.num_seqs)) return e;
    const int64_t warps = int64_t(a.num_seqs) * a.num_q_heads;
    const int64_t blocks = (warps + kWarps - 1) / kWarps;
    if (blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
    merge_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
    return cudaGetLastError();
  });
}

cudaError_t launch_decode_invalid_config(const DecodeArgs& a, cudaStream_t stream) {
  return dispatch_shape(a.layout, [&](auto shape) -> cudaError_t {
    using S = decltype(shape);
    decode_kernel<S><<<1, 2048, 0, stream>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace kvplan::kernels
