// A little-endian GGUF writer for tests and tools: metadata entries, tensor infos with aligned
// offsets, padding, then the data section. Tensors are zero unless given a fill value; zero tensors
// are left as holes of a sparse file, so a file with large tensors costs no disk.
// Layout: ggml docs/gguf.md (version 3). Header-only, standard library only.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvtest {

// GGUF metadata value types (ggml docs/gguf.md) and the ggml tensor types these writers use.
enum : std::uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 };
enum : std::uint32_t { T_F32 = 0, T_F16 = 1, T_Q4_0 = 2, T_Q8_0 = 8, T_Q4_K = 12, T_BF16 = 30, T_MXFP4 = 39 };

// Bytes of n elements (ggml-common.h blocks: q4_0 18 B / 32, q8_0 34 B / 32, q4_K 144 B / 256,
// mxfp4 17 B / 32); the writer uses it only to lay out offsets.
inline std::int64_t type_bytes(std::uint32_t type, std::int64_t n) {
  switch (type) {
    case T_F32:
      return n * 4;
    case T_F16:
    case T_BF16:
      return n * 2;
    case T_Q4_0:
      return n / 32 * 18;
    case T_Q8_0:
      return n / 32 * 34;
    case T_Q4_K:
      return n / 256 * 144;
    case T_MXFP4:
      return n / 32 * 17;
    default:
      return 0;
  }
}

inline void le(std::string& s, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

inline void str_(std::string& s, const std::string& v) {
  le(s, v.size(), 8);
  s += v;
}

// IEEE half of a float that is exactly representable in it (small constants such as 1.0, 0.5).
inline std::uint16_t half_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000;
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  if ((u & 0x7fffffff) == 0) return static_cast<std::uint16_t>(sign);
  if (exp <= 0 || exp >= 31) throw std::invalid_argument("half_of: value out of the f16 normal range");
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exp) << 10) | ((u >> 13) & 0x3ff));
}

class Writer {
 public:
  std::uint32_t version = 3;
  std::uint64_t alignment = 32;

  // low-level pieces, for entries a well-formed writer would not produce
  Writer& key(const std::string& k, std::uint32_t type) {
    ++n_kv_;
    str_(kv_, k);
    le(kv_, type, 4);
    return *this;
  }
  Writer& put(std::uint64_t v, int bytes) {
    le(kv_, v, bytes);
    return *this;
  }
  Writer& put_str(const std::string& s) {
    str_(kv_, s);
    return *this;
  }

  Writer& u32(const std::string& k, std::uint32_t v) { return key(k, U32).put(v, 4); }
  Writer& u64(const std::string& k, std::uint64_t v) { return key(k, U64).put(v, 8); }
  Writer& i32(const std::string& k, std::int32_t v) { return key(k, I32).put(static_cast<std::uint32_t>(v), 4); }
  Writer& f32(const std::string& k, float v) { return key(k, F32).put(bits(v), 4); }
  Writer& boolean(const std::string& k, bool v) { return key(k, BOOL).put(v ? 1 : 0, 1); }
  Writer& str(const std::string& k, const std::string& v) { return key(k, STR).put_str(v); }
  Writer& arr_i32(const std::string& k, const std::vector<std::int32_t>& v) {
    key(k, ARR).put(I32, 4).put(v.size(), 8);
    for (auto x : v) put(static_cast<std::uint32_t>(x), 4);
    return *this;
  }
  Writer& arr_u32(const std::string& k, const std::vector<std::uint32_t>& v) {
    key(k, ARR).put(U32, 4).put(v.size(), 8);
    for (auto x : v) put(x, 4);
    return *this;
  }
  Writer& arr_bool(const std::string& k, const std::vector<bool>& v) {
    key(k, ARR).put(BOOL, 4).put(v.size(), 8);
    for (bool x : v) put(x ? 1 : 0, 1);
    return *this;
  }
  Writer& arr_f32(const std::string& k, const std::vector<float>& v) {
    key(k, ARR).put(F32, 4).put(v.size(), 8);
    for (auto x : v) put(bits(x), 4);
    return *this;
  }
  Writer& arr_str(const std::string& k, const std::vector<std::string>& v) {
    key(k, ARR).put(STR, 4).put(v.size(), 8);
    for (const auto& s : v) put_str(s);
    return *this;
  }

