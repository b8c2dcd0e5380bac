#include "workloads/graphs/loaders.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "common/error.hpp"
#include "common/text_file.hpp"

namespace tilesim::workloads::graphs {

namespace {

constexpr std::int64_t max_id = std::numeric_limits<std::int32_t>::max();

// Reads a file line by line, counting lines, and raises errors that name "FILE:LINE".
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), in_(path) {
    if (!in_) throw InputError(path, "", "a readable graph file", "no such file or it cannot be read");
  }
  // The next line, at most max_line_bytes long: a file without line ends (or /dev/zero) is refused
  // after that many bytes instead of being read whole into memory.
  bool next(std::string& line) {
    line.clear();
    std::streambuf* buffer = in_.rdbuf();
    bool any = false;
    for (int c = buffer->sbumpc(); c != std::char_traits<char>::eof(); c = buffer->sbumpc()) {
      any = true;
      if (c == '\n') break;
      line.push_back(static_cast<char>(c));
      if (line.size() > max_line_bytes_) {
        ++line_number_;
        fail("lines of at most " + std::to_string(max_line_bytes_) + " bytes", "a longer line " + quoted_excerpt(line));
      }
    }
    if (!any) return false;
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  void set_max_line_bytes(std::size_t bytes) { max_line_bytes_ = bytes; }
  // The file's size when it is a regular file (what a declared size can be checked against), else 0.
  std::uintmax_t file_bytes() const {
    std::error_code ec;
    const auto bytes = std::filesystem::is_regular_file(path_, ec) ? std::filesystem::file_size(path_, ec) : 0;
    return ec ? 0 : bytes;
  }
  [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
    throw InputError(path_ + ":" + std::to_string(line_number_), "", expected, found);
  }
  [[noreturn]] void fail_at_end(const std::string& expected, const std::string& found) const {
    throw InputError(path_ + ":" + std::to_string(line_number_) + " (end of file)", "", expected, found);
  }

 private:
  // A line is rarely more than a few dozen bytes; METIS vertex lines list all neighbours and get a
  // bound from the header's edge count.
  static constexpr std::size_t default_max_line_bytes = std::size_t{1} << 20;

  std::string path_;
  std::ifstream in_;
  std::int64_t line_number_ = 0;
  std::size_t max_line_bytes_ = default_max_line_bytes;
};

std::string shown(const std::string& text) {
  constexpr std::size_t max_shown = 60;
  return "\"" + (text.size() > max_shown ? text.substr(0, max_shown) + "..." : text) + "\"";
}

bool blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

char first_non_space(const std::string& line) {
  for (char c : line) {
    if (!std::isspace(static_cast<unsigned char>(c))) return c;
  }
  return '\0';
}

// Splits a line into whitespace-separated tokens.
std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// A whole token as a non-negative integer, or nullopt-like false.
bool parse_integer(const std::string& token, std::int64_t& value) {
  if (token.empty() || !(std::isdigit(static_cast<unsigned char>(token[0])) || token[0] == '-' || token[0] == '+')) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(token.c_str(), &end, 10);
  if (errno != 0 || end != token.c_str() + token.size()) return false;
  value = v;
  return true;
}

bool parse_real(const std::string& token) {
  char* end = nullptr;
  std::strtod(token.c_str(), &end);
  return !token.empty() && end == token.c_str() + token.size();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void push_edge(EdgeList& g, std::int64_t src, std::int64_t dst) {
  g.src.push_back(static_cast<std::int32_t>(src));
  g.dst.push_back(static_cast<std::int32_t>(dst));
}

}  // namespace

std::string to_string(FileFormat format) {
  switch (format) {
    case FileFormat::edge_list: return "edge_list";
    case FileFormat::matrix_market: return "matrix_market";
    case FileFormat::metis: return "metis";
  }
  return "?";
}

FileFormat format_for_file_name(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() && lower(path.substr(path.size() - suffix.size())) == suffix;
  };
  if (ends_with(".mtx")) return FileFormat::matrix_market;
  if (ends_with(".graph") || ends_with(".metis")) return FileFormat::metis;
  return FileFormat::edge_list;
}

