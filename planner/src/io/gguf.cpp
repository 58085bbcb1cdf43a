// GGUF header reading: metadata and tensor table (never tensor data), read in bounded chunks with
// every count and length checked against limits and the file size, then turned into a ModelSpec by
// the rules llama.cpp applies to its own metadata keys (src/llama-model.cpp load_hparams).
// Format: ggml docs/gguf.md, versions 2 and 3, little-endian.
#include "kvplan/io/gguf.hpp"

#include "kvplan/io/limits.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <vector>

namespace kvplan::io {

namespace {

namespace fs = std::filesystem;

// ---- limits: a header that exceeds them is corrupt, not a model ----
constexpr std::uint64_t kMaxString = 16ULL << 20;     // bytes in one string
constexpr std::uint64_t kMaxArray = 1ULL << 28;       // items in one array
constexpr std::uint64_t kMaxTensors = 1000000;
constexpr std::uint64_t kMaxKv = 1000000;
constexpr std::uint32_t kMaxDims = 4;                 // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 4;                     // arrays of arrays
constexpr std::size_t kStoredArray = 1 << 17;         // integer arrays kept (per-layer values); longer ones keep their count
constexpr i64 kChunk = 1 << 20;                       // read buffer

using namespace limits;  // kMaxLayers, kMaxHeads, ... (io/limits.hpp)

const char* const kFixTruncated = "the file is incomplete; download it again";
const char* const kFixCorrupt = "the file is corrupt or not a GGUF model";

// File bytes shown in a message: printable ASCII, others as \xNN, long names cut (error lines stay
// one printable line, docs/bad-input.md).
std::string shown(const std::string& s, std::size_t cap = 120) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (cap > 0 && i == cap) return out + "...";
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    }
  }
  return out;
}

// ---- ggml tensor types: bytes per block of elements ----
// Type ids: ggml/include/ggml.h enum ggml_type. Block sizes: ggml/src/ggml.c type_traits (blck_size,
// type_size = sizeof(block_*)) with the structs in ggml/src/ggml-common.h, e.g. block_q4_0 = f16 d +
// 16 B of nibbles = 18 B per 32; block_q4_K = 2 f16 + 12 B scales + 128 B quants = 144 B per 256;
// block_mxfp4 = 1 B E8M0 + 16 B = 17 B per 32; block_nvfp4 = 4 B scales + 32 B = 36 B per 64;
// block_q1_0 = f16 + 16 B = 18 B per 128. Ids 4, 5, 31-33 and 36-38 were removed from GGUF files.
struct GgmlType {
  std::uint32_t id;
  const char* name;  // ggml type_name
  i64 block_elems;
  i64 block_bytes;
};

constexpr GgmlType kGgmlTypes[] = {
    {0, "f32", 1, 4},           {1, "f16", 1, 2},          {2, "q4_0", 32, 18},       {3, "q4_1", 32, 20},
    {6, "q5_0", 32, 22},        {7, "q5_1", 32, 24},       {8, "q8_0", 32, 34},       {9, "q8_1", 32, 36},
    {10, "q2_K", 256, 84},      {11, "q3_K", 256, 110},    {12, "q4_K", 256, 144},    {13, "q5_K", 256, 176},
    {14, "q6_K", 256, 210},     {15, "q8_K", 256, 292},    {16, "iq2_xxs", 256, 66},  {17, "iq2_xs", 256, 74},
    {18, "iq3_xxs", 256, 98},   {19, "iq1_s", 256, 50},    {20, "iq4_nl", 32, 18},    {21, "iq3_s", 256, 110},
    {22, "iq2_s", 256, 82},     {23, "iq4_xs", 256, 136},  {24, "i8", 1, 1},          {25, "i16", 1, 2},
    {26, "i32", 1, 4},          {27, "i64", 1, 8},         {28, "f64", 1, 8},         {29, "iq1_m", 256, 56},
    {30, "bf16", 1, 2},         {34, "tq1_0", 256, 54},    {35, "tq2_0", 256, 66},    {39, "mxfp4", 32, 17},
    {40, "nvfp4", 64, 36},      {41, "q1_0", 128, 18},
};

const GgmlType* ggml_type(std::uint32_t id) {
  for (const auto& t : kGgmlTypes)
    if (t.id == id) return &t;
  return nullptr;
}

// general.file_type (enum llama_ftype, include/llama.h) as llama_model_ftype_name prints it.
std::string file_type_name(i64 ftype) {
  static const std::pair<i64, const char*> kNames[] = {
      {0, "all F32"},
      {1, "F16"},
      {2, "Q4_0"},
      {3, "Q4_1"},
      {7, "Q8_0"},
      {8, "Q5_0"},
      {9, "Q5_1"},
      {10, "Q2_K - Medium"},
      {11, "Q3_K - Small"},
      {12, "Q3_K - Medium"},
      {13, "Q3_K - Large"},
      {14, "Q4_K - Small"},
      {15, "Q4_K - Medium"},
      {16, "Q5_K - Small"},
      {17, "Q5_K - Medium"},
      {18, "Q6_K"},
      {19, "IQ2_XXS - 2.0625 bpw"},
      {20, "IQ2_XS - 2.3125 bpw"},
      {21, "Q2_K - Small"},
      {22, "IQ3_XS - 3.3 bpw"},
      {23, "IQ3_XXS - 3.0625 bpw"},
      {24, "IQ1_S - 1.5625 bpw"},
      {25, "IQ4_NL - 4.5 bpw"},
      {26, "IQ3_S - 3.4375 bpw"},
      {27, "IQ3_S mix - 3.66 bpw"},
      {28, "IQ2_S - 2.5 bpw"},
      {29, "IQ2_M - 2.7 bpw"},
      {30, "IQ4_XS - 4.25 bpw"},
      {31, "IQ1_M - 1.75 bpw"},
      {32, "BF16"},
      {36, "TQ1_0 - 1.69 bpw ternary"},
      {37, "TQ2_0 - 2.06 bpw ternary"},
      {38, "MXFP4 MoE"},
      {39, "NVFP4"},
  };
  const i64 base = ftype & ~i64(1024);  // LLAMA_FTYPE_GUESSED
  for (const auto& [id, name] : kNames)
    if (id == base) return std::string(name) + (base != ftype ? " (guessed)" : "");
  return "unknown (" + std::to_string(ftype) + ")";
}

// ---- bounded, chunked reading ----

class Source {
 public:
  explicit Source(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    if (fs::is_directory(path_, ec)) throw InputError(path_, "is a directory, expected a .gguf file", "name the file itself");
    const auto sz = fs::file_size(path_, ec);
    if (ec) throw InputError(path_, "cannot read: " + ec.message(), "check the path");
    size_ = static_cast<i64>(sz);
    in_.open(path_, std::ios::binary);
    if (!in_) throw InputError(path_, "cannot open for reading", "check the path and its permissions");
    buf_.resize(static_cast<std::size_t>(kChunk));
  }

  const std::string& path() const { return path_; }
  i64 pos() const { return pos_; }
  i64 size() const { return size_; }
  i64 remaining() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& what, const std::string& fix = kFixCorrupt) const {
    throw InputError(path_, what, fix);
  }

  // Throws the truncation error when fewer than n bytes are left.
  void need(std::uint64_t n, const std::string& what) const {
    if (n > static_cast<std::uint64_t>(remaining()))
      fail("truncated: " + what + " at byte " + std::to_string(pos_) + " needs " + std::to_string(n) +
               " bytes but the file ends at byte " + std::to_string(size_),
           kFixTruncated);
  }

  // `what` names the field for error messages; it is built only when reading fails.
  template <class What>
  void read(void* dst, i64 n, const What& what) {
    if (n > remaining()) need(static_cast<std::uint64_t>(n), what());
    char* out = static_cast<char*>(dst);
    while (n > 0) {
      if (head_ == tail_) refill();
      const i64 k = std::min(n, tail_ - head_);
      std::memcpy(out, buf_.data() + head_, static_cast<std::size_t>(k));
      head_ += k;
      pos_ += k;
      out += k;
      n -= k;
    }
  }

  template <class What>
  void skip(std::uint64_t n, const What& what) {
    if (n > static_cast<std::uint64_t>(remaining())) need(n, what());
    const i64 k = static_cast<i64>(n);
    if (k <= tail_ - head_) {
      head_ += k;
      pos_ += k;
      return;
    }
    pos_ += k;
    head_ = tail_ = 0;
    in_.clear();
    in_.seekg(pos_);
    if (!in_) fail("cannot seek to byte " + std::to_string(pos_), "check that the file is readable");
  }

  template <class T, class What>
  T read_le(const What& what) {
    unsigned char b[sizeof(T)];
    read(b, sizeof(T), what);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
    if constexpr (std::is_same_v<T, float>) {
      return std::bit_cast<float>(static_cast<std::uint32_t>(v));
    } else if constexpr (std::is_same_v<T, double>) {
      return std::bit_cast<double>(v);
    } else {
      return static_cast<T>(v);  // modular conversion (C++20) gives the two's-complement value
    }
  }

  template <class What>
  std::uint64_t read_string_length(const What& what) {
    const i64 at = pos_;
    const auto len = read_le<std::uint64_t>([&] { return "length of " + what(); });
    if (len > kMaxString)
      fail(what() + " at byte " + std::to_string(at) + ": string length " + std::to_string(len) +
           " exceeds the limit of " + std::to_string(kMaxString) + " bytes (16 MiB)");
    return len;
  }

  template <class What>
  std::string read_string(const What& what) {
    const std::uint64_t len = read_string_length(what);
    std::string s(static_cast<std::size_t>(len), '\0');
    read(s.data(), static_cast<i64>(len), what);
    return s;
  }

  template <class What>
  void skip_string(const What& what) {
    skip(read_string_length(what), what);
  }

 private:
  void refill() {
    const i64 want = std::min(kChunk, size_ - pos_);
    in_.read(buf_.data(), want);
    if (in_.gcount() != want) fail("read error at byte " + std::to_string(pos_), "check that the file is readable");
    head_ = 0;
    tail_ = want;
  }

  std::string path_;
  std::ifstream in_;
  i64 size_ = 0;
  i64 pos_ = 0;  // offset of the next byte handed out
  std::vector<char> buf_;
  i64 head_ = 0, tail_ = 0;
};

