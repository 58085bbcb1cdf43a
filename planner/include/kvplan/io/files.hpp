// Output files written atomically (temporary file in the same folder, then rename): after any
// error no partial file remains and an existing file is untouched.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kvplan::io {

/// Checks that `path` can be written (its folder exists and is writable; it is not a directory).
/// Missing folder or a directory: InputError (exit 2). Permission denied: RuntimeFailure (exit 3).
void check_writable(const std::string& path, const std::string& flag);

/// Writes every (path, content) pair atomically. All are first written to temporary files; only
/// when all succeeded are they renamed into place. On failure every temporary file is removed.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);
/// An existing path that is neither a regular file nor a folder (a device such as /dev/null or /dev/stdout, a FIFO,
/// a socket): outputs are written into it as it is, never replaced by a renamed file.
bool is_special_file(const std::string& path);

/// The file a write to `path` lands in: `path`, or the end of its chain of symbolic links (a link named as an output
/// keeps pointing at the report rather than being replaced by a regular file), relative targets read from the link's
/// folder.
std::string write_target(const std::string& path);

/// A temporary output file that an interrupt must not leave behind: while registered, SIGINT, SIGTERM and SIGHUP
/// unlink it before the process dies of the signal (the handlers, installed on the first registration, re-raise it
/// with the default action, so the exit status still says which signal ended the run). At most kMaxTempFiles at once
/// and paths under 4 KiB are tracked; others are still removed on every normal path, only not on a signal.
class TempFileGuard {
 public:
  static constexpr int kMaxTempFiles = 32;
  explicit TempFileGuard(const std::string& path);
  ~TempFileGuard();
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  int slot_ = -1;
};

/// Where a Hugging Face model id (ORG/NAME) is cached: $HF_HUB_CACHE, else $HF_HOME/hub, else
/// ~/.cache/huggingface/hub; models--ORG--NAME/snapshots/<rev>/config.json, the revision from
/// refs/main when present (else the last snapshot). Empty when absent; `looked` gets the folder.
std::string find_in_hf_cache(const std::string& repo_id, std::string* looked);

}  // namespace kvplan::io