EdgeList load_edge_list(const std::string& path) {
  LineReader reader(path);
  EdgeList g;
  std::unordered_map<std::int64_t, std::int32_t> id_of;
  auto remap = [&](std::int64_t raw) {
    auto [it, inserted] = id_of.emplace(raw, static_cast<std::int32_t>(id_of.size()));
    if (inserted && id_of.size() > static_cast<std::size_t>(max_id)) reader.fail("at most 2^31 - 1 distinct node ids", "more");
    return it->second;
  };
  for (std::string line; reader.next(line);) {
    const char c = first_non_space(line);
    if (c == '\0' || c == '#' || c == '%') continue;
    const auto tokens = tokens_of(line);
    std::int64_t ids[2];
    if (tokens.size() != 2 || !parse_integer(tokens[0], ids[0]) || !parse_integer(tokens[1], ids[1])) {
      reader.fail("two integers \"SRC DST\" (or a '#' comment)", shown(line));
    }
    if (ids[0] < 0 || ids[1] < 0) reader.fail("non-negative node ids", shown(line));
    const std::int32_t s = remap(ids[0]);
    const std::int32_t d = remap(ids[1]);
    push_edge(g, s, d);
  }
  g.num_nodes = static_cast<std::int64_t>(id_of.size());
  return g;
}

EdgeList load_matrix_market(const std::string& path) {
  LineReader reader(path);
  std::string line;
  if (!reader.next(line)) reader.fail_at_end("a \"%%MatrixMarket matrix coordinate ...\" header", "an empty file");
  const auto header = tokens_of(lower(line));
  if (header.size() != 5 || header[0] != "%%matrixmarket" || header[1] != "matrix") {
    reader.fail("the header \"%%MatrixMarket matrix coordinate FIELD SYMMETRY\"", shown(line));
  }
  if (header[2] != "coordinate") reader.fail("a coordinate (sparse) matrix", shown(header[2]));
  const std::string& field = header[3];
  if (field != "pattern" && field != "real" && field != "integer") {
    reader.fail("field pattern, real or integer", shown(field));
  }
  const std::string& symmetry = header[4];
  if (symmetry != "general" && symmetry != "symmetric") reader.fail("symmetry general or symmetric", shown(symmetry));
  const std::size_t columns = field == "pattern" ? 2 : 3;

  std::int64_t rows = -1, cols = -1, entries = -1;
  while (reader.next(line)) {
    const char c = first_non_space(line);
    if (c == '\0' || c == '%') continue;
    const auto t = tokens_of(line);
    if (t.size() != 3 || !parse_integer(t[0], rows) || !parse_integer(t[1], cols) || !parse_integer(t[2], entries) ||
        rows < 1 || cols < 1 || entries < 0) {
      reader.fail("the size line \"ROWS COLS ENTRIES\" (positive integers)", shown(line));
    }
    if (rows != cols) reader.fail("a square matrix (an adjacency matrix)", std::to_string(rows) + " x " + std::to_string(cols));
    if (rows > max_id) reader.fail("at most 2^31 - 1 rows", std::to_string(rows));
    break;
  }
  if (rows < 0) reader.fail_at_end("the size line \"ROWS COLS ENTRIES\"", "none");

  EdgeList g;
  g.num_nodes = rows;
  std::int64_t seen = 0;
  while (reader.next(line)) {
    const char c = first_non_space(line);
    if (c == '\0' || c == '%') continue;
    if (seen == entries) reader.fail(std::to_string(entries) + " entries as the size line says", "another entry " + shown(line));
    const auto t = tokens_of(line);
    std::int64_t i = 0, j = 0;
    if (t.size() != columns || !parse_integer(t[0], i) || !parse_integer(t[1], j) ||
        (columns == 3 && !parse_real(t[2]))) {
      reader.fail(columns == 2 ? "an entry \"ROW COL\"" : "an entry \"ROW COL VALUE\"", shown(line));
    }
    if (i < 1 || i > rows || j < 1 || j > rows) {
      reader.fail("indices in [1, " + std::to_string(rows) + "]", shown(line));
    }
    push_edge(g, i - 1, j - 1);
    if (symmetry == "symmetric" && i != j) push_edge(g, j - 1, i - 1);
    ++seen;
  }
  if (seen != entries) {
    reader.fail_at_end(std::to_string(entries) + " entries as the size line says", std::to_string(seen));
  }
  return g;
}

