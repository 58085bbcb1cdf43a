// Error types shared by every kvplan layer.
// InputError is bad input (exit 2), RuntimeFailure is an environment or device fault (exit 3).
// Overflow is a kind of InputError: it is always caused by sizes the user asked for.
#pragma once

#include <stdexcept>
#include <string>

namespace kvplan {

/// Bad input: `where` names the file/flag/JSON path, `what` the problem, `fix` what to do.
class InputError : public std::runtime_error {
 public:
  InputError(std::string where, std::string what, std::string fix = {})
      : std::runtime_error(compose(where, what, fix)),
        where_(std::move(where)), what_(std::move(what)), fix_(std::move(fix)) {}
  const std::string& where() const noexcept { return where_; }
  const std::string& problem() const noexcept { return what_; }
  const std::string& fix() const noexcept { return fix_; }

  static std::string compose(const std::string& where, const std::string& what,
                             const std::string& fix) {
    std::string s = where.empty() ? what : where + ": " + what;
    if (!fix.empty()) s += "; " + fix;
    return s;
  }

 private:
  std::string where_, what_, fix_;
};

/// A product or sum of sizes that does not fit in a signed 64-bit integer.
class OverflowError : public InputError {
 public:
  explicit OverflowError(std::string what)
      : InputError("arithmetic", std::move(what),
                   "the inputs describe more bytes than 2^63; reduce context, concurrency or sizes") {}
};

/// Environment fault: I/O, device, CUDA (exit 3).
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kvplan
