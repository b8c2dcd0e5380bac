#include "common/strict_json.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/error.hpp"

namespace tilesim {

namespace {

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
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw InputError(file_, path(), "each key once", "\"" + f.key + "\" twice");
        }
        break;
      }
      case E::value: count_element(); break;
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
  void count_element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  // The path of the current key: every enclosing object's key or array's index.
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array) {
        p += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty()) {
        p += (p.empty() ? "" : ".") + f.key;
      }
    }
    return p;
  }

  std::string file_;
  std::vector<Frame> frames_;
};

// Where a parse stopped, for errors that do not say: nlohmann's out_of_range error for a number beyond a
// double (1e309) carries no position, so the file is read again by this handler, which records it.
class ErrorPosition : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::size_t byte = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception&) override {
    byte = position;
    return false;
  }
};

// "FILE:LINE:COLUMN: expected EXPECTED, found FOUND" for a parse that stopped at `byte` (nlohmann's
// count of characters read; 0: unknown, the file alone is named). `what` is nlohmann's message.
InputError json_error(const std::string& path, std::size_t byte, const std::string& expected, const std::string& what) {
  std::string where = path;
  if (byte > 0) {
    // nlohmann reports a byte offset; turn it into line and column, which editors show.
    std::ifstream again(path);
    std::string text((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
      if (text[i] == '\n') { ++line; column = 1; } else { ++column; }
    }
    where += ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while parsing ..."
  // keeps its "syntax error ..." part; other messages lose their "[json.exception...] " tag.
  std::string found = what;
  if (const auto pos = found.find("syntax error"); pos != std::string::npos) {
    found = found.substr(pos);
  } else if (found.rfind("[json.exception.", 0) == 0 && found.find("] ") != std::string::npos) {
    found = found.substr(found.find("] ") + 2);
  }
  return InputError(where, "", expected, found);
}

}  // namespace

nlohmann::json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "a readable JSON file", "no such file or it cannot be read");
  try {
    return nlohmann::json::parse(in, DuplicateKeyCheck(path), /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    throw json_error(path, e.byte, "valid JSON", e.what());
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double (1e309, found by fuzzing): nlohmann throws out_of_range, not
    // parse_error, which escaped as an internal error (exit 1) before.
    ErrorPosition position;
    std::ifstream again(path);
    nlohmann::json::sax_parse(again, &position);
    throw json_error(path, position.byte, "valid JSON, every number within a double's range (about 1.8e308)", e.what());
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

bool ObjectReader::has(const std::string& key) const { return object_.contains(key); }

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
  std::ostringstream expected;
  expected << "an integer in [" << min << ", " << max << "]";
  if (v.is_number_integer()) {
    // Unsigned values above INT64_MAX do not fit.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) fail(key, expected.str(), v);
    auto x = v.get<std::int64_t>();
    if (x < min || x > max) fail(key, expected.str(), v);
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
  fail(key, expected.str(), v);
}

std::int64_t ObjectReader::positive_integer(const std::string& key) {
  const auto& v = require(key);
  // 1.5, 0.0 and -2.0 get the same message as -2; only values too large fall through to integer()'s.
  if (!(v.is_number_integer() || v.is_number_float()) ||
      (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() <= 0) ||
      (v.is_number_float() && !(v.get<double>() >= 1.0 && v.get<double>() == std::floor(v.get<double>())))) {
    fail(key, "a positive integer", v);
  }
  return integer(key, 1, std::numeric_limits<std::int64_t>::max());
}

double ObjectReader::number(const std::string& key, double min, double max) {
  const auto& v = require(key);
  std::ostringstream expected;
  expected << "a number in [" << min << ", " << max << "]";
  if (!v.is_number()) fail(key, expected.str(), v);
  double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) fail(key, expected.str(), v);
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
    std::string expected = "one of the known keys";
    std::string sep = " (";
    for (const auto& k : read_) { expected += sep + "\"" + k + "\""; sep = ", "; }
    if (!read_.empty()) expected += ")";
    throw InputError(file_, path_of(it.key()), expected, "unknown key \"" + it.key() + "\"");
  }
}

}  // namespace tilesim