// ---- metadata values ----

enum class VType : std::uint32_t { u8 = 0, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64 };
constexpr std::uint32_t kVTypeCount = 13;

const char* vtype_name(VType t) {
  static const char* const kNames[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
                                       "bool", "string", "array", "uint64", "int64", "float64"};
  return kNames[static_cast<std::uint32_t>(t)];
}

bool is_integer(VType t) {
  switch (t) {
    case VType::u8: case VType::i8: case VType::u16: case VType::i16:
    case VType::u32: case VType::i32: case VType::u64: case VType::i64: return true;
    default: return false;
  }
}

i64 fixed_size(VType t) {
  switch (t) {
    case VType::u8: case VType::i8: case VType::boolean: return 1;
    case VType::u16: case VType::i16: return 2;
    case VType::u32: case VType::i32: case VType::f32: return 4;
    case VType::u64: case VType::i64: case VType::f64: return 8;
    default: return 0;
  }
}

struct Value {
  VType type = VType::u8;
  i64 offset = 0;          // byte offset of the value in the file
  i64 i = 0;               // integers and bool
  bool too_big = false;    // uint64 above INT64_MAX
  double f = 0;
  std::string s;
  // arrays
  VType elem = VType::u8;
  std::uint64_t count = 0;
  bool ints_kept = false;  // integer or bool elements, count <= kStoredArray
  std::vector<i64> ints;
};

template <class What>
void read_scalar(Source& src, VType t, Value& v, const What& what) {
  switch (t) {
    case VType::u8: v.i = src.read_le<std::uint8_t>(what); break;
    case VType::i8: v.i = src.read_le<std::int8_t>(what); break;
    case VType::u16: v.i = src.read_le<std::uint16_t>(what); break;
    case VType::i16: v.i = src.read_le<std::int16_t>(what); break;
    case VType::u32: v.i = src.read_le<std::uint32_t>(what); break;
    case VType::i32: v.i = src.read_le<std::int32_t>(what); break;
    case VType::f32: v.f = src.read_le<float>(what); break;
    case VType::boolean: v.i = src.read_le<std::uint8_t>(what) != 0; break;
    case VType::u64: {
      const auto u = src.read_le<std::uint64_t>(what);
      v.too_big = u > static_cast<std::uint64_t>(INT64_MAX);
      v.i = v.too_big ? 0 : static_cast<i64>(u);
      break;
    }
    case VType::i64: v.i = src.read_le<std::int64_t>(what); break;
    case VType::f64: v.f = src.read_le<double>(what); break;
    default: break;
  }
}

template <class What>
VType read_vtype(Source& src, const What& what) {
  const i64 at = src.pos();
  const auto t = src.read_le<std::uint32_t>(what);
  if (t >= kVTypeCount) src.fail(what() + " at byte " + std::to_string(at) + ": unknown metadata value type " + std::to_string(t));
  return static_cast<VType>(t);
}

// Array body: element type, count, items. Integer items are kept when short; strings and nested
// arrays are walked (each length checked) and dropped.
void read_array(Source& src, const std::string& key, Value& v, int depth) {
  auto what = [&] { return "array '" + shown(key) + "'"; };
  const i64 at = src.pos();
  v.elem = read_vtype(src, [&] { return "element type of " + what(); });
  v.count = src.read_le<std::uint64_t>([&] { return "item count of " + what(); });
  if (v.count > kMaxArray)
    src.fail(what() + " at byte " + std::to_string(at) + ": " + std::to_string(v.count) + " items exceed the limit of " +
             std::to_string(kMaxArray));
  // smallest encoding of each item: fixed size, or a string's 8-byte length, or an array's 12-byte header
  const i64 min_item = v.elem == VType::string ? 8 : v.elem == VType::array ? 12 : fixed_size(v.elem);
  src.need(v.count * static_cast<std::uint64_t>(min_item), "items of " + what());
  if (fixed_size(v.elem) > 0) {
    v.ints_kept = (is_integer(v.elem) || v.elem == VType::boolean) && v.count <= kStoredArray;
    if (!v.ints_kept) {
      src.skip(v.count * static_cast<std::uint64_t>(fixed_size(v.elem)), [&] { return "items of " + what(); });
      return;
    }
    v.ints.reserve(static_cast<std::size_t>(v.count));
    for (std::uint64_t k = 0; k < v.count; ++k) {
      Value item;
      read_scalar(src, v.elem, item, [&] { return "item " + std::to_string(k) + " of " + what(); });
      if (item.too_big) v.ints_kept = false;
      v.ints.push_back(item.i);
    }
    if (!v.ints_kept) v.ints.clear();
    return;
  }
  if (v.elem == VType::string) {
    for (std::uint64_t k = 0; k < v.count; ++k) src.skip_string([&] { return "item " + std::to_string(k) + " of " + what(); });
    return;
  }
  if (depth + 1 >= kMaxArrayDepth)
    src.fail(what() + " at byte " + std::to_string(at) + ": arrays nested more than " + std::to_string(kMaxArrayDepth) +
             " deep");
  for (std::uint64_t k = 0; k < v.count; ++k) {
    Value inner;
    inner.type = VType::array;
    read_array(src, key + "[" + std::to_string(k) + "]", inner, depth + 1);
  }
}

// ---- the header ----

struct Tensor {
  std::string name;
  std::uint32_t type = 0;
  std::array<i64, kMaxDims> dims{1, 1, 1, 1};
  std::uint32_t n_dims = 0;
  i64 elements = 0;
  i64 bytes = 0;
  i64 offset = 0;  // from the start of the data section
};

struct Header {
  std::string path;
  i64 version = 0;
  std::map<std::string, Value> kv;
  std::vector<Tensor> tensors;
  i64 alignment = 32;
  i64 data_start = 0;
};

