// The arithmetic of pages: tokens -> pages -> bytes. One place, used by the planner's engine rules
// and by the probe's block allocator, so the plan and the allocation cannot drift apart.
#pragma once

#include "kvplan/core/checked.hpp"

namespace kvplan {

/// Pages a sequence of `tokens` occupies with `page_tokens` tokens per page: ceil(tokens / page_tokens).
inline i64 pages_for_tokens(i64 tokens, i64 page_tokens) { return tokens <= 0 ? 0 : ceil_div(tokens, page_tokens); }

/// Bytes of `pages` pages of `page_bytes` each (checked).
inline i64 pages_bytes(i64 pages, i64 page_bytes) { return mul(pages, page_bytes, "page bytes"); }

/// Pages that fit in `bytes`: floor(bytes / page_bytes) (0 when bytes <= 0).
inline i64 pages_in_bytes(i64 bytes, i64 page_bytes) { return bytes <= 0 ? 0 : bytes / page_bytes; }

/// Token slots left unused by paging a sequence of `tokens`: pages * page_tokens - tokens.
inline i64 page_waste_tokens(i64 tokens, i64 page_tokens) {
  return mul(pages_for_tokens(tokens, page_tokens), page_tokens) - tokens;
}

}  // namespace kvplan
