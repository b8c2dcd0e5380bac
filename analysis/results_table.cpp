#include "analysis/results_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"

namespace tilesim::analysis {

namespace {

// Enough digits that a time read back equals the simulator's cycles / clock to 1e-9 relative.
std::string number(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  return buf;
}

template <class T>
std::string optional_text(const std::optional<T>& value, int digits = 10) {
  if (!value) return "";
  if constexpr (std::is_integral_v<T>) return std::to_string(*value);
  else return number(*value, digits);
}

const std::set<std::string>& known_kinds() {
  static const std::set<std::string> kinds = {"simulated", "measured", "modeled"};
  return kinds;
}

const std::set<std::string>& known_verified() {
  static const std::set<std::string> values = {"yes", "no", "timing-only", "modeled", "does-not-fit"};
  return values;
}

class RowReader {
 public:
  RowReader(const std::vector<std::string>& fields, const std::map<std::string, std::size_t>& column, std::string file,
            int line)
      : fields_(fields), column_(column), file_(std::move(file)), line_(line) {}

  const std::string& text(const std::string& name) const { return fields_.at(column_.at(name)); }
  // A column the header may lack (later_result_columns()): "" when it does.
  std::string text_or_empty(const std::string& name) const {
    const auto it = column_.find(name);
    return it == column_.end() ? std::string() : fields_.at(it->second);
  }

  std::string nonempty(const std::string& name) const {
    const std::string& t = text(name);
    if (t.empty()) fail(name, "a value", "an empty field");
    return t;
  }

  std::int64_t integer(const std::string& name, std::int64_t min, std::int64_t max) const {
    const std::string t = nonempty(name);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || v < min || v > max)
      fail(name, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]", "\"" + t + "\"");
    return v;
  }

  std::optional<std::int64_t> optional_integer(const std::string& name) const {
    if (text(name).empty()) return std::nullopt;
    return integer(name, 0, std::numeric_limits<std::int64_t>::max());
  }

  double real(const std::string& name, bool allow_zero) const {
    const std::string t = nonempty(name);
    const std::optional<double> v = csv_finite_number(t);
    if (!v || *v < 0 || (!allow_zero && *v == 0))
      fail(name, allow_zero ? "a finite number >= 0" : "a finite number > 0", "\"" + t + "\"");
    return *v;
  }

  std::optional<double> optional_real(const std::string& name, bool allow_zero) const {
    if (text(name).empty()) return std::nullopt;
    return real(name, allow_zero);
  }

  [[noreturn]] void fail(const std::string& name, const std::string& expected, const std::string& found) const {
    throw InputError(file_ + ":" + std::to_string(line_), "column " + name, expected, found);
  }

 private:
  const std::vector<std::string>& fields_;
  const std::map<std::string, std::size_t>& column_;
  std::string file_;
  int line_;
};

}  // namespace

const std::vector<std::string>& byte_level_columns() {
  static const std::vector<std::string> columns = {"tile_sram_read_bytes", "tile_sram_write_bytes", "exchange_bytes",
                                                   "l2_bytes", "hbm_bytes", "dram_min_bytes"};
  return columns;
}

const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"op",   "num_inputs", "num_features", "num_outputs", "dtype",   "backend",
                                  "repeat", "kind",     "mode",         "machine",     "index_seed", "time_s",
                                  "cycles", "flops",    "min_bytes"};
    for (const auto& level : byte_level_columns()) c.push_back(level);
    for (const char* name : {"intensity_level", "intensity_flops_per_byte", "verified", "wall_s"}) c.push_back(name);
    for (const auto& later : later_result_columns()) c.push_back(later);
    return c;
  }();
  return columns;
}

const std::vector<std::string>& later_result_columns() {
  static const std::vector<std::string> columns = {"threads", "team_threads", "disturbed", "machine_hash"};
  return columns;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  // One record per line keeps the file appendable and readable line by line (a killed sweep leaves at
  // most a partial last line): a line break inside a field is written as a space.
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += "\"\"";
    else if (c == '\r' || c == '\n') quoted += ' ';
    else quoted += c;
  }
  return quoted + "\"";
}

