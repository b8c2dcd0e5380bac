#include "common/strict_json.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <limits>
#include <sstream>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"

namespace tilesim {

namespace {

// The JSON path ("ops[1].indices.file") of a parser's position, from its stack of frames: each frame
// an array (`array`, the `index` of the element being read) or an object (the last `key` read).
template <class Frames>
std::string path_text(const Frames& frames) {
  std::string p;
  for (const auto& f : frames) {
    if (f.array) {
      p += "[" + std::to_string(f.index) + "]";
    } else if (!f.key.empty()) {
      p += (p.empty() ? "" : ".") + f.key;
    }
  }
  return p;
}

// nlohmann keeps the last of two equal keys without a word; a strict reader must not. This parse
// callback tracks where the parser is (for the JSON path) and rejects a key an object already has.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(std::string file) : file_(std::move(file)) {}

  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        count_element();
        frames_.push_back({event == E::array_start, -1, {}, {}});
        break;
      case E::key: {
        Frame& f = frames_.back();
        // Checked before it joins the JSON path, which would otherwise carry the NUL into the message.
        f.key.clear();
        check_no_nul(parsed.get_ref<const std::string&>(), "a key");
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw InputError(file_, path(), "each key once", "\"" + f.key + "\" twice");
        }
        break;
      }
      case E::value:
        count_element();
        if (parsed.is_string()) check_no_nul(parsed.get_ref<const std::string&>(), "one");
        break;
      case E::object_end:
      case E::array_end: frames_.pop_back(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    std::int64_t index;
    std::string key;
    std::set<std::string> keys;
  };
  // A "\u0000" in a key or string: names and paths would be cut at it by the C library (a file path
  // read up to the NUL but recorded whole), so no string may hold one.
  void check_no_nul(const std::string& text, const std::string& what) const {
    const auto at = text.find('\0');
    if (at != std::string::npos)
      throw InputError(file_, path(), "a string without NUL characters (\\u0000)",
                       what + " with a NUL at character " + std::to_string(at + 1));
  }
  void count_element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  // The path of the current key: every enclosing object's key or array's index.
  std::string path() const { return path_text(frames_); }

  std::string file_;
  std::vector<Frame> frames_;
};

