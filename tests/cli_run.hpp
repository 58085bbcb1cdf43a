// Runs the kvplan binary from a test (no shell), capturing exit status, stdout and stderr.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace kvtest {

struct Run {
  int exit = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A per-process scratch folder for a test's files: <temp>/kvplan-<tag>-<pid>.
inline std::filesystem::path temp_dir(const std::string& tag) {
  const auto d = std::filesystem::temp_directory_path() / ("kvplan-" + tag + "-" + std::to_string(getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// Writes `text` to `name` in temp_dir(tag) and returns its path.
inline std::string write_temp(const std::string& tag, const std::string& name, const std::string& text) {
  const auto p = temp_dir(tag) / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// Runs the kvplan binary with these arguments (no shell), capturing stdout and stderr.
inline Run kvplan(const std::vector<std::string>& args) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string out = (dir / ("kvplan-fd-out-" + std::to_string(getpid()))).string();
  const std::string err = (dir / ("kvplan-fd-err-" + std::to_string(getpid()))).string();
  std::vector<std::string> all = {KVPLAN_EXE};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  Run r;
  if (posix_spawn(&pid, KVPLAN_EXE, &fa, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&fa);
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

// Runs kvplan with a test's base arguments followed by one check's own.
inline Run kvplan(std::vector<std::string> base, const std::vector<std::string>& extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return kvplan(base);
}

}  // namespace kvtest
