// Index files: one integer per line, so that indices from a real graph or another tool can be replayed.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"
#include "workloads/workload.hpp"

namespace tilesim::workloads {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::int32_t> read_index_file(const std::string& path, std::int64_t expected_count, std::int64_t range,
                                          const std::string& workload_file, const std::string& json_path) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& expected, const std::string& found) -> void {
    throw InputError(workload_file, json_path, expected, found);
  };

  // One look-up answers every question about the path.
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  // A path the system cannot look up (too long, a component that is not a folder) is not "no file".
  if (ec && ec != std::errc::no_such_file_or_directory)
    fail("an index file", "\"" + path.substr(0, 200) + (path.size() > 200 ? "..." : "") + "\", which cannot be opened (" + ec.message() + ")");
  if (status.type() == fs::file_type::not_found) fail("an index file", "no file \"" + path + "\"");
  if (fs::is_directory(status)) fail("an index file", "\"" + path + "\", which is a directory");
  // A device or a pipe (/dev/zero, /dev/stdin) would be read without end or wait for a writer; graph,
  // base and chip files are refused the same way.
  if (!fs::is_regular_file(status)) fail("an index file", "\"" + path + "\", which is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("a readable index file", "\"" + path + "\", which cannot be read");

  const std::string range_text = "[0, " + std::to_string(range) + ")";
  const std::string count_text = std::to_string(expected_count) + (expected_count == 1 ? " index" : " indices");
  std::vector<std::int32_t> indices;
  indices.reserve(static_cast<std::size_t>(std::min<std::int64_t>(expected_count, std::int64_t{1} << 20)));
  std::size_t line_number = 0;

  // One line at a time from a fixed-size buffer: a line that is not a comment holds one integer, so
  // a longer one (a file without line ends, /dev/zero) is refused after limits::max_index_line_bytes
  // instead of being read whole. Comment lines are skipped without being kept, however long.
  auto take_line = [&](std::string_view raw) {
    ++line_number;
    // Built only for a message: files of millions of lines must read quickly.
    auto where = [&] { return " at " + path + ":" + std::to_string(line_number); };
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') return;
    std::int64_t value = 0;
    const auto [ptr, err] = std::from_chars(line.data(), line.data() + line.size(), value);
    const bool all_digits = line.find_first_not_of("-0123456789") == std::string_view::npos;
    if (err == std::errc::result_out_of_range && all_digits) {
      const std::string shown = line.size() > 40 ? quoted_excerpt(line) : std::string(line);
      fail("an index in " + range_text + " on each line", shown + where());
    }
    if (err != std::errc() || ptr != line.data() + line.size()) {
      fail("one integer per line", quoted_excerpt(line) + where());
    }
    if (value < 0 || value >= range) fail("an index in " + range_text + " on each line", std::to_string(value) + where());
    if (static_cast<std::int64_t>(indices.size()) == expected_count) {
      fail(count_text + " (one per line)", "more: index number " + std::to_string(expected_count + 1) + where());
    }
    indices.push_back(static_cast<std::int32_t>(value));
  };
  std::string line;
  bool in_comment = false;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i) {
      const char c = buffer[i];
      if (c == '\n') {
        if (!in_comment) take_line(line);
        else ++line_number;
        line.clear();
        in_comment = false;
        continue;
      }
      if (in_comment) continue;
      if (c == '#' && trim(line).empty()) {
        in_comment = true;
        continue;
      }
      line.push_back(c);
      if (static_cast<std::int64_t>(line.size()) > limits::max_index_line_bytes)
        fail("one integer per line (lines of at most " + std::to_string(limits::max_index_line_bytes) + " bytes)",
             "a longer line " + quoted_excerpt(line) + " at " + path + ":" + std::to_string(line_number + 1));
    }
  }
  if (in.bad()) fail("a readable index file", "\"" + path + "\", which could not be read to its end");
  if (in_comment) ++line_number;
  else if (!line.empty()) take_line(line);
  if (static_cast<std::int64_t>(indices.size()) != expected_count) {
    fail(count_text + " (one per line)", std::to_string(indices.size()) + " in " + path);
  }
  return indices;
}

}  // namespace tilesim::workloads
