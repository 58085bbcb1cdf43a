// Plausibility limits for model sizes read from files (config.json, GGUF): a value outside them is
// bad input, so byte arithmetic downstream stays far from 2^63.
#pragma once

#include <cstdint>

namespace kvplan::io::limits {

constexpr std::int64_t kMaxLayers = 100000;
constexpr std::int64_t kMaxHeads = 1 << 20;
constexpr std::int64_t kMaxDim = 1 << 24;
constexpr std::int64_t kMaxVocab = 1LL << 31;
constexpr std::int64_t kMaxTokens = 1LL << 40;
constexpr std::int64_t kMaxExperts = 1 << 16;

}  // namespace kvplan::io::limits