// Reads magic, version, counts, metadata and the tensor table; checks each tensor's data lies
// inside the file. The data itself is never read.
Header read_header(const std::string& path) {
  Source src(path);
  Header h;
  h.path = path;
  char magic[4] = {0, 0, 0, 0};
  src.read(magic, 4, [] { return std::string("magic"); });
  if (std::memcmp(magic, "GGUF", 4) != 0)
    src.fail("not a GGUF file: it starts with \"" + shown(std::string(magic, 4)) + "\", expected \"GGUF\"",
             "pass a .gguf model file (or a config.json / model folder)");
  const auto version = src.read_le<std::uint32_t>([] { return std::string("version"); });
  if (version != 2 && version != 3) {
    if ((version & 0xffff) == 0 && ((version >> 24) == 2 || (version >> 24) == 3))
      src.fail("GGUF version field at byte 4 reads as big-endian; big-endian GGUF files are not supported",
               "use the little-endian file");
    src.fail("unsupported GGUF version " + std::to_string(version) + " at byte 4; supported: 2, 3",
             "convert the model again with a current llama.cpp");
  }
  h.version = version;
  const auto n_tensors = src.read_le<std::uint64_t>([] { return std::string("tensor_count"); });
  if (n_tensors > kMaxTensors)
    src.fail("tensor_count " + std::to_string(n_tensors) + " at byte 8 exceeds the limit of " + std::to_string(kMaxTensors));
  const auto n_kv = src.read_le<std::uint64_t>([] { return std::string("metadata_kv_count"); });
  if (n_kv > kMaxKv)
    src.fail("metadata_kv_count " + std::to_string(n_kv) + " at byte 16 exceeds the limit of " + std::to_string(kMaxKv));
  // each entry is at least an 8-byte key length, a 4-byte type and a 1-byte value
  src.need(n_kv * 13, "metadata (" + std::to_string(n_kv) + " entries)");

  for (std::uint64_t e = 0; e < n_kv; ++e) {
    const i64 at = src.pos();
    std::string key = src.read_string([&] { return "key of metadata entry " + std::to_string(e); });
    if (h.kv.count(key)) src.fail("duplicate metadata key '" + shown(key) + "' at byte " + std::to_string(at));
    Value v;
    v.type = read_vtype(src, [&] { return "value type of '" + shown(key) + "'"; });
    v.offset = src.pos();
    auto what = [&] { return "value of '" + shown(key) + "'"; };
    if (v.type == VType::string) {
      v.s = src.read_string(what);
    } else if (v.type == VType::array) {
      read_array(src, key, v, 0);
    } else {
      read_scalar(src, v.type, v, what);
    }
    h.kv.emplace(std::move(key), std::move(v));
  }

  if (auto it = h.kv.find("general.alignment"); it != h.kv.end()) {
    const Value& a = it->second;
    if (a.type != VType::u32 || a.i == 0 || (a.i & (a.i - 1)) != 0)
      src.fail("general.alignment at byte " + std::to_string(a.offset) + ": expected a power of two (uint32), got " +
               (is_integer(a.type) ? std::to_string(a.i) : std::string(vtype_name(a.type))));
    h.alignment = a.i;
  }

  // each tensor info is at least an 8-byte name length, n_dims, type and offset
  src.need(n_tensors * 24, "tensor infos (" + std::to_string(n_tensors) + " tensors)");
  std::set<std::string> names;
  h.tensors.reserve(static_cast<std::size_t>(n_tensors));
  for (std::uint64_t k = 0; k < n_tensors; ++k) {
    Tensor t;
    const i64 at = src.pos();
    t.name = src.read_string([&] { return "name of tensor " + std::to_string(k); });
    auto what = [&](const char* field) { return [&t, field] { return std::string(field) + " of tensor '" + shown(t.name) + "'"; }; };
    if (!names.insert(t.name).second) src.fail("duplicate tensor '" + shown(t.name) + "' at byte " + std::to_string(at));
    t.n_dims = src.read_le<std::uint32_t>(what("n_dims"));
    if (t.n_dims > kMaxDims)
      src.fail("tensor '" + shown(t.name) + "' at byte " + std::to_string(at) + ": n_dims " + std::to_string(t.n_dims) +
               " exceeds " + std::to_string(kMaxDims));
    for (std::uint32_t d = 0; d < t.n_dims; ++d) {
      const auto ne = src.read_le<std::uint64_t>(what("dimensions"));
      if (ne > static_cast<std::uint64_t>(INT64_MAX))
        src.fail("tensor '" + shown(t.name) + "' at byte " + std::to_string(at) + ": dimension " + std::to_string(d) + " is " +
                 std::to_string(ne) + ", beyond 64-bit element counts");
      t.dims[d] = static_cast<i64>(ne);
    }
    t.type = src.read_le<std::uint32_t>(what("type"));
    const auto offset = src.read_le<std::uint64_t>(what("offset"));
    const GgmlType* gt = ggml_type(t.type);
    if (!gt)
      src.fail("tensor '" + shown(t.name) + "' at byte " + std::to_string(at) + ": unknown ggml type " + std::to_string(t.type),
               "this file uses a tensor type newer than kvplan's table (ggml.h, ggml-common.h); "
               "re-quantise it with a listed type or update kvplan");
    // ggml_nbytes: elements / block_elems * block_bytes; ggml requires rows of whole blocks
    t.elements = 1;
    for (i64 ne : t.dims) t.elements = mul(t.elements, ne, "elements of tensor '" + shown(t.name) + "'");
    if (t.dims[0] % gt->block_elems != 0)
      src.fail("tensor '" + shown(t.name) + "' at byte " + std::to_string(at) + ": row of " + std::to_string(t.dims[0]) +
               " elements is not a multiple of " + gt->name + "'s block of " + std::to_string(gt->block_elems));
    t.bytes = mul(t.elements / gt->block_elems, gt->block_bytes, "bytes of tensor '" + shown(t.name) + "'");
    if (offset > static_cast<std::uint64_t>(INT64_MAX) || offset % static_cast<std::uint64_t>(h.alignment) != 0)
      src.fail("tensor '" + shown(t.name) + "' at byte " + std::to_string(at) + ": data offset " + std::to_string(offset) +
               " is not a multiple of the alignment " + std::to_string(h.alignment));
    t.offset = static_cast<i64>(offset);
    h.tensors.push_back(std::move(t));
  }

  h.data_start = round_up(src.pos(), h.alignment, "data section start");
  for (const Tensor& t : h.tensors) {
    const i64 end = add(add(h.data_start, t.offset, "tensor data offset"), t.bytes, "tensor data end");
    if (end > src.size())
      src.fail("truncated: tensor '" + shown(t.name) + "' data ends at byte " + std::to_string(end) +
                   " but the file ends at byte " + std::to_string(src.size()),
               kFixTruncated);
  }
  return h;
}

// ---- typed access to the metadata, with errors that name the file and key ----

std::string describe(const Value& v) {
  switch (v.type) {
    case VType::string: return "string \"" + shown(v.s, 40) + "\"";
    case VType::array: return std::string("array of ") + std::to_string(v.count) + " " + vtype_name(v.elem);
    case VType::boolean: return v.i ? "true" : "false";
    case VType::f32:
    case VType::f64: return std::string(vtype_name(v.type)) + " " + std::to_string(v.f);
    default: return v.too_big ? "uint64 beyond 2^63" : std::to_string(v.i);
  }
}

std::string range_text(i64 lo, i64 hi) { return "integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"; }

struct Meta {
  const Header& h;
  std::string arch;

  std::string k(const std::string& suffix) const { return arch + "." + suffix; }

  const Value* find(const std::string& key) const {
    auto it = h.kv.find(key);
    return it == h.kv.end() ? nullptr : &it->second;
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }

  [[noreturn]] void fail(const std::string& key, const std::string& what, const std::string& fix = {}) const {
    throw InputError(h.path + ": " + shown(key), shown(what, 0), shown(fix, 0));
  }

  i64 as_int(const std::string& key, const Value& v, i64 lo, i64 hi) const {
    if (!is_integer(v.type) || v.too_big) fail(key, "expected " + range_text(lo, hi) + ", got " + describe(v));
    if (v.i < lo || v.i > hi) fail(key, "expected " + range_text(lo, hi) + ", got " + std::to_string(v.i));
    return v.i;
  }

  std::optional<i64> opt_int(const std::string& key, i64 lo, i64 hi) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    return as_int(key, *v, lo, hi);
  }

  i64 int_or(const std::string& key, i64 dflt, i64 lo, i64 hi) const { return opt_int(key, lo, hi).value_or(dflt); }

  i64 get_int(const std::string& key, i64 lo, i64 hi) const {
    if (auto v = opt_int(key, lo, hi)) return *v;
    fail(key, "missing; expected " + range_text(lo, hi), "llama.cpp needs this key for architecture '" + arch +
                                                            "'; convert the model with a current convert_hf_to_gguf.py");
  }

  // llama.cpp get_key_or_arr: one value for every layer, or an array of exactly n values.
  std::optional<std::vector<i64>> per_layer(const std::string& key, i64 n, i64 lo, i64 hi) const {
    const Value* v = find(key);
    if (!v) return std::nullopt;
    if (v->type != VType::array) return std::vector<i64>(static_cast<std::size_t>(n), as_int(key, *v, lo, hi));
    if (v->count != static_cast<std::uint64_t>(n))
      fail(key, "has " + std::to_string(v->count) + " entries but " + k("block_count") + " is " + std::to_string(n),
           "make them agree");
    if (!is_integer(v->elem) || !v->ints_kept)
      fail(key, "expected an array of integers, got " + describe(*v));
    for (std::size_t i = 0; i < v->ints.size(); ++i)
      if (v->ints[i] < lo || v->ints[i] > hi)
        throw InputError(h.path + ": " + shown(key) + "[" + std::to_string(i) + "]",
                         "expected " + range_text(lo, hi) + ", got " + std::to_string(v->ints[i]));
    return v->ints;
  }

  std::string string_or(const std::string& key, const std::string& dflt) const {
    const Value* v = find(key);
    if (!v) return dflt;
    if (v->type != VType::string) fail(key, "expected a string, got " + describe(*v));
    return v->s;
  }
};

// ---- architectures (llama.cpp src/llama-arch.cpp LLM_ARCH_NAMES) ----

