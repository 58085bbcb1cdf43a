// Atomic output files and the local Hugging Face cache lookup.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "helpers.hpp"
#include "kvplan/io/files.hpp"
#include "kvplan/io/profiles.hpp"

namespace fs = std::filesystem;
using namespace kvplan;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("atomic writes replace files whole and leave nothing behind on failure", "[files]") {
  const fs::path dir = fs::temp_directory_path() / "kvplan-test-atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  io::write_files_atomically({{(dir / "a.txt").string(), "one"}, {(dir / "b.txt").string(), "two"}});
  CHECK(slurp(dir / "a.txt") == "one");
  CHECK(slurp(dir / "b.txt") == "two");
  // the second target cannot be written (its folder is missing): the first must stay as it was
  CHECK_THROWS_AS(io::write_files_atomically({{(dir / "a.txt").string(), "new"}, {(dir / "missing" / "c.txt").string(), "x"}}), RuntimeFailure);
  CHECK(slurp(dir / "a.txt") == "one");
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().string().find(".tmp.") != std::string::npos;
  CHECK(n == 0);
  CHECK_THROWS_WITH(io::check_writable((dir / "missing" / "x.json").string(), "--json"),
                    "--json: folder '" + (dir / "missing").string() + "' does not exist; create it or write elsewhere");
  CHECK_THROWS_WITH(io::check_writable(dir.string(), "--json"), "--json: '" + dir.string() + "' is a directory; give a file name");
  fs::remove_all(dir);
}

TEST_CASE("an output onto a device or FIFO is written in place, never replaced by a file", "[files]") {
  // /dev/null stays the character device (a rename over it, as root, would have replaced it with a regular file)
  CHECK(kvplan::io::is_special_file("/dev/null"));
  CHECK_NOTHROW(kvplan::io::check_writable("/dev/null", "--json"));
  kvplan::io::write_files_atomically({{"/dev/null", "x"}});
  CHECK(std::filesystem::is_character_file("/dev/null"));
  // a FIFO: the reader gets the content, and the FIFO is still one afterwards
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "out").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo);
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  kvplan::io::write_files_atomically({{fifo, "hello\n"}});
  reader.join();
  CHECK(got == "hello\n");
  CHECK(std::filesystem::is_fifo(fifo));
  CHECK_FALSE(kvplan::io::is_special_file((dir / "plain").string()));  // a path that does not exist is no device
  std::filesystem::remove_all(dir);
}

TEST_CASE("Hugging Face ids resolve through the local cache only", "[files][hf]") {
  const fs::path hub = fs::temp_directory_path() / "kvplan-test-hub";
  fs::remove_all(hub);
  const fs::path snap = hub / "models--acme--tiny-llama" / "snapshots" / "abc123";
  fs::create_directories(snap);
  fs::create_directories(hub / "models--acme--tiny-llama" / "refs");
  fs::copy_file(kvtest::data("configs/llama-3-8b.json"), snap / "config.json");
  std::ofstream(hub / "models--acme--tiny-llama" / "refs" / "main") << "abc123";
  ::setenv("HF_HUB_CACHE", hub.c_str(), 1);
  std::string looked;
  CHECK(io::find_in_hf_cache("acme/tiny-llama", &looked) == (snap / "config.json").string());
  const auto profiles = io::Profiles::load(std::nullopt);
  std::string origin;
  const ModelSpec m = profiles.model("acme/tiny-llama", &origin);
  CHECK(origin == (snap / "config.json").string());
  CHECK(m.layers.size() == 32);
  // not cached and no built-in of that name: an error that says where it looked
  CHECK_THROWS_WITH(profiles.model("acme/other"),
                    "model 'acme/other' not found in the local Hugging Face cache (looked in " + (hub / "models--acme--other").string() +
                        "); download it (huggingface-cli download acme/other config.json, with hf_quant_config.json for an NVIDIA ModelOpt export), or give a config.json path or a built-in id");
  // not cached but a built-in has the name: the profile, with a warning
  const ModelSpec b = profiles.model("meta-llama/Llama-3.1-8B-Instruct");
  REQUIRE(b.warnings.size() == 1);
  CHECK(b.warnings[0].find("using the built-in profile 'llama-3.1-8b'") != std::string::npos);
  ::unsetenv("HF_HUB_CACHE");
  // huggingface_hub's other roots, in its order: the legacy HUGGINGFACE_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub
  const auto with_env = [&](const char* name, const fs::path& value) {
    const char* names[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"};
    std::vector<std::pair<std::string, std::string>> saved;
    for (const char* n : names)
      if (const char* v = std::getenv(n)) saved.emplace_back(n, v);
    for (const char* n : names) ::unsetenv(n);
    ::setenv(name, value.c_str(), 1);
    const std::string found = io::find_in_hf_cache("acme/tiny-llama", nullptr);
    ::unsetenv(name);
    for (const auto& [n, v] : saved) ::setenv(n.c_str(), v.c_str(), 1);
    return found;
  };
  CHECK(with_env("HUGGINGFACE_HUB_CACHE", hub) == (snap / "config.json").string());
  const fs::path home = fs::temp_directory_path() / "kvplan-test-hf-home";
  fs::remove_all(home);
  fs::create_directories(home / "huggingface");
  fs::rename(hub, home / "huggingface" / "hub");
  CHECK(with_env("HF_HOME", home / "huggingface") == (home / "huggingface" / "hub" / "models--acme--tiny-llama" / "snapshots" / "abc123" / "config.json").string());
  CHECK(with_env("XDG_CACHE_HOME", home) == (home / "huggingface" / "hub" / "models--acme--tiny-llama" / "snapshots" / "abc123" / "config.json").string());
  fs::remove_all(home);
  fs::remove_all(hub);
}
