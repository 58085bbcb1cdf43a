// Engine command lines (stub: being written).
#include "kvplan/io/cmdline.hpp"

namespace kvplan::io {
std::vector<std::string> shell_split(const std::string& text, const std::string&) { return {text}; }
EngineCommand parse_engine_command(const std::vector<std::string>&, const std::string&, const std::string& where) {
  throw InputError(where, "engine command lines are not built yet");
}
}  // namespace kvplan::io