enum class Arch {
  llama, qwen2, qwen3, qwen2moe, qwen3moe, gemma, gemma2, gemma3, phi3, falcon, gpt2, gptneox, starcoder,
  deepseek2, gpt_oss, llama4, mamba, mamba2, jamba, nemotron_h, granitemoe, granitehybrid, lfm2, falcon_h1, gemma3n, gemma4,
  generic
};

const std::pair<const char*, Arch> kArchs[] = {
    {"llama", Arch::llama},       {"qwen2", Arch::qwen2},         {"qwen2vl", Arch::qwen2},
    {"qwen3", Arch::qwen3},       {"qwen2moe", Arch::qwen2moe},   {"qwen3moe", Arch::qwen3moe},
    {"gemma", Arch::gemma},       {"gemma2", Arch::gemma2},       {"gemma3", Arch::gemma3},
    {"phi3", Arch::phi3},         {"falcon", Arch::falcon},       {"gpt2", Arch::gpt2},
    {"gptneox", Arch::gptneox},   {"starcoder", Arch::starcoder}, {"deepseek2", Arch::deepseek2},
    {"gpt-oss", Arch::gpt_oss},   {"openai-moe", Arch::gpt_oss},  {"llama4", Arch::llama4},
    {"mamba", Arch::mamba},       {"mamba2", Arch::mamba2},       {"jamba", Arch::jamba},
    {"nemotron_h", Arch::nemotron_h}, {"granite", Arch::llama},   {"granitemoe", Arch::granitemoe},
    {"granitehybrid", Arch::granitehybrid}, {"lfm2", Arch::lfm2}, {"falcon-h1", Arch::falcon_h1},  {"lfm2moe", Arch::lfm2},
    {"gemma3n", Arch::gemma3n},   {"gemma4", Arch::gemma4},
    // read by the generic keys, no warning: every layer full attention in llama.cpp (src/models/<arch>.cpp sets no
    // swa_type) and, for the MoE ones, experts on every layer without shared experts
    {"starcoder2", Arch::generic}, {"nemotron", Arch::generic},   {"exaone", Arch::generic},
    {"chatglm", Arch::generic},    {"glm4", Arch::generic},       {"phi2", Arch::generic},
    {"stablelm", Arch::generic},   {"seed_oss", Arch::generic},   {"smollm3", Arch::generic},
    {"arcee", Arch::generic},      {"apertus", Arch::generic},    {"internlm2", Arch::generic},
    {"hunyuan-dense", Arch::generic}, {"ernie4_5", Arch::generic}, {"dbrx", Arch::generic},
    {"phimoe", Arch::generic},     {"olmoe", Arch::generic},      {"minimax-m2", Arch::generic},
};

std::optional<Arch> arch_of(const std::string& s) {
  for (const auto& [name, a] : kArchs)
    if (s == name) return a;
  return std::nullopt;
}

struct Builder {
  const Meta& md;
  Arch arch;
  ModelSpec& m;
  std::map<std::string, const Tensor*> tensors;  // every split's table, by name

  i64 n = 0, hidden = 0, k_dim = 0, v_dim = 0;
  std::vector<i64> heads, kv_heads, ff;

  const Tensor* tensor(const std::string& name) const {
    auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : it->second;
  }
  bool has_tensor(const std::string& name) const { return tensor(name) != nullptr; }
  const Tensor* blk(i64 i, const std::string& suffix) const { return tensor("blk." + std::to_string(i) + "." + suffix); }
  bool has_blk(i64 i, const std::string& suffix) const { return blk(i, suffix) != nullptr; }
  bool has_blk_prefix(i64 i, const std::string& stem) const {
    const std::string p = "blk." + std::to_string(i) + "." + stem;
    auto it = tensors.lower_bound(p);
    return it != tensors.end() && it->first.compare(0, p.size(), p) == 0;
  }
  bool layer_has_tensors(i64 i) const { return has_blk_prefix(i, ""); }

  void note(const std::string& s) { m.notes.push_back(s); }

  // llama_model::load_hparams, the part every architecture shares.
  void read_common() {
    n = md.get_int(md.k("block_count"), 1, kMaxLayers);
    hidden = md.get_int(md.k("embedding_length"), 1, kMaxDim);
    m.hidden = hidden;
    m.max_context = md.get_int(md.k("context_length"), 1, kMaxTokens);
    const std::vector<i64> zeros(static_cast<std::size_t>(n), 0);
    ff = md.per_layer(md.k("feed_forward_length"), n, 0, kMaxDim).value_or(zeros);
    heads = md.per_layer(md.k("attention.head_count"), n, 0, kMaxHeads).value_or(zeros);
    kv_heads = md.per_layer(md.k("attention.head_count_kv"), n, 0, kMaxHeads).value_or(heads);  // default n_head
    const i64 h0 = heads[0];  // llama.cpp n_head() is layer 0's
    if (h0 > 0) {
      const bool need_default = !md.has(md.k("attention.key_length")) || !md.has(md.k("attention.value_length"));
      if (need_default && hidden % h0 != 0)
        md.fail(md.k("attention.key_length"), "missing, and " + md.k("embedding_length") + " " + std::to_string(hidden) +
                                                  " is not divisible by head_count " + std::to_string(h0),
                "add the head dimension to the file");
      k_dim = md.int_or(md.k("attention.key_length"), hidden / h0, 1, kMaxDim);
      v_dim = md.int_or(md.k("attention.value_length"), hidden / h0, 1, kMaxDim);
    }
    read_vocab();
  }

  // llama.cpp: ARCH.vocab_size, or the length of tokenizer.ggml.tokens; else token_embd rows.
  void read_vocab() {
    if (auto v = md.opt_int(md.k("vocab_size"), 1, kMaxVocab)) {
      m.vocab = *v;
      return;
    }
    if (const Value* t = md.find("tokenizer.ggml.tokens"); t && t->type == VType::array) {
      if (t->count < 1 || t->count > static_cast<std::uint64_t>(kMaxVocab))
        md.fail("tokenizer.ggml.tokens", "has " + std::to_string(t->count) + " entries; expected 1 to 2^31");
      m.vocab = static_cast<i64>(t->count);
      return;
    }
    if (const Tensor* t = tensor("token_embd.weight"); t && t->n_dims >= 2) {
      m.vocab = t->dims[1];
      note("vocabulary size from token_embd.weight (" + std::to_string(m.vocab) + " rows)");
      return;
    }
    md.fail(md.k("vocab_size"), "missing, and no tokenizer.ggml.tokens array or token_embd.weight tensor",
            "the file has no vocabulary; convert the model again");
  }

  void check_gqa(i64 i) const {
    if (kv_heads[i] > 0 && heads[i] % kv_heads[i] != 0)
      md.fail(md.k("attention.head_count_kv"), "layer " + std::to_string(i) + ": head_count " + std::to_string(heads[i]) +
                                                   " is not divisible by " + std::to_string(kv_heads[i]) + " KV heads",
              "fix the head counts");
  }

  Layer attention_layer(i64 i) const {
    if (heads[i] < 1) md.fail(md.k("attention.head_count"), "layer " + std::to_string(i) + " has no attention heads");
    if (kv_heads[i] < 1) md.fail(md.k("attention.head_count_kv"), "layer " + std::to_string(i) + " has no KV heads");
    check_gqa(i);
    Layer l;
    l.kv = KvKind::full;
    l.mixer = Mixer::attention;
    l.q_heads = heads[i];
    l.kv_heads = kv_heads[i];
    l.k_head_dim = k_dim;
    l.v_head_dim = v_dim;
    l.mlp = MlpKind::gated;
    l.intermediate = ff[i];
    return l;
  }

  i64 experts() const { return md.int_or(md.k("expert_count"), 0, 0, kMaxExperts); }

  void moe_layer(Layer& l, i64 e, i64 width, const std::string& width_key) const {
    const i64 used = md.get_int(md.k("expert_used_count"), 1, kMaxExperts);
    if (used > e)
      md.fail(md.k("expert_used_count"), std::to_string(used) + " experts per token exceeds " + std::to_string(e) +
                                             " experts", "fix the expert counts");
    if (width < 1) md.fail(width_key, "is 0 or missing; expected the expert MLP width >= 1");
    l.mlp = MlpKind::moe;
    l.experts = e;
    l.experts_active = used;
    l.expert_intermediate = width;
  }

  void set_window(Layer& l, KvKind kind, i64 w) const {
    l.kv = kind;
    l.window = w;
  }

  void note_swa_ignored(const char* why) {
    if (auto w = md.opt_int(md.k("attention.sliding_window"), 0, kMaxTokens); w && *w > 0)
      note(md.k("attention.sliding_window") + " = " + std::to_string(*w) + " is not used: " + why);
  }

  // ---- families ----

  void llama_like() {
    for (i64 i = 0; i < n; ++i) m.layers.push_back(attention_layer(i));
  }

