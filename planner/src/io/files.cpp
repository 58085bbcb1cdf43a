// Atomic output files and the Hugging Face cache lookup (see files.hpp).
#include "kvplan/io/files.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "kvplan/core/error.hpp"

namespace kvplan::io {

namespace fs = std::filesystem;

namespace {

// The signal handler reads these: fixed buffers and a lock-free flag per slot (a path is complete before its flag is
// set and the flag is cleared before the path changes), unlink(2) and raise(3) being async-signal-safe.
constexpr std::size_t kTempPathMax = 4096;
char g_temp_paths[TempFileGuard::kMaxTempFiles][kTempPathMax];
std::atomic<int> g_temp_used[TempFileGuard::kMaxTempFiles];
std::atomic<bool> g_handlers_installed{false};
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temps_and_reraise(int sig) {
  for (int i = 0; i < TempFileGuard::kMaxTempFiles; ++i)
    if (g_temp_used[i].load(std::memory_order_acquire) == 1) ::unlink(g_temp_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers() {
  if (g_handlers_installed.exchange(true)) return;
  for (int sig : kCleanupSignals) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // nohup and friends: an ignored signal stays ignored
    struct sigaction sa {};
    sa.sa_handler = remove_temps_and_reraise;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

TempFileGuard::TempFileGuard(const std::string& path) {
  if (path.empty() || path.size() >= kTempPathMax) return;
  install_handlers();
  for (int i = 0; i < kMaxTempFiles; ++i) {
    int expected = 0;
    if (!g_temp_used[i].compare_exchange_strong(expected, 2)) continue;  // 2: being written, not yet read by a handler
    std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
    g_temp_used[i].store(1, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempFileGuard::~TempFileGuard() {
  if (slot_ >= 0) g_temp_used[slot_].store(0, std::memory_order_release);
}

bool is_special_file(const std::string& path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  return !ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st);
}

void check_writable(const std::string& path, const std::string& flag) {
  std::error_code ec;
  const fs::path p(path);
  if (path.empty()) throw InputError(flag, "empty output path", "give a file name");
  if (is_special_file(path)) {  // /dev/null, /dev/stdout, a FIFO: written in place, its folder need not be writable
    if (::access(p.c_str(), W_OK) != 0) throw RuntimeFailure(flag + ": '" + path + "' is not writable (" + std::strerror(errno) + ")");
    return;
  }
  if (fs::is_directory(p, ec)) throw InputError(flag, "'" + path + "' is a directory", "give a file name");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw InputError(flag, "folder '" + dir.string() + "' does not exist", "create it or write elsewhere");
  if (::access(dir.c_str(), W_OK) != 0)
    throw RuntimeFailure(flag + ": folder '" + dir.string() + "' is not writable (" + std::strerror(errno) + ")");
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0)
    throw RuntimeFailure(flag + ": '" + path + "' is not writable (" + std::strerror(errno) + ")");
}

std::string write_target(const std::string& path) {
  // a device or FIFO behind links (/dev/stdout -> /proc/self/fd/1 -> pipe:[N]) is opened by its own name
  if (is_special_file(path)) return path;
  fs::path p(path);
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path t = fs::read_symlink(p, ec);
    if (ec) break;
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
  return p.string();
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temps;
  std::vector<std::unique_ptr<TempFileGuard>> guards;  // a signal meanwhile removes the temporaries too
  auto cleanup = [&] {
    std::error_code ec;
    for (const auto& t : temps)
      if (!t.empty()) fs::remove(t, ec);
  };
  std::random_device rd;
  try {
    std::vector<std::string> targets;
    for (const auto& f : files) targets.push_back(write_target(f.first));
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string& path = targets[i];
      const std::string& content = files[i].second;
      if (is_special_file(path)) {
        temps.emplace_back();  // no temporary: a device or FIFO is written in place, after the regular files are ready
        continue;
      }
      const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd() % 100000);
      temps.push_back(tmp);
      guards.push_back(std::make_unique<TempFileGuard>(tmp));
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw RuntimeFailure(path + ": cannot create a temporary file (" + std::strerror(errno) + ")");
      out.write(content.data(), static_cast<std::streamsize>(content.size()));
      out.flush();
      if (!out) throw RuntimeFailure(path + ": write failed (" + std::strerror(errno) + ")");
    }
    for (size_t i = 0; i < files.size(); ++i) {
      if (temps[i].empty()) {
        std::ofstream out(files[i].first, std::ios::binary);
        out.write(files[i].second.data(), static_cast<std::streamsize>(files[i].second.size()));
        out.flush();
        if (!out) throw RuntimeFailure(files[i].first + ": write failed (" + std::strerror(errno) + ")");
        continue;
      }
      std::error_code ec;
      fs::rename(temps[i], targets[i], ec);
      if (ec) throw RuntimeFailure(files[i].first + ": cannot replace the file (" + ec.message() + ")");
    }
  } catch (...) {
    cleanup();
    throw;
  }
}

std::string find_in_hf_cache(const std::string& repo_id, std::string* looked) {
  // huggingface_hub's constants.py: HF_HUB_CACHE, else the legacy HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, where HF_HOME
  // defaults to $XDG_CACHE_HOME/huggingface, XDG_CACHE_HOME to ~/.cache
  const auto env = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
  };
  fs::path hub;
  if (const char* c = env("HF_HUB_CACHE")) hub = c;
  else if (const char* l = env("HUGGINGFACE_HUB_CACHE")) hub = l;
  else if (const char* h = env("HF_HOME")) hub = fs::path(h) / "hub";
  else if (const char* x = env("XDG_CACHE_HOME")) hub = fs::path(x) / "huggingface" / "hub";
  else if (const char* home = env("HOME")) hub = fs::path(home) / ".cache" / "huggingface" / "hub";
  std::string folder = "models--";
  for (char c : repo_id) folder += c == '/' ? std::string("--") : std::string(1, c);
  const fs::path repo = hub / folder;
  if (looked) *looked = repo.string();
  std::error_code ec;
  if (!fs::is_directory(repo / "snapshots", ec)) return {};
  std::string rev;
  if (std::ifstream ref(repo / "refs" / "main"); ref) std::getline(ref, rev);
  if (!rev.empty() && fs::exists(repo / "snapshots" / rev / "config.json", ec)) return (repo / "snapshots" / rev / "config.json").string();
  std::string best;
  for (const auto& e : fs::directory_iterator(repo / "snapshots", ec))
    if (fs::exists(e.path() / "config.json", ec) && e.path().string() > best) best = e.path().string();
  return best.empty() ? std::string() : (fs::path(best) / "config.json").string();
}

}  // namespace kvplan::io
