// Token counts as users type them ("32k", "128K", "1m", "4096"), byte counts as people read them, and
// the case folding the readers use.
#pragma once

#include <string>
#include <string_view>

#include "kvplan/core/checked.hpp"

namespace kvplan {

/// Parses a non-negative count: digits with an optional k (x1024) or m (x1024^2) suffix,
/// case-insensitive. Throws InputError naming `what` on anything else or on overflow.
i64 parse_count(std::string_view text, std::string_view what);

/// Parses a byte count: an integer, or a number (an exponent allowed: 80e9) with a unit B, KiB, MiB, GiB, TiB
/// (powers of 1024) or KB, MB, GB, TB (powers of 1000), case-insensitive: 85045477376, 79.22GiB, 512MiB, 80GB.
/// Throws InputError naming `what`.
i64 parse_bytes(std::string_view text, std::string_view what);

/// "1.50 GiB", "512.00 MiB", "812 B": binary units with two decimals.
std::string human_bytes(i64 bytes);

/// "8.030 B", "999.9 M": parameter counts.
std::string human_count(i64 n);

/// `text` with ASCII letters lower-cased (names, units and enum spellings compare case-insensitively).
std::string ascii_lower(std::string_view text);

}  // namespace kvplan