  void read_llama() {  // llama, mistral and mixtral all convert to "llama"; experts use feed_forward_length
    llama_like();
    if (const i64 e = experts(); e > 0)
      for (i64 i = 0; i < n; ++i) moe_layer(m.layers[i], e, ff[i], md.k("feed_forward_length"));
    note_swa_ignored("llama.cpp's llama architecture attends to the full context on every layer");
  }

  void read_qwen_moe(bool shared) {
    llama_like();
    const i64 e = md.get_int(md.k("expert_count"), 1, kMaxExperts);
    for (i64 i = 0; i < n; ++i) {
      Layer& l = m.layers[i];
      // llama.cpp: n_ff_exp ? n_ff_exp : n_ff / n_expert_used
      const i64 used = md.get_int(md.k("expert_used_count"), 1, kMaxExperts);
      moe_layer(l, e, md.int_or(md.k("expert_feed_forward_length"), ff[i] / used, 1, kMaxDim),
                md.k("expert_feed_forward_length"));
      if (shared) {
        l.shared_intermediate = md.int_or(md.k("expert_shared_feed_forward_length"), ff[i], 0, kMaxDim);
        l.shared_expert_gate = l.shared_intermediate > 0;
      }
    }
  }

  void read_gemma(int pattern, i64 default_window) {
    llama_like();
    for (auto& l : m.layers) l.norms = pattern == 0 ? 2 : 4;  // gemma2/3: pre and post norms around both blocks
    if (pattern == 0) return;
    const i64 w = default_window > 0 ? md.int_or(md.k("attention.sliding_window"), default_window, 1, kMaxTokens)
                                     : md.get_int(md.k("attention.sliding_window"), 1, kMaxTokens);
    // llama_hparams::set_swa_pattern(p): layer il is SWA when il % p < p - 1
    for (i64 i = 0; i < n; ++i)
      if (i % pattern < pattern - 1) set_window(m.layers[i], KvKind::sliding, w);
  }

  // Gemma 3n / Gemma 4 (llama.cpp src/models/gemma3n.cpp, gemma4.cpp load_arch_hparams): sliding layers by
  // attention.sliding_window_pattern (gemma4: one bool per layer; gemma3n: a period, default 5, layer il sliding when
  // il % p < p - 1); gemma4's sliding layers take attention.key_length_swa / value_length_swa, its full ones
  // key_length, each its head_count_kv entry, and a full layer without attn_v reuses k as V (cached apart all the same);
  // layers from n_layer_kv_from_start on keep no cache and read the last earlier one of their type (llama-model.cpp:
  // n_layer_kv_from_start - (is_swa ? 2 : 1)); n_layer_kv_from_start = block_count - attention.shared_kv_layers
  // (gemma4), 20 (gemma3n, fixed). gemma4 experts (expert_count > 0): beside the dense FFN, which runs as a shared
  // expert. Per-layer embeddings (gemma4: embedding_length_per_layer_input P; gemma3n: 256, fixed): per_layer_token_embd
  // is counted apart from the weights read per step. The tensor table gives the bytes; the counts below split them.
  void read_gemma_ple(bool g4) {
    llama_like();
    const i64 w = md.get_int(md.k("attention.sliding_window"), 1, kMaxTokens);
    const std::string pattern_key = md.k("attention.sliding_window_pattern");
    std::vector<bool> swa(static_cast<size_t>(n), false);
    const Value* pv = md.find(pattern_key);
    if (pv && pv->type == VType::array) {
      if (pv->count != static_cast<std::uint64_t>(n) || !pv->ints_kept)
        md.fail(pattern_key, "expected one bool per layer (" + std::to_string(n) + "), got " + describe(*pv), "convert the model again");
      for (i64 i = 0; i < n; ++i) swa[static_cast<size_t>(i)] = pv->ints[static_cast<size_t>(i)] != 0;
    } else {
      const i64 period = md.int_or(pattern_key, g4 ? 6 : 5, 1, kMaxLayers);
      for (i64 i = 0; i < n; ++i) swa[static_cast<size_t>(i)] = i % period < period - 1;
    }
    const i64 kswa = g4 ? md.get_int(md.k("attention.key_length_swa"), 1, kMaxDim) : k_dim;
    const i64 vswa = g4 ? md.get_int(md.k("attention.value_length_swa"), 1, kMaxDim) : v_dim;
    const i64 shared = g4 ? md.int_or(md.k("attention.shared_kv_layers"), 0, 0, n - 1) : std::min<i64>(std::max<i64>(n - 20, 0), n - 1);
    const i64 first = n - shared;
    const i64 e = experts();
    for (i64 i = 0; i < n; ++i) {
      Layer& l = m.layers[static_cast<size_t>(i)];
      l.norms = 4;
      l.qk_norm = true;
      if (swa[static_cast<size_t>(i)]) {
        set_window(l, KvKind::sliding, w);
        l.k_head_dim = kswa;
        l.v_head_dim = vswa;
      } else if (g4 && !has_blk(i, "attn_v.weight") && has_blk(i, "attn_k.weight")) {
        l.kv_projections = 1;
      }
      if (g4 && e > 0 && has_blk(i, "ffn_gate_inp.weight")) {
        moe_layer(l, e, md.get_int(md.k("expert_feed_forward_length"), 1, kMaxDim), md.k("expert_feed_forward_length"));
        l.shared_intermediate = ff[static_cast<size_t>(i)];
        l.intermediate = 0;
      }
    }
    if (const i64 i = share_kv_from(m.layers, first, g4); i >= 0)
      md.fail(g4 ? md.k("attention.shared_kv_layers") : md.k("block_count"),
              "layer " + std::to_string(i) + " would reuse an earlier " + kv_kind_name(m.layers[static_cast<size_t>(i)].kv) +
                  " layer's cache and layers 0-" + std::to_string(first - 1) + " have none", "convert the model again");
    if (shared > 0)
      note(std::string(g4 ? "gemma4" : "gemma3n (llama.cpp: n_layer_kv_from_start 20)") + ": layers " + std::to_string(first) + "-" +
           std::to_string(n - 1) + " read the cache of the last earlier layer of their type and keep none");
    // gemma3n: llama.cpp's fixed n_embd_altup of 256 (llama-hparams.h), whatever the file says
    if (const i64 p = g4 ? md.int_or(md.k("embedding_length_per_layer_input"), 0, 0, kMaxDim) : 256; p > 0) {
      const Tensor* table = tensor("per_layer_token_embd.weight");
      add_per_layer_embeddings(m, table && table->n_dims >= 2 ? table->dims[1] : m.vocab, p);
    }
    if (!g4) add_altup_laurel(m, 4, 64);  // llama.cpp's fixed n_altup and laurel_rank (llama-hparams.h)
  }

  void read_layernorm_family(bool learned_positions) {
    llama_like();
    for (auto& l : m.layers) {
      l.mlp = MlpKind::plain;
      l.qkv_bias = l.o_bias = l.mlp_bias = true;
    }
    m.norm = NormKind::layer;
    if (learned_positions) {
      m.learned_positions = m.max_context;
      if (const Tensor* t = tensor("position_embd.weight"); t && t->n_dims >= 2) m.learned_positions = t->dims[1];
    }
  }

  void read_falcon() {
    llama_like();
    for (auto& l : m.layers) {
      l.mlp = MlpKind::plain;
      l.norms = 1;  // parallel attention with one input LayerNorm (7B); attn_norm_2 tensors raise it (40B)
    }
    m.norm = NormKind::layer;
  }