// Where a parse failed: a second pass over the text with a SAX handler that builds nothing, run only
// after the parse threw. nlohmann's out-of-range error (a number such as 1e400) carries no position;
// the handler gets it, and the JSON path of the value being read (the last key of each enclosing
// object, the element index of each enclosing array).
class ErrorLocator : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return scalar(); }
  bool number_unsigned(number_unsigned_t) override { return scalar(); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool string(string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::json::exception&) override {
    failed_ = true;
    position_ = position;
    token_ = last_token;
    path_ = path();
    return false;
  }

  bool failed() const { return failed_; }
  // Byte offset just past the offending token, the token, and the JSON path of the value.
  std::size_t position() const { return position_; }
  const std::string& token() const { return token_; }
  const std::string& json_path() const { return path_; }

 private:
  struct Frame {
    bool array;
    std::size_t index;  // arrays: elements finished so far, so the one being read
    std::string key;    // objects: the last key read
  };
  bool scalar() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  bool open(bool array) {
    frames_.push_back({array, 0, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return scalar();
  }
  std::string path() const { return path_text(frames_); }

  std::vector<Frame> frames_;
  bool failed_ = false;
  std::size_t position_ = 0;
  std::string token_, path_;
};

// "FILE:LINE:COLUMN" of the byte at 0-based `offset` of `text`.
std::string file_line_column(const std::string& file, const std::string& text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// A bound as a message prints it: as short as %g makes it, but never a different number (1 + 1e-6
// prints as 1.000001, not 1).
std::string bound_text(double x) {
  std::string text;
  for (int precision = 6; precision <= 17; ++precision) {
    std::ostringstream s;
    s << std::setprecision(precision) << x;
    text = s.str();
    if (std::strtod(text.c_str(), nullptr) == x) break;
  }
  return text;
}

}  // namespace

std::string unreadable_file_reason(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return "no such file";
  if (ec) return "a path that cannot be opened (" + ec.message() + ")";
  if (fs::is_directory(status)) return "a directory";
  errno = 0;
  std::ifstream probe(path, std::ios::binary);
  if (!probe) return "a file that cannot be read (" + std::string(errno ? std::strerror(errno) : "open failed") + ")";
  return "";
}

nlohmann::json load_json_file(const std::string& path) {
  const std::string reason = unreadable_file_reason(path);
  if (!reason.empty()) throw InputError(path, "", "a readable JSON file", reason);
  std::string text;
  try {
    // Workload, sweep and machine files are kilobytes: a bound keeps a huge or endless file (a FIFO fed
    // forever) from being read whole into memory.
    text = read_text_file(path, {limits::max_json_file_bytes, limits::max_json_file_bytes}, "a readable JSON file");
  } catch (const std::ios_base::failure&) {
    // libstdc++ throws from a failed read(2) (EIO, EISDIR) even without exceptions() set.
    throw InputError(path, "", "a readable JSON file", "a file whose reading failed");
  }
  try {
    return nlohmann::json::parse(text, DuplicateKeyCheck(path), /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports a byte offset; turn it into line and column, which editors show.
    std::string what = e.what();
    auto pos = what.find("syntax error");
    throw InputError(file_line_column(path, text, e.byte > 0 ? e.byte - 1 : 0), "", "valid JSON",
                     pos == std::string::npos ? what : what.substr(pos));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range (1e400): nlohmann's message has no position; find it.
    ErrorLocator where;
    nlohmann::json::sax_parse(text, &where, nlohmann::json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/false);
    if (!where.failed()) throw InputError(path, "", "valid JSON", e.what());
    const std::size_t start = where.position() >= where.token().size() ? where.position() - where.token().size() : 0;
    throw InputError(file_line_column(path, text, start), where.json_path().empty() ? "(top level)" : where.json_path(),
                     "a number a double can hold (magnitude below 1.8e+308)",
                     where.token() + ", which is out of range");
  }
}

std::string describe_json(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array of " + std::to_string(value.size());
    case nlohmann::json::value_t::string: return value.dump();
    case nlohmann::json::value_t::null: return "null";
    default: return value.dump();
  }
}

ObjectReader::ObjectReader(const nlohmann::json& object, std::string file, std::string path)
    : object_(object), file_(std::move(file)), path_(std::move(path)) {
  if (!object_.is_object()) {
    throw InputError(file_, path_.empty() ? "(top level)" : path_, "an object", describe_json(object_));
  }
}

bool ObjectReader::has(const std::string& key) const {
  accepted_.insert(key);
  return object_.contains(key);
}

bool ObjectReader::has_refused(const std::string& key) const { return object_.contains(key); }

std::string ObjectReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

std::string ObjectReader::element_path(const std::string& key, std::size_t index) const {
  return path_of(key) + "[" + std::to_string(index) + "]";
}

void ObjectReader::fail(const std::string& key, const std::string& expected, const nlohmann::json& found) const {
  throw InputError(file_, path_of(key), expected, describe_json(found));
}

const nlohmann::json& ObjectReader::require(const std::string& key) {
  read_.insert(key);
  auto it = object_.find(key);
  if (it == object_.end()) throw InputError(file_, path_of(key), "this key (it is required)", "nothing");
  return *it;
}

std::int64_t ObjectReader::integer(const std::string& key, std::int64_t min, std::int64_t max) {
  const auto& v = require(key);
  const std::string expected = "an integer in " + limits::range_text(min, max);
  if (v.is_number_integer()) {
    // Unsigned values above INT64_MAX do not fit.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) fail(key, expected, v);
    auto x = v.get<std::int64_t>();
    if (x < min || x > max) fail(key, expected, v);
    return x;
  }
  // 4096.0 is an integer written as a float; accept it only when it is exact. The bounds are checked
  // after converting, and the conversion only inside [-2^63, 2^63): double(INT64_MAX) rounds up to 2^63,
  // which does not convert.
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= -0x1.0p63 && d < 0x1.0p63) {
      auto x = static_cast<std::int64_t>(d);
      if (x >= min && x <= max) return x;
    }
  }
  fail(key, expected, v);
}

std::int64_t ObjectReader::positive_integer(const std::string& key) {
  return positive_integer(key, std::numeric_limits<std::int64_t>::max());
}

