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

TEST_CASE("syntax errors give line and column; missing files are named", "[json][unit]") {
  const auto bad = write_temp("bad.json", "{\n  \"a\": 1,\n  \"b\": ]\n}");
  CHECK_THROWS_WITH(load_json_file(bad), Catch::Contains(bad + ":3:") && Catch::Contains("valid JSON"));
  CHECK_THROWS_AS(load_json_file("/nonexistent/x.json"), InputError);
}

TEST_CASE("a number beyond a double is an input error with its line and column (at its last character), not an internal error", "[json][unit]") {
  // Found by fuzzing (tests/fuzz/regressions/workload/): nlohmann throws out_of_range for it, which
  // escaped as exit code 1.
  const auto big = write_temp("big.json", "{\n  \"a\": [1,\n   1e309]\n}");
  CHECK_THROWS_AS(load_json_file(big), InputError);
  CHECK_THROWS_WITH(load_json_file(big), big + ":3:8: expected valid JSON, every number within a double's range "
                                                "(about 1.8e308), found number overflow parsing '1e309'");
  const auto negative = write_temp("negative_big.json", "[-1e400]");
  CHECK_THROWS_WITH(load_json_file(negative), Catch::Contains(negative + ":1:7:") && Catch::Contains("'-1e400'"));
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