  // llama.cpp deepseek2: MLA. Files converted since llama.cpp PR 12801 carry key_length_mla and cache
  // the latent (K rows kv_lora_rank + rope, V rows kv_lora_rank, one KV head); older files cache the
  // expanded per-head K and V. Layers from leading_dense_block_count on are MoE.
  void read_deepseek2() {
    const i64 kv_lora = md.get_int(md.k("attention.kv_lora_rank"), 1, kMaxDim);
    const i64 q_lora = md.int_or(md.k("attention.q_lora_rank"), 0, 0, kMaxDim);
    const i64 rope = md.get_int(md.k("rope.dimension_count"), 0, kMaxDim);
    const i64 lead = md.get_int(md.k("leading_dense_block_count"), 0, kMaxLayers);
    const auto k_mla = md.opt_int(md.k("attention.key_length_mla"), 1, kMaxDim);
    const i64 e = experts();
    const bool sigmoid = md.int_or(md.k("expert_gating_func"), 0, 0, 16) == 2;  // LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID
    for (i64 i = 0; i < n; ++i) {
      if (heads[i] < 1) md.fail(md.k("attention.head_count"), "layer " + std::to_string(i) + " has no attention heads");
      Layer l;
      l.mixer = Mixer::mla;
      l.q_heads = heads[i];
      l.kv_lora_rank = kv_lora;
      l.q_lora_rank = q_lora;
      l.qk_rope_head_dim = rope;
      if (k_mla) {
        if (*k_mla < rope) md.fail(md.k("attention.key_length_mla"), "is smaller than rope.dimension_count " + std::to_string(rope));
        l.kv = KvKind::mla_latent;
        l.kv_heads = 1;
        l.qk_nope_head_dim = *k_mla - rope;
        l.k_head_dim = kv_lora + rope;
        l.v_head_dim = md.get_int(md.k("attention.value_length_mla"), 1, kMaxDim);
      } else {
        if (k_dim < rope) md.fail(md.k("attention.key_length"), "is smaller than rope.dimension_count " + std::to_string(rope));
        check_gqa(i);
        l.kv = KvKind::mla_expanded;
        l.kv_heads = kv_heads[i];
        l.qk_nope_head_dim = k_dim - rope;
        l.k_head_dim = k_dim;
        l.v_head_dim = v_dim;
      }
      l.mlp = MlpKind::gated;
      l.intermediate = ff[i];
      if (e > 0 && i >= lead) {
        moe_layer(l, e, md.get_int(md.k("expert_feed_forward_length"), 1, kMaxDim), md.k("expert_feed_forward_length"));
        l.shared_intermediate = mul(md.get_int(md.k("expert_shared_count"), 0, kMaxExperts), l.expert_intermediate);
        l.router_score_bias = sigmoid;
      }
      m.layers.push_back(l);
    }
    if (!k_mla)
      note("no " + md.k("attention.key_length_mla") +
           ": an older conversion; llama.cpp caches the expanded per-head K and V instead of the MLA latent");
    if (auto mtp = md.opt_int(md.k("nextn_predict_layers"), 0, kMaxLayers); mtp && *mtp > 0)
      note(md.k("nextn_predict_layers") + " = " + std::to_string(*mtp) + ": MTP layers are counted in the tensor table");
  }

  void read_gpt_oss() {  // llama.cpp OPENAI_MOE: SWA on even layers (set_swa_pattern(2)), sinks, MoE with biases
    llama_like();
    const i64 w = md.get_int(md.k("attention.sliding_window"), 1, kMaxTokens);
    const i64 e = md.get_int(md.k("expert_count"), 1, kMaxExperts);
    const i64 width = md.get_int(md.k("expert_feed_forward_length"), 1, kMaxDim);
    for (i64 i = 0; i < n; ++i) {
      Layer& l = m.layers[i];
      l.qkv_bias = l.o_bias = true;
      l.attn_sinks = true;
      moe_layer(l, e, width, md.k("expert_feed_forward_length"));
      l.expert_bias = l.router_bias = true;
      if (i % 2 == 0) set_window(l, KvKind::sliding, w);
    }
  }

  // llama.cpp llama4: chunked attention of 8192 tokens on 3 of every 4 layers (set_swa_pattern(4));
  // the 4th (NoPE) layer is global. sliding_window = 0 in the file turns chunking off. MoE every
  // interleave_moe_layer_step layers, each with one shared expert of the expert width.
  void read_llama4() {
    llama_like();
    const auto swa = md.opt_int(md.k("attention.sliding_window"), 0, kMaxTokens);
    if (!(swa && *swa == 0)) {
      for (i64 i = 0; i < n; ++i)
        if (i % 4 < 3) set_window(m.layers[i], KvKind::chunked, 8192);
      note("llama4: chunked attention of 8192 tokens (llama.cpp's fixed n_swa) on 3 of every 4 layers");
    }
    const i64 e = experts();
    if (e == 0) return;
    const i64 step = md.get_int(md.k("interleave_moe_layer_step"), 1, kMaxLayers);
    const i64 width = md.get_int(md.k("expert_feed_forward_length"), 1, kMaxDim);
    for (i64 i = 0; i < n; ++i)
      if ((i + 1) % step == 0) {
        moe_layer(m.layers[i], e, width, md.k("expert_feed_forward_length"));
        m.layers[i].shared_intermediate = width;
      }
  }

  struct Ssm {
    i64 d_conv = 0, d_inner = 0, d_state = 0, dt_rank = 0, groups = 0;
  };

  Ssm read_ssm(bool groups) const {
    Ssm s;
    s.d_conv = md.get_int(md.k("ssm.conv_kernel"), 2, 1024);
    s.d_inner = md.get_int(md.k("ssm.inner_size"), 1, kMaxDim);
    s.d_state = md.get_int(md.k("ssm.state_size"), 1, kMaxDim);
    s.dt_rank = md.get_int(md.k("ssm.time_step_rank"), 1, kMaxDim);
    if (groups) s.groups = md.get_int(md.k("ssm.group_count"), 1, kMaxHeads);
    return s;
  }

  // Mamba: cache conv (d_conv - 1) x d_inner and ssm d_inner x d_state per sequence.
  static Layer mamba1_layer(const Ssm& s) {
    Layer l;
    l.kv = KvKind::ssm;
    l.mixer = Mixer::mamba1;
    l.d_inner = s.d_inner;
    l.d_state = s.d_state;
    l.d_conv = s.d_conv;
    l.dt_rank = s.dt_rank;
    l.conv_state_elems = mul(s.d_conv - 1, s.d_inner);
    l.ssm_state_elems = mul(s.d_inner, s.d_state);
    l.mlp = MlpKind::none;
    l.norms = 1;
    return l;
  }

  // Mamba2 (llama.cpp: n_head = ssm.time_step_rank): conv (d_conv - 1) x (d_inner + 2 groups d_state),
  // ssm d_inner x d_state per sequence.
  Layer mamba2_layer(const Ssm& s) const {
    if (s.d_inner % s.dt_rank != 0)
      md.fail(md.k("ssm.inner_size"), std::to_string(s.d_inner) + " is not divisible by ssm.time_step_rank (heads) " +
                                          std::to_string(s.dt_rank));
    Layer l;
    l.kv = KvKind::ssm;
    l.mixer = Mixer::mamba2;
    l.ssm_heads = s.dt_rank;
    l.d_inner = s.d_inner;
    l.d_state = s.d_state;
    l.n_groups = s.groups;
    l.d_conv = s.d_conv;
    l.conv_state_elems = mul(s.d_conv - 1, add(s.d_inner, mul(2, mul(s.groups, s.d_state))));
    l.ssm_state_elems = mul(s.d_inner, s.d_state);
    l.mlp = MlpKind::none;
    l.norms = 1;
    return l;
  }

  void read_mamba(bool v2) {
    const Ssm s = read_ssm(v2);
    for (i64 i = 0; i < n; ++i) m.layers.push_back(v2 ? mamba2_layer(s) : mamba1_layer(s));
  }

  // llama.cpp jamba: a layer is recurrent when its head_count_kv is 0; a layer with ffn_gate_inp is MoE
  // (feed_forward_length wide experts), the others a dense MLP.
  void read_jamba() {
    const Ssm s = read_ssm(false);
    const i64 e = experts();
    for (i64 i = 0; i < n; ++i) {
      Layer l;
      if (kv_heads[i] == 0) {
        l = mamba1_layer(s);
        l.mamba_inner_norms = true;
      } else {
        l = attention_layer(i);
      }
      l.norms = 2;
      l.mlp = MlpKind::gated;
      l.intermediate = ff[i];
      if (e > 1 && has_blk(i, "ffn_gate_inp.weight")) moe_layer(l, e, ff[i], md.k("feed_forward_length"));
      m.layers.push_back(l);
    }
  }

  // llama.cpp nemotron_h: head_count_kv 0 and feed_forward_length 0 -> Mamba2; head_count_kv > 0 ->
  // attention only; feed_forward_length > 0 -> MLP only (squared ReLU, up and down).
  void read_nemotron_h() {
    const Ssm s = read_ssm(true);
    for (i64 i = 0; i < n; ++i) {
      Layer l;
      if (kv_heads[i] == 0 && ff[i] == 0) {
        l = mamba2_layer(s);
      } else if (kv_heads[i] > 0) {
        l = attention_layer(i);
        l.mlp = MlpKind::none;
        l.intermediate = 0;
      } else {
        l.kv = KvKind::none;
        l.mixer = Mixer::none;
        l.mlp = MlpKind::plain;
        l.intermediate = ff[i];
      }
      l.norms = 1;
      m.layers.push_back(l);
    }
  }

  // llama.cpp granitemoe / granitehybrid (src/models/granite-moe.cpp, granite-hybrid.cpp): a layer is Mamba2 when its
  // head_count_kv is 0 (granitehybrid; ssm.* keys, time_step_rank heads); with expert_count > 0 every layer has
  // experts of feed_forward_length and, when expert_shared_feed_forward_length is set, a gated shared MLP of that
  // width; without experts a dense MLP of feed_forward_length.
  void read_granite_moe_hybrid() {
    const bool hybrid = std::any_of(kv_heads.begin(), kv_heads.end(), [](i64 k) { return k == 0; });
    const Ssm s = hybrid ? read_ssm(true) : Ssm{};
    const i64 e = experts();
    const i64 shared = md.int_or(md.k("expert_shared_feed_forward_length"), 0, 0, kMaxDim);
    for (i64 i = 0; i < n; ++i) {
      Layer l = kv_heads[i] == 0 ? mamba2_layer(s) : attention_layer(i);
      l.norms = 2;
      l.mlp = MlpKind::gated;
      l.intermediate = ff[i];
      if (e > 0) {
        moe_layer(l, e, ff[i], md.k("feed_forward_length"));
        l.shared_intermediate = shared;
      }
      m.layers.push_back(l);
    }
  }

