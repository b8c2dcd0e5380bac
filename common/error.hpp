#pragma once
// Errors a user can act on, each with the exit code the CLI returns for it (documented in README.md).
#include <stdexcept>
#include <string>

namespace tilesim {

enum class ExitCode : int {
  success = 0,
  internal_error = 1,  // a bug in tilesim, or the machine ran out of something
  bad_input = 2,       // usage, workload file, machine file, index file
  does_not_fit = 3,    // the workload cannot be planned on the machine
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad input. The message reads "FILE: JSON_PATH: expected EXPECTED, found FOUND" so a user can go
// straight to the place; file and json_path may be empty when they do not apply.
class InputError : public Error {
 public:
  InputError(const std::string& file, const std::string& json_path, const std::string& expected,
             const std::string& found);
  explicit InputError(const std::string& message) : Error(ExitCode::bad_input, message) {}

  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }

 private:
  std::string file_, json_path_;
};

// The workload is valid but does not fit the machine (tile memory, tile count).
class PlanError : public Error {
 public:
  explicit PlanError(const std::string& message) : Error(ExitCode::does_not_fit, message) {}
};

}  // namespace tilesim
