// Model transforms (see transform.hpp).
#include "kvplan/core/transform.hpp"

namespace kvplan {

void expand_mla(ModelSpec& m) {
  for (Layer& l : m.layers) {
    if (l.kv != KvKind::mla_latent) continue;
    l.kv = KvKind::mla_expanded;
    l.kv_heads = l.q_heads;
    l.k_head_dim = add(l.qk_nope_head_dim, l.qk_rope_head_dim);
    // v_head_dim already holds the per-head V width
  }
}

void disable_windows(ModelSpec& m) {
  for (Layer& l : m.layers) {
    if (l.kv == KvKind::sliding || l.kv == KvKind::chunked) {
      l.kv = KvKind::full;
      l.window = 0;
    }
  }
}

}  // namespace kvplan
