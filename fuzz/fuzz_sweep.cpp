// libFuzzer harness: the sweep grammar and count / byte parsing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)kvplan::expand_counts(text, "--context", 100000);
  } catch (const kvplan::InputError&) {
  }
  try {
    (void)kvplan::parse_count(text, "--context");
  } catch (const kvplan::InputError&) {
  }
  try {
    (void)kvplan::parse_bytes(text, "--weight-bytes");
  } catch (const kvplan::InputError&) {
  }
  (void)kvplan::split_names(text);
  return 0;
}