std::string results_csv_header() {
  std::string line;
  for (const auto& c : result_columns()) line += (line.empty() ? "" : ",") + c;
  return line + "\n";
}

std::string results_csv_row(const ResultRow& r) {
  std::vector<std::string> f = {csv_field(r.op),
                                std::to_string(r.shape.num_inputs),
                                std::to_string(r.shape.num_features),
                                std::to_string(r.shape.num_outputs),
                                csv_field(r.dtype),
                                csv_field(r.backend),
                                std::to_string(r.repeat),
                                csv_field(r.kind),
                                csv_field(r.mode),
                                csv_field(r.machine),
                                std::to_string(r.index_seed),
                                optional_text(r.time_s),
                                optional_text(r.cycles),
                                number(r.flops, 15),
                                std::to_string(r.min_bytes)};
  for (const auto& level : byte_level_columns()) {
    const auto it = r.bytes.find(level);
    f.push_back(it == r.bytes.end() ? "" : std::to_string(it->second));
  }
  f.push_back(csv_field(r.intensity_level));
  f.push_back(optional_text(r.intensity_flops_per_byte, 8));
  f.push_back(csv_field(r.verified));
  f.push_back(number(r.wall_s, 4));
  f.push_back(r.threads ? std::to_string(*r.threads) : "");
  f.push_back(r.team_threads ? std::to_string(*r.team_threads) : "");
  f.push_back(csv_field(r.disturbed));
  f.push_back(csv_field(r.machine_hash));
  std::string line;
  for (std::size_t i = 0; i < f.size(); ++i) line += (i ? "," : "") + f[i];
  return line + "\n";
}

