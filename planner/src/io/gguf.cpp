// GGUF reading (stub: being written).
#include "kvplan/io/gguf.hpp"

namespace kvplan::io {
bool is_gguf_file(const std::string&) { return false; }
ModelSpec model_from_gguf(const std::string& path, const std::string&, GgufInfo*) {
  throw InputError(path, "GGUF reading is not built yet");
}
}  // namespace kvplan::io
