// The strict JSON reader every input file goes through.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/strict_json.hpp"

using namespace tilesim;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("tilesim_sj_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p.string();
}
}  // namespace

TEST_CASE("duplicate keys are errors naming the file and the JSON path", "[json][unit]") {
  const auto top = write_temp("dup_top.json", R"({"name": "a", "name": "b"})");
  CHECK_THROWS_WITH(load_json_file(top), top + ": name: expected each key once, found \"name\" twice");
  const auto nested = write_temp("dup_nested.json",
                                 R"({"ops": [{"op": "gather"}, {"op": "gather", "num_features": 2, "num_features": 3}]})");
  CHECK_THROWS_WITH(load_json_file(nested), Catch::Contains("ops[1].num_features") && Catch::Contains("twice"));
  // The same key in sibling objects is fine.
  const auto siblings = write_temp("siblings.json", R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})");
  CHECK(load_json_file(siblings)["c"][1]["x"] == 2);
}

TEST_CASE("a NUL character in any string or key is refused with its JSON path", "[json][unit]") {
  const auto value = write_temp("nul_value.json", R"({"ops": [{"indices": {"file": "idx\u0000.txt"}}]})");
  CHECK_THROWS_WITH(load_json_file(value), value + ": ops[0].indices.file: expected a string without NUL characters (\\u0000), "
                                                   "found one with a NUL at character 4");
  const auto key = write_temp("nul_key.json", R"({"na\u0000me": 1})");
  CHECK_THROWS_WITH(load_json_file(key), key + ": expected a string without NUL characters (\\u0000), found a key with a NUL at character 3");
  const auto in_array = write_temp("nul_array.json", R"({"backends": ["cpu", "\u0000"]})");
  CHECK_THROWS_WITH(load_json_file(in_array), Catch::Contains("backends[1]: expected a string without NUL"));
  // Other escapes are plain characters.
  const auto tab = write_temp("tab.json", R"({"name": "a\tb"})");
  CHECK(load_json_file(tab)["name"] == "a\tb");
}

TEST_CASE("syntax errors give line and column, missing files are named", "[json][unit]") {
  const auto bad = write_temp("bad.json", "{\n  \"a\": 1,\n  \"b\": ]\n}");
  CHECK_THROWS_WITH(load_json_file(bad), Catch::Contains(bad + ":3:") && Catch::Contains("valid JSON"));
  CHECK_THROWS_AS(load_json_file("/nonexistent/x.json"), InputError);
}

TEST_CASE("ObjectReader checks types, ranges and unknown keys", "[json][unit]") {
  const nlohmann::json j = {{"n", 5}, {"f", 2.5}, {"s", "x"}, {"neg", -1}, {"obj", {{"k", 1}}}, {"extra", true}};
  ObjectReader r(j, "w.json", "ops[0]");
  CHECK(r.positive_integer("n") == 5);
  CHECK(r.number("f", 0, 3) == 2.5);
  CHECK(r.string("s") == "x");
  CHECK_THROWS_WITH(r.positive_integer("neg"), "w.json: ops[0].neg: expected a positive integer, found -1");
  CHECK_THROWS_WITH(r.integer("n", 6, 10), Catch::Contains("ops[0].n: expected an integer in [6, 10], found 5"));
  CHECK_THROWS_WITH(r.string("missing"), Catch::Contains("ops[0].missing: expected this key (it is required)"));
  CHECK(r.positive_integer_or("absent", 7) == 7);
  ObjectReader inner = r.object("obj");
  CHECK(inner.path() == "ops[0].obj");
  CHECK_THROWS_WITH(r.finish(), Catch::Contains("ops[0].extra") && Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(inner.finish(), Catch::Contains("ops[0].obj.k"));
}

TEST_CASE("a number beyond a double's range is bad input with its line, column and JSON path", "[json][unit]") {
  const auto big = write_temp("big.json", "{\"ops\": [{\"op\": \"gather\"},\n  {\"num_inputs\": 1e400}]}");
  CHECK_THROWS_WITH(load_json_file(big), big + ":2:18: ops[1].num_inputs: expected a number a double can hold (magnitude "
                                               "below 1.8e+308), found 1e400, which is out of range");
  const auto top = write_temp("big_top.json", "-1e999");
  CHECK_THROWS_WITH(load_json_file(top), Catch::Contains(top + ":1:1: (top level): ") && Catch::Contains("found -1e999"));
  // nlohmann reads an integer beyond 2^64 as a double: no error here (the range checks of the reader follow).
  CHECK(load_json_file(write_temp("u65.json", "{\"n\": 36893488147419103232}"))["n"].is_number_float());
}

TEST_CASE("a directory, a missing file and a path too long are bad input saying which", "[json][unit]") {
  const auto dir = std::filesystem::temp_directory_path() / ("tilesim_sj_dir_" + std::to_string(::getpid()) + ".json");
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(load_json_file(dir.string()), dir.string() + ": expected a readable JSON file, found a directory");
  CHECK_THROWS_WITH(load_json_file("/nonexistent/x.json"), "/nonexistent/x.json: expected a readable JSON file, found no such file");
  const std::string long_name(5000, 'a');
  CHECK_THROWS_WITH(load_json_file(long_name), long_name + ": expected a readable JSON file, found a path that cannot be opened "
                                                           "(File name too long)");
  CHECK(unreadable_file_reason(dir.string()) == "a directory");
  CHECK(unreadable_file_reason(write_temp("fine.json", "{}")).empty());
  std::filesystem::remove(dir);
}

TEST_CASE("range messages quote the bound that is checked", "[json][unit]") {
  const nlohmann::json j = {{"one", 1}, {"big", 2147483648LL}, {"huge", 1e19}, {"u64", 18446744073709551615ULL}, {"x", 1.5}};
  ObjectReader r(j, "w.json", "");
  // A bound is printed exactly, not rounded to six digits.
  CHECK_THROWS_WITH(r.number("one", 1.0 + 1e-6, 1e6), "w.json: one: expected a number in [1.000001, 1e+06], found 1");
  CHECK_THROWS_WITH(r.number_above("one", 1.0, 1e6), "w.json: one: expected a number greater than 1 and at most 1e+06, found 1");
  CHECK(r.number_above("x", 1.0, 1e6) == 1.5);
  // Every value above the maximum gets the maximum's message, however large.
  for (const char* key : {"big", "huge", "u64"})
    CHECK_THROWS_WITH(r.positive_integer(key, 2147483647, " (int32)"),
                      Catch::StartsWith(std::string("w.json: ") + key + ": expected a positive integer at most 2147483647 (int32), found "));
  CHECK(r.positive_integer("one", 2147483647) == 1);
  const nlohmann::json zero = nlohmann::json::parse(R"({"z": 0, "n": -3})");  // 0 parses as unsigned
  ObjectReader z(zero, "w.json", "");
  CHECK_THROWS_WITH(z.positive_integer("z", 10), "w.json: z: expected a positive integer, found 0");
  CHECK_THROWS_WITH(z.positive_integer("n"), "w.json: n: expected a positive integer, found -3");
  CHECK_THROWS_WITH(r.positive_integer("x", 10), "w.json: x: expected a positive integer, found 1.5");
}