  // A tensor of dims (ggml order: the first is the row length) and ggml type; fill != 0 writes every
  // element as fill (f32 and f16 only), else the tensor is zeros.
  Writer& tensor(const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type, float fill = 0.0f) {
    tensors_.push_back({name, std::move(dims), type, fill});
    return *this;
  }

  // Byte offset where the tensor infos start (after the 24-byte header and the metadata).
  std::int64_t infos_at() const { return 24 + static_cast<std::int64_t>(kv_.size()); }

  // Header, metadata, tensor infos and padding; *data_bytes receives the size of the data section.
  std::string header(std::uint64_t* data_bytes = nullptr) const {
    std::string out = "GGUF";
    le(out, version, 4);
    le(out, tensors_.size(), 8);
    le(out, n_kv_, 8);
    out += kv_;
    std::uint64_t offset = 0;
    for (const auto& t : tensors_) {
      str_(out, t.name);
      le(out, t.dims.size(), 4);
      for (auto d : t.dims) le(out, d, 8);
      le(out, t.type, 4);
      le(out, offset, 8);
      offset += padded(t);
    }
    while (out.size() % alignment != 0) out += '\0';
    if (data_bytes) *data_bytes = offset;
    return out;
  }

  // Writes the whole file to path (tensors with a fill value written out, the rest left as holes) and
  // returns path as a string.
  std::string save(const std::filesystem::path& path) const {
    std::uint64_t data = 0;
    const std::string out = header(&data);
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      if (!f) throw std::runtime_error("cannot write " + path.string());
      f.write(out.data(), static_cast<std::streamsize>(out.size()));
      std::uint64_t offset = 0;
      for (const auto& t : tensors_) {
        if (t.fill != 0.0f) {
          const std::string bytes = filled(t);
          f.seekp(static_cast<std::streamoff>(out.size() + offset));
          f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        }
        offset += padded(t);
      }
      if (!f) throw std::runtime_error("cannot write " + path.string());
    }
    std::filesystem::resize_file(path, out.size() + data);  // zeros, without writing them
    return path.string();
  }

 private:
  struct Info {
    std::string name;
    std::vector<std::uint64_t> dims;
    std::uint32_t type;
    float fill;
  };

  static std::uint32_t bits(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
  }
  static std::int64_t elements(const Info& t) {
    std::int64_t n = 1;
    for (auto d : t.dims) n *= static_cast<std::int64_t>(d);
    return n;
  }
  std::uint64_t padded(const Info& t) const {
    const auto b = static_cast<std::uint64_t>(type_bytes(t.type, elements(t)));
    return (b + alignment - 1) / alignment * alignment;
  }
  static std::string filled(const Info& t) {
    std::string s;
    const std::int64_t n = elements(t);
    if (t.type == T_F32) {
      for (std::int64_t i = 0; i < n; ++i) le(s, bits(t.fill), 4);
    } else if (t.type == T_F16) {
      const std::uint16_t h = half_of(t.fill);
      for (std::int64_t i = 0; i < n; ++i) le(s, h, 2);
    } else {
      throw std::invalid_argument("tensor '" + t.name + "': a fill value needs type f32 or f16");
    }
    return s;
  }

  std::string kv_;
  std::uint64_t n_kv_ = 0;
  std::vector<Info> tensors_;
};

// n placeholder token strings "t0", "t1", ...
inline std::vector<std::string> tokens(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("t" + std::to_string(i));
  return v;
}

// A tiny two-block model of architecture `arch` (hidden 256, 4 heads, 2 KV heads, FFN 512, a 32-token vocabulary)
// with its q8_0 token embedding [256 x 32] and f32 output norm; the test adds the blocks' tensors
inline Writer two_block(const std::string& arch, std::uint32_t context_length) {
  Writer w;
  w.str("general.architecture", arch)
      .u32(arch + ".block_count", 2)
      .u32(arch + ".context_length", context_length)
      .u32(arch + ".embedding_length", 256)
      .u32(arch + ".feed_forward_length", 512)
      .u32(arch + ".attention.head_count", 4)
      .u32(arch + ".attention.head_count_kv", 2)
      .arr_str("tokenizer.ggml.tokens", tokens(32));
  w.tensor("token_embd.weight", {256, 32}, T_Q8_0).tensor("output_norm.weight", {256}, T_F32);
  return w;
}

}  // namespace kvtest