  // llama.cpp falcon-h1 (src/models/falcon-h1.cpp): attention and a Mamba2 mixer (ssm.* keys, time_step_rank heads)
  // side by side in every block, then a gated MLP of feed_forward_length; llama_memory_hybrid keeps both caches on
  // every layer (src/llama-model.cpp create_memory: Falcon-H1's attention and recurrent filters both true). Two entries
  // per block as the config reader has them (the second joins_previous); ssm_norm, when present, is the gated norm.
  void read_falcon_h1() {
    const Ssm s = read_ssm(true);
    for (i64 i = 0; i < n; ++i) {
      Layer a = attention_layer(i);
      a.mlp = MlpKind::none;
      a.intermediate = 0;
      a.norms = 1;  // attn_norm, shared with the Mamba branch
      Layer r = mamba2_layer(s);
      r.mamba_gated_norm = has_blk(i, "ssm_norm.weight");
      r.mlp = MlpKind::gated;
      r.intermediate = ff[i];
      r.norms = 1;  // ffn_norm
      r.joins_previous = true;
      m.layers.push_back(a);
      m.layers.push_back(r);
    }
  }

  // llama.cpp lfm2 / lfm2moe (src/models/lfm2.cpp, lfm2moe.cpp): a layer with head_count_kv 0 is a short convolution
  // of shortconv.l_cache taps over n_embd channels (state (l_cache - 1) x n_embd, hparams n_embd_r); lfm2moe layers
  // from leading_dense_block_count on route expert_count experts of expert_feed_forward_length with a selection bias.
  void read_lfm2() {
    const i64 taps = md.get_int(md.k("shortconv.l_cache"), 1, 1024);
    const i64 e = experts();
    const i64 dense = e > 0 ? md.int_or(md.k("leading_dense_block_count"), 0, 0, kMaxLayers) : n;
    for (i64 i = 0; i < n; ++i) {
      Layer l;
      if (kv_heads[i] == 0) {
        l.kv = KvKind::ssm;
        l.mixer = Mixer::short_conv;
        l.d_inner = hidden;
        l.d_conv = taps;
        l.conv_bias = false;
        l.conv_state_elems = mul(taps - 1, hidden);
      } else {
        l = attention_layer(i);
      }
      l.norms = 2;
      l.mlp = MlpKind::gated;
      l.intermediate = ff[i];
      if (i >= dense) {
        moe_layer(l, e, md.get_int(md.k("expert_feed_forward_length"), 1, kMaxDim), md.k("expert_feed_forward_length"));
        l.router_score_bias = true;  // ffn_exp_probs_b
      }
      m.layers.push_back(l);
    }
  }

  void read_generic() {
    for (i64 i = 0; i < n; ++i) {
      if (kv_heads[i] == 0) {  // llama.cpp's mark of a layer without KV cache (recurrent in hybrids)
        Layer l;
        l.kv = KvKind::none;
        l.mixer = Mixer::none;
        l.intermediate = ff[i];
        m.layers.push_back(l);
      } else {
        m.layers.push_back(attention_layer(i));
      }
    }
    if (const i64 e = experts(); e > 0)
      for (i64 i = 0; i < n; ++i)
        moe_layer(m.layers[i], e, md.int_or(md.k("expert_feed_forward_length"), ff[i], 1, kMaxDim),
                  md.k("expert_feed_forward_length"));
  }

  // The tensor table is the truth about biases, norms and MLP shape; a layer without tensors keeps
  // its family defaults.
  // Entries are refined from their block's tensors (blk.i); a block of several entries (Falcon-H1) keeps the norms
  // its reader shared out between them.
  void refine_from_tensors() {
    const std::vector<i64> block_of = decoder_block_of(m.layers);
    for (size_t j = 0; j < m.layers.size(); ++j) {
      const i64 i = block_of[j];
      if (!layer_has_tensors(i)) continue;
      Layer& l = m.layers[j];
      const bool whole_block = !l.joins_previous && (j + 1 == m.layers.size() || !m.layers[j + 1].joins_previous);
      if (l.mixer == Mixer::attention) {
        l.qkv_bias = has_blk(i, "attn_q.bias") || has_blk(i, "attn_qkv.bias");
        l.o_bias = has_blk(i, "attn_output.bias");
        l.qk_norm = has_blk(i, "attn_q_norm.weight") && has_blk(i, "attn_k_norm.weight");
        l.attn_sinks = has_blk(i, "attn_sinks.weight");
      }
      if (l.mixer == Mixer::mamba1 || l.mixer == Mixer::mamba2) {
        l.conv_bias = has_blk(i, "ssm_conv1d.bias");
        l.proj_bias = has_blk(i, "ssm_in.bias");
        if (l.mixer == Mixer::mamba1) l.mamba_inner_norms = has_blk(i, "ssm_dt_norm.weight");
      }
      if (const Tensor* up = blk(i, "ffn_up.weight"); up && (l.mlp == MlpKind::gated || l.mlp == MlpKind::plain)) {
        // gate and up fused into one ffn_up of twice the width (phi3) is still a gated MLP
        const bool fused = l.intermediate > 0 && up->n_dims == 2 && up->dims[1] == mul(2, l.intermediate);
        l.mlp = has_blk(i, "ffn_gate.weight") || fused ? MlpKind::gated : MlpKind::plain;
        l.mlp_bias = has_blk(i, "ffn_up.bias");
      }
      if (l.mlp == MlpKind::moe) {
        l.expert_bias = has_blk(i, "ffn_up_exps.bias") || has_blk(i, "ffn_gate_up_exps.bias");
        l.router_bias = has_blk(i, "ffn_gate_inp.bias");
        l.router_score_bias = has_blk_prefix(i, "exp_probs_b.");
        l.shared_expert_gate = has_blk(i, "ffn_gate_inp_shexp.weight");
      }
      int norms = 0;
      for (const char* t : {"attn_norm.weight", "attn_norm_2.weight", "ffn_norm.weight", "post_attention_norm.weight",
                            "post_ffw_norm.weight"})
        norms += has_blk(i, t) ? 1 : 0;
      if (norms > 0 && whole_block) l.norms = norms;
    }
  }

  void read() {
    read_common();
    switch (arch) {
      case Arch::llama: read_llama(); break;
      case Arch::qwen2:
        llama_like();
        for (auto& l : m.layers) l.qkv_bias = true;
        note_swa_ignored("llama.cpp's qwen2 architecture attends to the full context on every layer");
        break;
      case Arch::qwen3:
        llama_like();
        for (auto& l : m.layers) l.qk_norm = true;
        break;
      case Arch::qwen2moe:
        read_qwen_moe(true);
        for (auto& l : m.layers) l.qkv_bias = true;
        break;
      case Arch::qwen3moe:
        read_qwen_moe(false);
        for (auto& l : m.layers) l.qk_norm = true;
        break;
      case Arch::gemma: read_gemma(0, 0); break;
      case Arch::gemma2: read_gemma(2, 4096); break;  // llama.cpp default n_swa = 4096 for gemma2
      case Arch::gemma3:
        read_gemma(6, 0);
        for (auto& l : m.layers) l.qk_norm = true;
        break;
      case Arch::phi3:
        llama_like();
        note_swa_ignored("llama.cpp disables Phi-3 sliding-window attention (PR 13676): every layer is full attention");
        break;
      case Arch::falcon: read_falcon(); break;
      case Arch::gpt2: read_layernorm_family(true); break;
      case Arch::starcoder: read_layernorm_family(true); break;
      case Arch::gptneox: read_layernorm_family(false); break;
      case Arch::deepseek2: read_deepseek2(); break;
      case Arch::gpt_oss: read_gpt_oss(); break;
      case Arch::llama4: read_llama4(); break;
      case Arch::mamba: read_mamba(false); break;
      case Arch::mamba2: read_mamba(true); break;
      case Arch::jamba: read_jamba(); break;
      case Arch::nemotron_h: read_nemotron_h(); break;
      case Arch::granitemoe:
      case Arch::granitehybrid: read_granite_moe_hybrid(); break;
      case Arch::lfm2: read_lfm2(); break;
      case Arch::falcon_h1: read_falcon_h1(); break;
      case Arch::gemma3n: read_gemma_ple(false); break;
      case Arch::gemma4: read_gemma_ple(true); break;
      case Arch::generic: read_generic(); break;
    }
    refine_from_tensors();
  }
};