std::vector<std::string> split_csv_record(const std::string& record, const std::string& file, int line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < record.size(); ++i) {
    const char c = record[i];
    if (quoted) {
      if (c == '"' && i + 1 < record.size() && record[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) throw InputError(file + ":" + std::to_string(line), "", "a closing quote", "a field quoted to the line end");
  return fields;
}

std::uintmax_t for_each_results_row(std::istream& in, const std::string& file, PartialLastLine partial,
                                    const std::function<void(ResultRow&&)>& each) {
  std::string record;
  int line = 0;
  std::map<std::string, std::size_t> column;
  std::size_t header_fields = 0;
  std::vector<std::pair<std::string, std::size_t>> extra_columns;  // beyond result_columns(), in header order
  std::uintmax_t whole_bytes = 0;
  while (std::getline(in, record)) {
    // getline stops at the end of the input without a line end: a partial last line.
    if (in.eof() && partial == PartialLastLine::skip) break;
    whole_bytes += record.size() + 1;
    if (record.size() > static_cast<std::size_t>(limits::max_csv_line_bytes))
      throw InputError(file + ":" + std::to_string(line + 1), "",
                       "a line of at most " + std::to_string(limits::max_csv_line_bytes) + " bytes",
                       std::to_string(record.size()) + " bytes");
    ++line;
    if (!record.empty() && record.back() == '\r') record.pop_back();
    if (line == 1) {
      const auto names = split_csv_record(record, file, line);
      header_fields = names.size();
      for (std::size_t i = 0; i < names.size(); ++i) column.emplace(names[i], i);
      const auto& later = later_result_columns();
      for (const auto& c : result_columns())
        if (!column.count(c) && std::find(later.begin(), later.end(), c) == later.end())
          throw InputError(file + ":1", "", "a results.csv header with the column \"" + c + "\" (written by tilesim sweep)",
                           "\"" + record.substr(0, 120) + "\"");
      const auto& known = result_columns();
      for (std::size_t i = 0; i < names.size(); ++i)
        if (!names[i].empty() && std::find(known.begin(), known.end(), names[i]) == known.end() && column.at(names[i]) == i)
          extra_columns.emplace_back(names[i], i);
      continue;
    }
    if (record.empty()) continue;
    const auto fields = split_csv_record(record, file, line);
    if (fields.size() != header_fields)
      throw InputError(file + ":" + std::to_string(line), "", std::to_string(header_fields) + " fields as in the header",
                       std::to_string(fields.size()));
    const RowReader r(fields, column, file, line);
    ResultRow row;
    row.line = line;
    row.op = r.nonempty("op");
    row.shape.num_inputs = r.integer("num_inputs", 1, std::numeric_limits<std::int32_t>::max());
    row.shape.num_features = r.integer("num_features", 1, std::numeric_limits<std::int32_t>::max());
    row.shape.num_outputs = r.integer("num_outputs", 1, std::numeric_limits<std::int32_t>::max());
    row.dtype = r.nonempty("dtype");
    row.backend = r.nonempty("backend");
    row.repeat = static_cast<int>(r.integer("repeat", 0, 1000000));
    row.kind = r.nonempty("kind");
    if (!known_kinds().count(row.kind)) r.fail("kind", "simulated, measured or modeled", "\"" + row.kind + "\"");
    row.mode = r.text("mode");
    row.machine = r.text("machine");
    const std::string seed = r.nonempty("index_seed");
    try {
      std::size_t used = 0;
      row.index_seed = std::stoull(seed, &used);
      if (used != seed.size() || seed.front() == '-') throw std::invalid_argument("index_seed");
    } catch (const std::exception&) {
      r.fail("index_seed", "an unsigned integer", "\"" + seed + "\"");
    }
    row.time_s = r.optional_real("time_s", false);
    row.cycles = r.optional_integer("cycles");
    row.flops = r.real("flops", true);
    row.min_bytes = r.integer("min_bytes", 0, std::numeric_limits<std::int64_t>::max());
    for (const auto& level : byte_level_columns())
      if (const auto bytes = r.optional_integer(level)) row.bytes[level] = *bytes;
    row.intensity_level = r.text("intensity_level");
    row.intensity_flops_per_byte = r.optional_real("intensity_flops_per_byte", true);
    row.verified = r.nonempty("verified");
    if (!known_verified().count(row.verified))
      r.fail("verified", "yes, no, timing-only, modeled or does-not-fit", "\"" + row.verified + "\"");
    if (!row.time_s && row.verified != "does-not-fit")
      r.fail("time_s", "a time (only a does-not-fit row has none)", "an empty field");
    row.wall_s = r.real("wall_s", true);
    if (!r.text_or_empty("threads").empty()) row.threads = static_cast<int>(r.integer("threads", 1, 1 << 20));
    if (!r.text_or_empty("team_threads").empty())
      row.team_threads = static_cast<int>(r.integer("team_threads", 1, 1 << 20));
    row.disturbed = r.text_or_empty("disturbed");
    row.machine_hash = r.text_or_empty("machine_hash");
    for (const auto& [name, index] : extra_columns) row.point_columns[name] = fields[index];
    each(std::move(row));
  }
  if (line == 0 && partial == PartialLastLine::parse) throw InputError(file, "", "a results.csv with a header line", "an empty file");
  return whole_bytes;
}

std::vector<ResultRow> parse_results_csv(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  std::vector<ResultRow> rows;
  for_each_results_row(in, file, PartialLastLine::parse, [&rows](ResultRow&& row) { rows.push_back(std::move(row)); });
  return rows;
}

std::vector<ResultRow> read_results_csv(const std::string& path) {
  const std::string text = read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes},
                                         "a readable results.csv (written by tilesim sweep)");
  return parse_results_csv(text, path);
}

std::optional<double> csv_finite_number(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string point_key(const std::string& op, const OpShape& shape, const std::string& dtype, const std::string& backend,
                      int repeat) {
  return op + "|" + std::to_string(shape.num_inputs) + "|" + std::to_string(shape.num_features) + "|" +
         std::to_string(shape.num_outputs) + "|" + dtype + "|" + backend + "|" + std::to_string(repeat);
}

}  // namespace tilesim::analysis
