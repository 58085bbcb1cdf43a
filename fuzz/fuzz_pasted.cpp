// libFuzzer harness: a command pasted after `--`, through the whole front door: the words (NUL-
// separated; the first byte picks the engine named outside the command and its version) read by the
// engine's flag table with variables, the settings bag, the typed deployment and its plan.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kvplan/io/cmdline.hpp"
#include "kvplan/io/deployment_build.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kvplan::io::Profiles profiles = kvplan::io::Profiles::load(std::nullopt);
  if (size == 0) return 0;
  static const char* hints[] = {"", "vllm", "sglang", "llama.cpp", "trtllm", "vllm@0.10", "sglang@0.4.6", "llama.cpp@b5937"};
  const std::string hint = hints[data[0] % 8];
  std::vector<std::string> words(1);
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0) words.emplace_back();
    else words.back() += static_cast<char>(data[i]);
  }
  try {
    kvplan::io::CommandContext ctx;
    ctx.version = hint.find('@') == std::string::npos ? "" : hint.substr(hint.find('@') + 1);
    ctx.variables = {{"MODEL", "llama-3.1-8b"}, {"TP", "2"}, {"LEN", "8192"}};
    const auto cmd = kvplan::io::parse_engine_command(words, hint.substr(0, hint.find('@')), "fuzz", ctx);
    kvplan::io::SettingsBag bag;
    bag.set("engine", cmd.engine, {kvplan::io::Origin::Kind::command, "fuzz", "engine"});
    bag.set("model", cmd.model.empty() ? "llama-3.1-8b" : cmd.model, {kvplan::io::Origin::Kind::command, "fuzz", "model"});
    for (const auto& s : cmd.settings) bag.set(s.key, s.value, {kvplan::io::Origin::Kind::command, s.where, s.flag});
    const auto built = kvplan::io::build_deployment(bag, profiles);
    const kvplan::Planner p(kvplan::plan_spec(built.spec));
    (void)p.cell(4096, 8);
  } catch (const kvplan::InputError&) {
  }
  return 0;
}
