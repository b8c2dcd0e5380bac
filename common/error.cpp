#include "common/error.hpp"

namespace tilesim {

namespace {
std::string format_input_error(const std::string& file, const std::string& json_path,
                               const std::string& expected, const std::string& found) {
  std::string message;
  if (!file.empty()) message += file + ": ";
  if (!json_path.empty()) message += json_path + ": ";
  message += "expected " + expected + ", found " + found;
  return message;
}
}  // namespace

InputError::InputError(const std::string& file, const std::string& json_path,
                       const std::string& expected, const std::string& found)
    : Error(ExitCode::bad_input, format_input_error(file, json_path, expected, found)),
      file_(file),
      json_path_(json_path) {}

}  // namespace tilesim