// "<prefix>-00002-of-00003.gguf" for split index idx (0-based) of count (llama_split_path).
std::string split_name(const std::string& prefix, i64 idx, i64 count) {
  char tail[64];
  std::snprintf(tail, sizeof tail, "-%05lld-of-%05lld.gguf", static_cast<long long>(idx + 1), static_cast<long long>(count));
  return prefix + tail;
}

}  // namespace

bool is_gguf_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  if (!in.read(magic, 4)) return false;
  return std::memcmp(magic, "GGUF", 4) == 0;
}

// One tensor of a GGUF into the totals: its count, bytes, elements, bytes by ggml type, and (name, bytes).
// The tensor table by llama.cpp layer (ModelSpec::exact_layer_bytes; src/llama-model.cpp load_tensors and the
// LLM_TENSOR_INFOS layers): token_embd / position_embd / token_types are the input layer, blk.i.* block i, the rest
// the output layer (without the token_embd copy a tied head adds: core/weights.cpp layer_weight_bytes). Blocks past
// n_layer (nextn / MTP layers, skipped at load) are left out.
// `experts` gets, per block, the tensors --n-cpu-moe moves (common/common.h LLM_FFN_EXPS_REGEX:
// blk.i.ffn_(up|down|gate)_(ch|)exps, weights and biases alike).
static std::vector<i64> layer_table(const std::map<std::string, const Tensor*>& tensors, i64 n_layer, std::vector<i64>& experts) {
  std::vector<i64> t(static_cast<size_t>(n_layer + 2), 0);
  experts.assign(static_cast<size_t>(n_layer), 0);
  auto starts = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
  for (const auto& [name, ten] : tensors) {
    size_t slot = static_cast<size_t>(n_layer + 1);
    if (starts(name, "blk.")) {
      const size_t dot = name.find('.', 4);
      i64 il = -1;
      if (dot != std::string::npos && dot > 4 && dot - 4 <= 9 && name.find_first_not_of("0123456789", 4) == dot) il = std::stoll(name.substr(4, dot - 4));
      if (il >= n_layer) continue;
      if (il >= 0) {
        slot = static_cast<size_t>(il + 1);
        for (const char* stem : {".ffn_up_exps", ".ffn_down_exps", ".ffn_gate_exps", ".ffn_up_chexps", ".ffn_down_chexps", ".ffn_gate_chexps"})
          if (name.compare(dot, std::strlen(stem), stem) == 0) experts[static_cast<size_t>(il)] = add(experts[static_cast<size_t>(il)], ten->bytes, "tensor bytes");
      }
    } else if (starts(name, "token_embd.") || starts(name, "position_embd.") || starts(name, "token_types.") ||
               starts(name, "per_layer_token_embd.")) {  // LLM_TENSOR_LAYER_INPUT tensors (llama-arch.cpp): host memory
      slot = 0;
    }
    t[slot] = add(t[slot], ten->bytes, "tensor bytes");
  }
  return t;
}

static void count_tensor(GgufInfo& gi, const Tensor& t) {
  gi.tensor_count += 1;
  gi.tensor_bytes = add(gi.tensor_bytes, t.bytes, "tensor bytes");
  gi.tensor_elements = add(gi.tensor_elements, t.elements, "tensor elements");
  auto& by = gi.bytes_by_type[ggml_type(t.type)->name];
  by = add(by, t.bytes, "tensor bytes");
  gi.tensors.emplace_back(t.name, t.bytes);
}

GgufInfo gguf_tensor_table(const std::string& path, const std::string& expect_arch) {
  const Header h = read_header(path);
  Meta md{h, ""};
  if (!md.has("general.architecture"))
    md.fail("general.architecture", "missing; expected a string", "this GGUF is not a llama.cpp file");
  GgufInfo gi;
  gi.architecture = md.string_or("general.architecture", "");
  if (!expect_arch.empty() && gi.architecture != expect_arch)
    md.fail("general.architecture", "is \"" + shown(gi.architecture) + "\", not \"" + expect_arch + "\"",
            expect_arch == "clip" ? "pass the model's multimodal projector (mmproj) GGUF" : "pass a " + expect_arch + " GGUF");
  gi.name = md.string_or("general.name", "");
  gi.general_type = md.string_or("general.type", "");
  gi.version = h.version;
  for (const Tensor& t : h.tensors) count_tensor(gi, t);
  return gi;
}

ModelSpec model_from_gguf(const std::string& path, const std::string& id, GgufInfo* info) {
  const Header h = read_header(path);
  Meta md{h, ""};

  // Split models (gguf-split): the first file holds the metadata; every split holds part of the tensor table.
  std::vector<Header> parts;
  const i64 n_split = md.int_or("split.count", 1, 0, 10000);
  if (n_split > 1) {
    const i64 no = md.int_or("split.no", 0, 0, n_split - 1);
    const std::string own = split_name("", no, n_split);
    if (path.size() <= own.size() || path.compare(path.size() - own.size(), own.size(), own) != 0)
      md.fail("split.no", "the file is split " + std::to_string(no + 1) + " of " + std::to_string(n_split) +
                              " but its name does not end in \"" + own + "\"",
              "keep the names gguf-split gave the parts");
    if (no != 0)
      md.fail("split.no", "is " + std::to_string(no) + ": this is not the first split",
              "pass the first part, " + split_name(path.substr(0, path.size() - own.size()), 0, n_split));
    const std::string prefix = path.substr(0, path.size() - own.size());
    for (i64 s = 1; s < n_split; ++s) {
      const std::string p = split_name(prefix, s, n_split);
      std::error_code ec;
      if (!fs::exists(p, ec))
        throw InputError(p, "missing: split " + std::to_string(s + 1) + " of " + std::to_string(n_split) + " of " + path,
                         "download every part of the model");
      parts.push_back(read_header(p));
      const Meta pm{parts.back(), ""};
      if (pm.int_or("split.count", 0, 0, 10000) != n_split || pm.int_or("split.no", -1, -1, 10000) != s)
        throw InputError(p, "split.no / split.count do not say split " + std::to_string(s + 1) + " of " +
                                std::to_string(n_split), "the parts come from different models; download them again");
    }
  }

  if (!md.has("general.architecture"))
    md.fail("general.architecture", "missing; expected a string", "this GGUF is not a llama.cpp model file");
  md.arch = md.string_or("general.architecture", "");
  if (md.arch.empty()) md.fail("general.architecture", "is empty", "this GGUF is not a llama.cpp model file");
  if (md.arch == "clip")
    md.fail("general.architecture", "is \"clip\": this is a multimodal projector (mmproj) file, not a language model",
            "pass the model's own GGUF (llama-server -m), not its --mmproj file");
  const auto arch = arch_of(md.arch);
  ModelSpec m;
  m.id = id;
  m.model_type = shown(md.arch);
  m.architecture = shown(md.arch);
  m.dtype = ElemFormat::f16;  // llama.cpp's default K and V cache type
  m.dtype_from_config = false;
  if (!arch)
    m.warnings.push_back("unknown GGUF architecture '" + shown(md.arch) + "': assumed a decoder of full-attention layers (" +
                         shown(md.arch) + ".block_count, embedding_length, attention.head_count, head_count_kv, key_length, "
                         "value_length, feed_forward_length, expert_count) with a gated MLP and RMSNorm; sliding "
                         "windows and recurrent layers are not recognised");

  Builder b{md, arch.value_or(Arch::generic), m, {}};
  GgufInfo gi;
  gi.architecture = md.arch;
  gi.name = md.string_or("general.name", "");
  gi.version = h.version;
  if (auto ft = md.opt_int("general.file_type", 0, INT32_MAX)) gi.file_type = file_type_name(*ft);
  std::vector<const Header*> all{&h};
  for (const Header& p : parts) all.push_back(&p);
  for (const Header* hp : all) {
    for (const Tensor& t : hp->tensors) {
      if (!b.tensors.emplace(t.name, &t).second)
        throw InputError(hp->path, "tensor '" + shown(t.name) + "' also appears in another split", kFixCorrupt);
      count_tensor(gi, t);
    }
  }
  b.read();

  m.tied_embeddings = !b.has_tensor("output.weight");  // llama.cpp reuses token_embd when output is absent
  m.exact_weight_bytes = gi.tensor_bytes;
  m.exact_layer_bytes = layer_table(b.tensors, decoder_layers(m.layers), m.exact_expert_bytes);
  if (const auto it = b.tensors.find("token_embd.weight"); it != b.tensors.end()) m.exact_embedding_bytes = it->second->bytes;
  m.exact_params = gi.tensor_elements;
  if (n_split > 1) m.notes.push_back("weights from " + std::to_string(n_split) + " split files");
  if (info) *info = std::move(gi);
  return m;
}

}  // namespace kvplan::io
