// Element format table and row-size arithmetic (see format.hpp for the sources of the sizes).
#include "kvplan/core/format.hpp"
#include "kvplan/core/error.hpp"
#include "kvplan/core/units.hpp"

#include <algorithm>
#include <cctype>

namespace kvplan {

const std::vector<FormatInfo>& all_formats() {
  static const std::vector<FormatInfo> table = {
      {ElemFormat::f32, "f32", 1, 4},         {ElemFormat::f16, "f16", 1, 2},
      {ElemFormat::bf16, "bf16", 1, 2},       {ElemFormat::fp8_e4m3, "fp8_e4m3", 1, 1},
      {ElemFormat::fp8_e5m2, "fp8_e5m2", 1, 1}, {ElemFormat::int8, "int8", 1, 1},
      {ElemFormat::q8_0, "q8_0", 32, 34},     {ElemFormat::q4_0, "q4_0", 32, 18},
      {ElemFormat::q4_1, "q4_1", 32, 20},     {ElemFormat::q5_0, "q5_0", 32, 22},
      {ElemFormat::q5_1, "q5_1", 32, 24},     {ElemFormat::iq4_nl, "iq4_nl", 32, 18},
      {ElemFormat::q2_k, "q2_k", 256, 84},    {ElemFormat::q3_k, "q3_k", 256, 110},
      {ElemFormat::q4_k, "q4_k", 256, 144},   {ElemFormat::q5_k, "q5_k", 256, 176},
      {ElemFormat::q6_k, "q6_k", 256, 210},   {ElemFormat::q8_k, "q8_k", 256, 292},
      {ElemFormat::iq1_s, "iq1_s", 256, 50},  {ElemFormat::iq1_m, "iq1_m", 256, 56},
      {ElemFormat::iq2_xxs, "iq2_xxs", 256, 66}, {ElemFormat::iq2_xs, "iq2_xs", 256, 74},
      {ElemFormat::iq2_s, "iq2_s", 256, 82},  {ElemFormat::iq3_xxs, "iq3_xxs", 256, 98},
      {ElemFormat::iq3_s, "iq3_s", 256, 110}, {ElemFormat::iq4_xs, "iq4_xs", 256, 136},
      {ElemFormat::tq1_0, "tq1_0", 256, 54},  {ElemFormat::tq2_0, "tq2_0", 256, 66},
      {ElemFormat::mxfp4, "mxfp4", 32, 17},   {ElemFormat::nvfp4, "nvfp4", 16, 9},
      // SGLang MHATokenToKVPoolFP4 / MLATokenToKVPoolFP4 (mem_cache/memory_pool.py, v0.5.6 on): k // 2 bytes of e2m1
      // and a uint8 scale buffer of (n x k) // scale_block_size, scale_block_size = 16
      {ElemFormat::fp4_e2m1, "fp4_e2m1", 16, 9},
      // vLLM per-row KV formats (format.hpp): block fields give the element size, row_bits / row_extra the row
      {ElemFormat::int8_pth, "int8_per_token_head", 1, 1, 8, 4}, {ElemFormat::fp8_pth, "fp8_per_token_head", 1, 1, 8, 4},
      {ElemFormat::int4_pth, "int4_per_token_head", 2, 1, 4, 4},
      {ElemFormat::tq_k8, "turboquant_k8", 1, 1, 8, 0},   {ElemFormat::tq_k4, "turboquant_k4", 2, 1, 4, 2},
      {ElemFormat::tq_k3, "turboquant_k3", 8, 3, 3, 2},   {ElemFormat::tq_v4, "turboquant_v4", 2, 1, 4, 4},
      {ElemFormat::tq_v3, "turboquant_v3", 8, 3, 3, 4},
  };
  return table;
}

const FormatInfo& format_info(ElemFormat f) { return all_formats()[static_cast<size_t>(f)]; }

bool is_turboquant(ElemFormat f) {
  return f == ElemFormat::tq_k8 || f == ElemFormat::tq_k4 || f == ElemFormat::tq_k3 || f == ElemFormat::tq_v4 || f == ElemFormat::tq_v3;
}

namespace {
struct TqPreset {
  std::string_view name;
  ElemFormat k, v;
};
// TQ_PRESETS (turboquant/config.py): key_quant_bits 8 = fp8 keys, 3-4 = MSE keys with an fp16 norm; values 3-4 bits
constexpr TqPreset kTqPresets[] = {
    {"turboquant_k8v4", ElemFormat::tq_k8, ElemFormat::tq_v4},
    {"turboquant_4bit_nc", ElemFormat::tq_k4, ElemFormat::tq_v4},
    {"turboquant_k3v4_nc", ElemFormat::tq_k3, ElemFormat::tq_v4},
    {"turboquant_3bit_nc", ElemFormat::tq_k3, ElemFormat::tq_v3},
};
}  // namespace

std::optional<KvPair> parse_turboquant(std::string_view name) {
  const std::string s = ascii_lower(name);
  for (const auto& p : kTqPresets)
    if (s == p.name) return KvPair{p.k, p.v};
  return std::nullopt;
}

std::string kv_pair_name(ElemFormat k, ElemFormat v) {
  for (const auto& p : kTqPresets)
    if (p.k == k && p.v == v) return std::string(p.name);
  if (k == v) return std::string(format_info(k).name);
  return std::string(format_info(k).name) + "/" + std::string(format_info(v).name);
}

std::string kv_pair_label(ElemFormat k, ElemFormat v, std::string_view sep) {
  if (is_turboquant(k) && is_turboquant(v)) return kv_pair_name(k, v);
  return std::string(format_info(k).name) + std::string(sep) + std::string(format_info(v).name);
}

i64 tq_slot_pad(ElemFormat k, ElemFormat v, i64 k_row, i64 v_row) {
  if (!is_turboquant(k) || !is_turboquant(v)) return 0;
  return (k_row + v_row) % 2;  // slot_size_aligned = s + s % 2
}

std::optional<ElemFormat> parse_format(std::string_view name) {
  const std::string s = ascii_lower(name);
  for (const auto& fi : all_formats())
    if (s == fi.name && !is_turboquant(fi.format)) return fi.format;  // a TurboQuant half is no --kv-cache-dtype
  struct Alias { std::string_view alias; ElemFormat f; };
  static const Alias aliases[] = {
      {"float32", ElemFormat::f32},        {"fp32", ElemFormat::f32},
      {"float", ElemFormat::f32},          {"float16", ElemFormat::f16},
      {"fp16", ElemFormat::f16},           {"half", ElemFormat::f16},
      {"bfloat16", ElemFormat::bf16},      {"fp8", ElemFormat::fp8_e4m3},
      {"fp8_e4m3fn", ElemFormat::fp8_e4m3}, {"float8_e4m3fn", ElemFormat::fp8_e4m3},
      {"e4m3", ElemFormat::fp8_e4m3},      {"float8_e5m2", ElemFormat::fp8_e5m2},
      {"e5m2", ElemFormat::fp8_e5m2},      {"fp8_e5m2fnuz", ElemFormat::fp8_e5m2},
      {"fp8_e4m3fnuz", ElemFormat::fp8_e4m3}, {"fp8_inc", ElemFormat::fp8_e4m3},
      {"i8", ElemFormat::int8},            {"q8", ElemFormat::q8_0},
  };
  for (const auto& a : aliases)
    if (s == a.alias) return a.f;
  return std::nullopt;
}

bool kv_capable(ElemFormat f) { return format_info(f).block_elems != 256; }

void check_state_dtype(const std::string& text, const std::string& key) {
  if (text == "auto") return;
  if (const auto f = parse_format(text); f && state_capable(*f)) return;
  throw InputError(key, "'" + text + "' is not a recurrent-state dtype", "use f32, f16 or bf16");
}

std::string format_names(bool with_pairs) {
  std::string out;
  for (const auto& fi : all_formats()) {
    if (!kv_capable(fi.format) || is_turboquant(fi.format)) continue;
    if (!out.empty()) out += ", ";
    out += fi.name;
  }
  if (with_pairs)
    for (const auto& p : kTqPresets) out += ", " + std::string(p.name);
  return out;
}

i64 row_bytes(ElemFormat f, i64 n, std::string_view what) {
  const FormatInfo& fi = format_info(f);
  if (fi.row_bits > 0) return add(ceil_div(mul(n, fi.row_bits, what), 8), fi.row_extra, what);
  if (n % fi.block_elems != 0)
    throw InputError(std::string(what),
                     "row of " + std::to_string(n) + " elements is not a multiple of " +
                         std::string(fi.name) + "'s block of " + std::to_string(fi.block_elems),
                     "choose a plain cache type (f16, bf16, fp8_e4m3) for this model");
  return mul(n / fi.block_elems, fi.block_bytes, what);
}

}  // namespace kvplan