std::int64_t ObjectReader::positive_integer(const std::string& key, std::int64_t max, const std::string& why) {
  const auto& v = require(key);
  // 0 (which nlohmann reads as unsigned), 1.5, 0.0 and -2.0 get the same message as -2.
  if (!(v.is_number_integer() || v.is_number_float()) ||
      (v.is_number_unsigned() && v.get<std::uint64_t>() == 0) ||
      (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() <= 0) ||
      (v.is_number_float() && !(v.get<double>() >= 1.0 && v.get<double>() == std::floor(v.get<double>())))) {
    fail(key, "a positive integer", v);
  }
  // Every value above `max` gets one message, however it was written (2^31, 2^64, 1e19, 4096.0e10).
  const std::string too_large = "a positive integer at most " + std::to_string(max) + why;
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) fail(key, too_large, v);
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() > max) fail(key, too_large, v);
    return v.get<std::int64_t>();
  }
  // An integral float >= 1: converted only inside [1, 2^63) (double(INT64_MAX) rounds up to 2^63).
  const double d = v.get<double>();
  if (!(d < 0x1.0p63) || static_cast<std::int64_t>(d) > max) fail(key, too_large, v);
  return static_cast<std::int64_t>(d);
}

double ObjectReader::number(const std::string& key, double min, double max) {
  const auto& v = require(key);
  const std::string expected = "a number in [" + bound_text(min) + ", " + bound_text(max) + "]";
  if (!v.is_number()) fail(key, expected, v);
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) fail(key, expected, v);
  return d;
}

double ObjectReader::number_above(const std::string& key, double exclusive_min, double max) {
  const auto& v = require(key);
  const std::string expected = "a number greater than " + bound_text(exclusive_min) + " and at most " + bound_text(max);
  if (!v.is_number()) fail(key, expected, v);
  double d = v.get<double>();
  if (!std::isfinite(d) || !(d > exclusive_min) || d > max) fail(key, expected, v);
  return d;
}

double ObjectReader::positive_number(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) fail(key, "a positive number", v);
  return v.get<double>();
}

std::string ObjectReader::string(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_string() || v.get<std::string>().empty()) fail(key, "a non-empty string", v);
  return v.get<std::string>();
}

bool ObjectReader::boolean(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_boolean()) fail(key, "true or false", v);
  return v.get<bool>();
}

std::string ObjectReader::one_of(const std::string& key, const std::vector<std::string>& allowed) {
  const auto& v = require(key);
  std::string expected = "one of";
  for (std::size_t i = 0; i < allowed.size(); ++i) expected += (i ? ", \"" : " \"") + allowed[i] + "\"";
  if (!v.is_string()) fail(key, expected, v);
  for (const auto& a : allowed) {
    if (v.get<std::string>() == a) return a;
  }
  fail(key, expected, v);
}

const nlohmann::json& ObjectReader::value(const std::string& key) { return require(key); }

ObjectReader ObjectReader::object(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_object()) fail(key, "an object", v);
  return ObjectReader(v, file_, path_of(key));
}

const nlohmann::json& ObjectReader::array(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_array() || v.empty()) fail(key, "a non-empty array", v);
  return v;
}

std::int64_t ObjectReader::positive_integer_or(const std::string& key, std::int64_t fallback) {
  read_.insert(key);
  return has(key) ? positive_integer(key) : fallback;
}

std::int64_t ObjectReader::integer_or(const std::string& key, std::int64_t min, std::int64_t max, std::int64_t fallback) {
  read_.insert(key);
  return has(key) ? integer(key, min, max) : fallback;
}

double ObjectReader::number_or(const std::string& key, double min, double max, double fallback) {
  read_.insert(key);
  return has(key) ? number(key, min, max) : fallback;
}

std::string ObjectReader::string_or(const std::string& key, const std::string& fallback) {
  read_.insert(key);
  return has(key) ? string(key) : fallback;
}

void ObjectReader::ignore(const std::string& key) { read_.insert(key); }

void ObjectReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (read_.count(it.key())) continue;
    std::set<std::string> known = read_;
    known.insert(accepted_.begin(), accepted_.end());
    std::string expected = "one of the known keys";
    std::string sep = " (";
    for (const auto& k : known) { expected += sep + "\"" + k + "\""; sep = ", "; }
    if (!known.empty()) expected += ")";
    throw InputError(file_, path_of(it.key()), expected, "unknown key \"" + it.key() + "\"");
  }
}

}  // namespace tilesim
