// libFuzzer harness: config.json ingestion end to end (parse, model, KV bytes, parameters).
// Anything but an InputError (bad input, exit 2) escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kvplan/core/kv.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/hf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto j = kvplan::io::parse_json_text(text, "fuzz.json");
    const kvplan::ModelSpec m = kvplan::io::model_from_hf_config(j, "fuzz.json", "fuzz");
    kvplan::KvOptions o;
    o.k_format = o.v_format = o.state_format = m.dtype;
    for (kvplan::i64 ctx : {0LL, 1LL, 4096LL, 1LL << 40}) {
      o.context = ctx;
      (void)kvplan::compute_kv(m, o);
    }
    const auto p = kvplan::count_params(m);
    (void)kvplan::weight_bytes(m, p);
  } catch (const kvplan::InputError&) {
  }
  return 0;
}
