// Index files: one integer per line, so that indices from a real graph or another tool can be replayed.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>

#include "common/error.hpp"
#include "workloads/workload.hpp"

namespace tilesim::workloads {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A line as it may be quoted in a message: long lines are cut so that the message stays readable.
std::string quote_line(std::string_view s) {
  constexpr std::size_t max_chars = 40;
  std::string text(s.substr(0, max_chars));
  if (s.size() > max_chars) text += "...";
  return "\"" + text + "\"";
}

}  // namespace

std::vector<std::int32_t> read_index_file(const std::string& path, std::int64_t expected_count, std::int64_t range,
                                          const std::string& workload_file, const std::string& json_path) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& expected, const std::string& found) -> void {
    throw InputError(workload_file, json_path, expected, found);
  };

  std::error_code ec;
  if (!fs::exists(path, ec)) fail("an index file", "no file \"" + path + "\"");
  if (fs::is_directory(path, ec)) fail("an index file", "\"" + path + "\", which is a directory");
  // A device or a pipe (/dev/zero, /dev/stdin) would be read without end or wait for a writer; graph,
  // base and chip files are refused the same way.
  if (!fs::is_regular_file(path, ec)) fail("an index file", "\"" + path + "\", which is not a regular file");
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in) fail("a readable index file", "\"" + path + "\", which cannot be read");

  const std::string range_text = "[0, " + std::to_string(range) + ")";
  const std::string count_text = std::to_string(expected_count) + (expected_count == 1 ? " index" : " indices");
  std::vector<std::int32_t> indices;
  // Each index takes at least two bytes (a digit and a line end), so a short file reserves little
  // even when the op expects billions.
  indices.reserve(std::min(static_cast<std::size_t>(expected_count), text.size() / 2 + 1));
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view raw(text.data() + start, end - start);
    start = end + 1;
    ++line_number;
    // Built only for a message: files of millions of lines must read quickly.
    auto where = [&] { return " at " + path + ":" + std::to_string(line_number); };

    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    std::int64_t value = 0;
    const auto [ptr, err] = std::from_chars(line.data(), line.data() + line.size(), value);
    const bool all_digits = line.find_first_not_of("-0123456789") == std::string_view::npos;
    if (err == std::errc::result_out_of_range && all_digits) {
      const std::string shown = line.size() > 40 ? quote_line(line) : std::string(line);
      fail("an index in " + range_text + " on each line", shown + where());
    }
    if (err != std::errc() || ptr != line.data() + line.size()) {
      fail("one integer per line", quote_line(line) + where());
    }
    if (value < 0 || value >= range) fail("an index in " + range_text + " on each line", std::to_string(value) + where());
    if (static_cast<std::int64_t>(indices.size()) == expected_count) {
      fail(count_text + " (one per line)", "more: index number " + std::to_string(expected_count + 1) + where());
    }
    indices.push_back(static_cast<std::int32_t>(value));
  }
  if (static_cast<std::int64_t>(indices.size()) != expected_count) {
    fail(count_text + " (one per line)", std::to_string(indices.size()) + " in " + path);
  }
  return indices;
}

}  // namespace tilesim::workloads
