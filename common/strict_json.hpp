#pragma once
// Strict reading of JSON objects for workload and machine files: every key must be read or it is
// reported as unknown, every value is type- and range-checked, and every error names the file and the
// JSON path (`ops[1].num_features`) with what was expected and what was found.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim {

// Why `path` cannot be opened as an input file, as the "found" part of a message: "" when it can be
// opened; otherwise "no such file", "a directory", or what the system says ("a file that cannot be read
// (Permission denied)", "a path that cannot be opened (File name too long)"). Never throws.
std::string unreadable_file_reason(const std::string& path);

// Parses a JSON file; a missing file, a directory, a syntax error or a number out of a double's range
// is an InputError naming the file (and the line and column of a syntax error, with the JSON path of
// a number out of range).
nlohmann::json load_json_file(const std::string& path);

// A short description of a JSON value for error messages: `-3`, `"abc"`, `an object`, `an array of 2`.
std::string describe_json(const nlohmann::json& value);

class ObjectReader {
 public:
  // `path` is the JSON path of this object ("" for the document root). Throws if `object` is not an object.
  ObjectReader(const nlohmann::json& object, std::string file, std::string path);

  // Whether `key` is present. Parsers ask before reading an optional key, so a key asked about is one
  // this object accepts: it is listed among the known keys of an unknown-key message even when absent.
  bool has(const std::string& key) const;
  // Whether `key` is present where this object's form refuses it (a "k" for complete graphs). Unlike
  // has(), the key is not counted among the accepted ones.
  bool has_refused(const std::string& key) const;
  // JSON path of a key of this object, for messages: "ops[1].num_features".
  std::string path_of(const std::string& key) const;
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  // Required values. Each marks the key as read.
  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max);
  std::int64_t positive_integer(const std::string& key);
  // A positive integer at most `max`: one message for every value above it (2^31 as well as 1e19 or
  // 2^64), "a positive integer at most MAX" followed by `why` (" (sizes must fit int32)").
  std::int64_t positive_integer(const std::string& key, std::int64_t max, const std::string& why = "");
  // A number in [min, max]; the bounds are printed exactly (1.000001, not 1).
  double number(const std::string& key, double min, double max);
  // A number in (exclusive_min, max]: "a number greater than MIN and at most MAX".
  double number_above(const std::string& key, double exclusive_min, double max);
  double positive_number(const std::string& key);
  std::string string(const std::string& key);
  bool boolean(const std::string& key);
  // One of a fixed set of strings.
  std::string one_of(const std::string& key, const std::vector<std::string>& allowed);
  // Any JSON value (marks it read); the caller validates it further.
  const nlohmann::json& value(const std::string& key);
  // A nested object.
  ObjectReader object(const std::string& key);
  // A non-empty array; the caller reads its elements with element_path().
  const nlohmann::json& array(const std::string& key);
  std::string element_path(const std::string& key, std::size_t index) const;

  // Optional values: the default when the key is absent.
  std::int64_t positive_integer_or(const std::string& key, std::int64_t fallback);
  std::int64_t integer_or(const std::string& key, std::int64_t min, std::int64_t max, std::int64_t fallback);
  double number_or(const std::string& key, double min, double max, double fallback);
  std::string string_or(const std::string& key, const std::string& fallback);

  // Marks a key as read without reading it (documentation-only keys such as "source").
  void ignore(const std::string& key);

  // Throws an InputError for the first key that was never read, listing every key this object accepts:
  // those read and those has() was asked about (the optional ones), required or not.
  void finish() const;

 private:
  const nlohmann::json& require(const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& expected, const nlohmann::json& found) const;

  const nlohmann::json& object_;
  std::string file_, path_;
  std::set<std::string> read_;
  // Keys has() was asked about: optional keys, listed in unknown-key messages with the keys read.
  mutable std::set<std::string> accepted_;
};

}  // namespace tilesim
