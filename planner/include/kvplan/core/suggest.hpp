// "Did you mean" suggestions for unknown names (edit distance).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kvplan {

/// Levenshtein distance between a and b.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The candidate closest to `name` (prefix matches first), if it is close enough to be a likely typo.
std::optional<std::string> closest(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace kvplan