EdgeList load_metis(const std::string& path) {
  LineReader reader(path);
  std::string line;
  std::int64_t n = -1, m = -1, ncon = 0;
  bool has_sizes = false, has_vertex_weights = false, has_edge_weights = false;
  while (reader.next(line)) {
    if (first_non_space(line) == '%') continue;
    if (blank(line)) continue;
    const auto t = tokens_of(line);
    if (t.size() < 2 || t.size() > 4 || !parse_integer(t[0], n) || !parse_integer(t[1], m) || n < 1 || m < 0) {
      reader.fail("the header \"N M [FMT [NCON]]\" (N >= 1, M >= 0)", shown(line));
    }
    if (n > max_id) reader.fail("at most 2^31 - 1 vertices", std::to_string(n));
    if (t.size() >= 3) {
      const std::string& fmt = t[2];
      if (fmt.size() > 3 || fmt.find_first_not_of("01") != std::string::npos) {
        reader.fail("FMT of up to three 0/1 digits (vertex sizes, vertex weights, edge weights)", shown(fmt));
      }
      const std::string padded = std::string(3 - fmt.size(), '0') + fmt;
      has_sizes = padded[0] == '1';
      has_vertex_weights = padded[1] == '1';
      has_edge_weights = padded[2] == '1';
    }
    if (has_vertex_weights) ncon = 1;
    if (t.size() == 4) {
      if (!parse_integer(t[3], ncon) || ncon < 1) reader.fail("NCON a positive integer", shown(t[3]));
      if (!has_vertex_weights) reader.fail("NCON only with vertex weights (FMT x1x)", shown(line));
    }
    break;
  }
  if (n < 0) reader.fail_at_end("the header \"N M [FMT [NCON]]\"", "none");

  if (m > max_id / 2) reader.fail("at most " + std::to_string(max_id / 2) + " edges (each stored at both ends)", std::to_string(m));

  EdgeList g;
  g.num_nodes = n;
  // Each neighbour entry takes at least two bytes of the file: a header declaring more edges than the
  // file can hold reserves no more than the file could fill.
  const std::uintmax_t file_bytes = reader.file_bytes();
  const auto reserve = static_cast<std::size_t>(std::min<std::uintmax_t>(2 * static_cast<std::uintmax_t>(m), file_bytes / 2));
  g.src.reserve(reserve);
  g.dst.reserve(reserve);
  // A vertex line: at most every neighbour entry of the graph, each up to 20 digits and a space, with
  // its weight; plus the vertex's size and weights.
  reader.set_max_line_bytes(static_cast<std::size_t>(44 * (2 * m + ncon + 2)) + 4096);
  const std::size_t leading = (has_sizes ? 1 : 0) + static_cast<std::size_t>(ncon);
  const std::size_t per_neighbour = has_edge_weights ? 2 : 1;
  std::int64_t v = 0;
  while (reader.next(line)) {
    if (first_non_space(line) == '%') continue;
    if (v == n) {
      if (blank(line)) continue;  // trailing empty lines
      reader.fail(std::to_string(n) + " vertex lines as the header says", "another line " + shown(line));
    }
    const auto t = tokens_of(line);
    if (t.size() < leading || (t.size() - leading) % per_neighbour != 0) {
      reader.fail(has_edge_weights ? "vertex line: [size] [weights] then NEIGHBOUR WEIGHT pairs" : "vertex line: [size] [weights] then neighbours",
                  shown(line));
    }
    for (std::size_t k = 0; k < t.size(); ++k) {
      std::int64_t x = 0;
      if (!parse_integer(t[k], x)) reader.fail("integers", shown(t[k]));
      const bool is_neighbour = k >= leading && (k - leading) % per_neighbour == 0;
      if (!is_neighbour) continue;
      if (x < 1 || x > n) reader.fail("neighbours in [1, " + std::to_string(n) + "]", std::to_string(x));
      if (static_cast<std::int64_t>(g.src.size()) == 2 * m) {
        reader.fail("2 x M = " + std::to_string(2 * m) + " neighbour entries (each edge at both ends)", "more");
      }
      push_edge(g, v, x - 1);
    }
    ++v;
  }
  if (v != n) reader.fail_at_end(std::to_string(n) + " vertex lines as the header says", std::to_string(v));
  if (static_cast<std::int64_t>(g.src.size()) != 2 * m) {
    reader.fail_at_end("2 x M = " + std::to_string(2 * m) + " neighbour entries (each edge at both ends)",
                       std::to_string(g.src.size()));
  }
  return g;
}

EdgeList load_graph_file(const std::string& path, FileFormat format) {
  switch (format) {
    case FileFormat::edge_list: return load_edge_list(path);
    case FileFormat::matrix_market: return load_matrix_market(path);
    case FileFormat::metis: return load_metis(path);
  }
  return {};
}

}  // namespace tilesim::workloads::graphs
