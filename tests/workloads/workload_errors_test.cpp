// The workload layer's input errors: every one users can make (unknown keys, wrong types, missing,
// empty and out-of-range values, tensors too large for this host, unknown ops and dtypes, names, index
// files, files that are not JSON), each naming the file and JSON path. The valid workloads are in
// workload_test.cpp.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "workloads/workload.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/workload_json.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tilesim;
using namespace tilesim::workloads;
using Catch::Matchers::Contains;

namespace {

using tilesim_test::required_input_error_of;

// A fresh folder per test, removed afterwards; the pid keeps tests that CTest runs in parallel apart.
using tilesim_test::TempDir;

using tilesim_test::workload_json::gather;
using tilesim_test::workload_json::one_op;
using tilesim_test::workload_json::scatter_add;

std::string parse_error_of(const json& document) {
  return required_input_error_of([&] { parse_workload(document, "w.json"); });
}

std::int64_t half_host_memory() { return static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE) / 2; }

}  // namespace

TEST_CASE("workload errors: unknown keys", "[workload][errors][unit]") {
  SECTION("top level") {
    json doc = one_op(gather(1, 1, 1));
    doc["sead"] = 3;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: sead: expected one of the known keys (\"dtype\", \"graph\", \"loader\", \"model\", \"name\", \"num_features\", \"ops\", \"parallel\", \"seed\", \"train\"), "
                                             "found unknown key \"sead\""));
  }
  SECTION("inside an op") {
    json op = gather(1, 1, 1);
    op["num_feature"] = 3;
    const std::string message = parse_error_of(one_op(op));
    CHECK_THAT(message, Contains("w.json: ops[0].num_feature: expected one of the known keys ("));
    CHECK_THAT(message, Contains("\"num_features\""));
    CHECK_THAT(message, Contains("found unknown key \"num_feature\""));
  }
  SECTION("inside indices") {
    json op = scatter_add(1, 1, 1);
    op["indices"] = {{"distrib", "sorted"}};
    const std::string message = parse_error_of(one_op(op));
    CHECK_THAT(message, Contains("w.json: ops[0].indices.distrib: expected one of the known keys (\"distribution\", \"file\"), "
                                 "found unknown key \"distrib\""));
  }
  SECTION("beside a valid distribution") {
    json op = scatter_add(1, 1, 1);
    op["indices"] = {{"distribution", "sorted"}, {"seed", 1}};
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices.seed: expected one of the known keys"));
  }
}

TEST_CASE("workload errors: wrong types", "[workload][errors][unit]") {
  SECTION("a size as a string") {
    json op = gather(1, 1, 1);
    op["num_inputs"] = "4096";
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].num_inputs: expected a positive integer, found \"4096\""));
  }
  SECTION("a fractional size") {
    json op = gather(1, 1, 1);
    op["num_outputs"] = 1.5;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].num_outputs: expected a positive integer, found 1.5"));
  }
  SECTION("indices as an array") {
    json op = gather(1, 1, 1);
    op["indices"] = json::array({0, 0});
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].indices: expected \"uniform\", \"sorted\", {\"distribution\": \"uniform\" or "
                        "\"sorted\"} or {\"file\": PATH}, found an array of 2"));
  }
  SECTION("an op as an array") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), json::array({1})})}};
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[1]: expected an object, found an array of 1"));
  }
  SECTION("ops as an object") {
    json doc = {{"name", "w"}, {"ops", gather(1, 1, 1)}};
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops: expected a non-empty array, found an object"));
  }
  SECTION("the document as an array") {
    CHECK_THAT(parse_error_of(json::array()), Contains("w.json: (top level): expected an object, found an array of 0"));
  }
  SECTION("the name as a number") {
    json doc = one_op(gather(1, 1, 1));
    doc["name"] = 5;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: name: expected a non-empty string, found 5"));
  }
  SECTION("the seed as a string") {
    json doc = one_op(gather(1, 1, 1));
    doc["seed"] = "7";
    CHECK_THAT(parse_error_of(doc), Contains("w.json: seed: expected an integer in [0, 9223372036854775807], found \"7\""));
  }
  SECTION("the index file as a number") {
    json op = gather(1, 1, 1);
    op["indices"] = {{"file", 3}};
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices.file: expected a non-empty string, found 3"));
  }
}

TEST_CASE("workload errors: missing and empty values", "[workload][errors][unit]") {
  SECTION("no name") {
    CHECK_THAT(parse_error_of({{"ops", json::array({gather(1, 1, 1)})}}),
               Contains("w.json: name: expected this key (it is required), found nothing"));
  }
  SECTION("no ops") {
    CHECK_THAT(parse_error_of({{"name", "w"}}), Contains("w.json: ops: expected an \"ops\" array, a \"graph\" with a \"model\", or both, found neither"));
  }
  SECTION("empty ops") {
    CHECK_THAT(parse_error_of({{"name", "w"}, {"ops", json::array()}}),
               Contains("w.json: ops: expected a non-empty array, found an array of 0"));
  }
  SECTION("a size missing") {
    json op = gather(1, 1, 1);
    op.erase("num_features");
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].num_features: expected this key (it is required), found nothing"));
  }
  SECTION("no op kind") {
    json op = gather(1, 1, 1);
    op.erase("op");
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].op: expected this key (it is required), found nothing"));
  }
  SECTION("an empty indices object") {
    json op = gather(1, 1, 1);
    op["indices"] = json::object();
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices: expected \"uniform\", \"sorted\""));
    CHECK_THAT(parse_error_of(one_op(op)), Contains("found an object"));
  }
  SECTION("both a distribution and a file") {
    json op = gather(1, 1, 1);
    op["indices"] = {{"distribution", "sorted"}, {"file", "x.txt"}};
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].indices: expected either \"distribution\" or \"file\", found both"));
  }
}

TEST_CASE("workload errors: zero, negative and too large sizes", "[workload][errors][unit]") {
  SECTION("zero") {
    CHECK_THAT(parse_error_of(one_op(gather(0, 1, 1))),
               Contains("w.json: ops[0].num_inputs: expected a positive integer, found 0"));
  }
  SECTION("negative") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), scatter_add(1, -3, 1)})}};
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[1].num_features: expected a positive integer, found -3"));
  }
  SECTION("negative, written as a float") {
    json op = gather(1, 1, 1);
    op["num_outputs"] = -2.0;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].num_outputs: expected a positive integer, found -2.0"));
  }
  SECTION("beyond int32") {
    CHECK_THAT(parse_error_of(one_op(scatter_add(1, 1, 2147483648))),
               Contains("w.json: ops[0].num_outputs: expected a positive integer at most 2147483647 (sizes must fit "
                        "int32, tilesim's index type), found 2147483648"));
  }
  SECTION("beyond int64: the int32 bound, not int64's, is quoted") {
    json op = gather(1, 1, 1);
    op["num_inputs"] = 18446744073709551615ull;
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].num_inputs: expected a positive integer at most 2147483647 (sizes must fit int32, "
                        "tilesim's index type), found 18446744073709551615"));
    op["num_inputs"] = 1e19;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("expected a positive integer at most 2147483647 (sizes must fit int32, "
                                                    "tilesim's index type), found 1e+19"));
  }
  SECTION("2^63 written as a float, which does not convert to int64") {
    json doc = one_op(gather(1, 1, 1));
    doc["seed"] = 9223372036854775808.0;
    CHECK_THAT(parse_error_of(doc),
               Contains("w.json: seed: expected an integer in [0, 9223372036854775807], found 9.223372036854776e+18"));
    doc = one_op(gather(1, 1, 1));
    doc["ops"][0]["num_inputs"] = 9223372036854775808.0;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[0].num_inputs: expected a positive integer at most 2147483647 "
                                             "(sizes must fit int32, tilesim's index type), found 9.223372036854776e+18"));
  }
  SECTION("a negative seed") {
    json doc = one_op(gather(1, 1, 1));
    doc["seed"] = -1;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: seed: expected an integer in [0, 9223372036854775807], found -1"));
  }
}

TEST_CASE("workload errors: tensors too large for this host", "[workload][errors][unit]") {
  SECTION("one op, beyond any memory") {
    const std::string message = parse_error_of(one_op(gather(2147483647, 2147483647, 1)));
    CHECK_THAT(message, Contains("w.json: ops[0]: expected tensors (input + indices + output) of at most " +
                                 std::to_string(half_host_memory()) + " bytes"));
    CHECK_THAT(message, Contains("half of this host's physical memory, found more than 2^63 bytes needed"));
  }
  SECTION("one op, a little over half of memory") {
    // Output rows of 1 MiB; enough of them to pass half of physical memory by a few rows.
    const std::int64_t row_bytes = std::int64_t{1} << 20;
    const std::int64_t rows = half_host_memory() / row_bytes + 2;
    const std::string message = parse_error_of(one_op(gather(1, row_bytes / 4, rows)));
    const std::int64_t needed = row_bytes + rows * 4 + rows * row_bytes;
    CHECK_THAT(message, Contains("w.json: ops[0]: expected tensors"));
    CHECK_THAT(message, Contains("found " + std::to_string(needed) + " bytes"));
    CHECK_THAT(message, Contains("output " + std::to_string(rows * row_bytes) + " bytes"));
  }
  SECTION("ops that fit alone but not together") {
    const std::int64_t row_bytes = std::int64_t{1} << 20;
    const std::int64_t rows = half_host_memory() * 6 / 10 / row_bytes;  // 30% of memory each
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, row_bytes / 4, rows), gather(1, row_bytes / 4, rows)})}};
    const std::string message = parse_error_of(doc);
    CHECK_THAT(message, Contains("w.json: ops[1]: expected the tensors of all ops together to need at most"));
    CHECK_THAT(message, Contains("needed by ops[0] to ops[1]"));
  }
}

TEST_CASE("workload errors: unknown op and unsupported dtypes", "[workload][errors][unit]") {
  SECTION("unknown op") {
    json op = gather(1, 1, 1);
    op["op"] = "scatter_max";
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].op: expected one of \"gather\", \"scatter_add\", \"schnet_block\", found \"scatter_max\""));
  }
  SECTION("a dtype not implemented yet") {
    for (const char* dtype : {"float64", "int8", "int32"}) {
      json op = gather(1, 1, 1);
      op["dtype"] = dtype;
      CHECK_THAT(parse_error_of(one_op(op)),
                 Contains(std::string("w.json: ops[0].dtype: expected \"float32\", \"float16\" or \"bfloat16\" (the value dtypes "
                                      "implemented so far; ") +
                          dtype + " is not implemented yet), found \"" + dtype + "\""));
    }
  }
  SECTION("an unknown dtype") {
    json op = gather(1, 1, 1);
    op["dtype"] = "floaty";
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].dtype: expected \"float32\", \"float16\" or \"bfloat16\" (a value dtype), found \"floaty\""));
  }
  SECTION("a dtype that is not a string") {
    json op = gather(1, 1, 1);
    op["dtype"] = 32;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].dtype: expected \"float32\""));
    CHECK_THAT(parse_error_of(one_op(op)), Contains("found 32"));
  }
  SECTION("an unknown distribution") {
    json op = gather(1, 1, 1);
    op["indices"] = "random";
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices: expected \"uniform\", \"sorted\""));
    op["indices"] = {{"distribution", "power_law"}};
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].indices.distribution: expected one of \"uniform\", \"sorted\", found \"power_law\""));
  }
}

TEST_CASE("workload errors: names", "[workload][errors][unit]") {
  SECTION("duplicate op names") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), scatter_add(1, 1, 1), gather(1, 1, 1)})}};
    doc["ops"][0]["name"] = "g";
    doc["ops"][2]["name"] = "g";
    CHECK_THAT(parse_error_of(doc),
               Contains("w.json: ops[2].name: expected an op name not used by another op, found \"g\", already the name of ops[0]"));
  }
  SECTION("a default name taken by another op") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), gather(1, 1, 1)})}};
    doc["ops"][0]["name"] = "gather_1";
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[1]: expected an op name not used by another op, found the default "
                                             "name \"gather_1\", already the name of ops[0]"));
  }
  SECTION("bad characters in the workload name") {
    for (const char* name : {"my run", "../escape", "a/b", "..", "naïve"}) {
      json doc = one_op(gather(1, 1, 1));
      doc["name"] = name;
      const std::string message = parse_error_of(doc);
      CHECK_THAT(message, Contains("w.json: name: expected a name of 1 to 255 letters, digits, '.', '_' or '-'"));
      CHECK_THAT(message, Contains("found " + json(name).dump()));
    }
  }
  SECTION("bad characters in an op name") {
    json op = gather(1, 1, 1);
    op["name"] = "layer 1";
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].name: expected a name of 1 to 255 letters"));
    CHECK_THAT(parse_error_of(one_op(op)), Contains("found \"layer 1\""));
  }
  SECTION("an empty name") {
    json doc = one_op(gather(1, 1, 1));
    doc["name"] = "";
    CHECK_THAT(parse_error_of(doc), Contains("w.json: name: expected a non-empty string, found \"\""));
  }
}

TEST_CASE("workload errors: index files", "[workload][errors][unit]") {
  TempDir dir;
  const std::string workload_file = dir.path("w.json");
  auto error_for = [&](const std::string& text, json op) {
    const std::string index_file = dir.write("idx.txt", text);
    op["indices"] = {{"file", "idx.txt"}};
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), op})}};
    return std::make_pair(required_input_error_of([&] { parse_workload(doc, workload_file); }), index_file);
  };
  const std::string prefix = workload_file + ": ops[1].indices.file: ";

  SECTION("missing file") {
    json op = gather(4, 1, 2);
    op["indices"] = {{"file", "nope.txt"}};
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), op})}};
    const std::string message = required_input_error_of([&] { parse_workload(doc, workload_file); });
    CHECK_THAT(message, Contains(prefix + "expected an index file, found no file \"" + dir.path("nope.txt") + "\""));
  }
  SECTION("a folder") {
    fs::create_directories(dir.path("folder"));
    json op = gather(4, 1, 2);
    op["indices"] = {{"file", "folder"}};
    const std::string message = required_input_error_of([&] { parse_workload(one_op(op), workload_file); });
    CHECK_THAT(message, Contains("ops[0].indices.file: expected an index file, found \"" + dir.path("folder") +
                                 "\", which is a directory"));
  }
  SECTION("a device, which would be read without end") {
    json op = gather(4, 1, 2);
    op["indices"] = {{"file", "/dev/zero"}};
    const std::string message = required_input_error_of([&] { parse_workload(one_op(op), workload_file); });
    CHECK_THAT(message, Contains("ops[0].indices.file: expected an index file, found \"/dev/zero\", which is not a regular file"));
  }
  SECTION("malformed line") {
    const auto [message, index_file] = error_for("1\n# ok\n2x\n0\n", gather(4, 1, 3));
    CHECK_THAT(message, Contains(prefix + "expected one integer per line, found \"2x\" at " + index_file + ":3"));
  }
  SECTION("a fractional index") {
    const auto [message, index_file] = error_for("1\n1.0\n", gather(4, 1, 2));
    CHECK_THAT(message, Contains(prefix + "expected one integer per line, found \"1.0\" at " + index_file + ":2"));
  }
  SECTION("two indices on a line") {
    const auto [message, index_file] = error_for("1 2\n", gather(4, 1, 2));
    CHECK_THAT(message, Contains(prefix + "expected one integer per line, found \"1 2\" at " + index_file + ":1"));
  }
  SECTION("out of range for a gather: [0, num_inputs)") {
    const auto [message, index_file] = error_for("0\n4\n", gather(4, 1, 2));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 4) on each line, found 4 at " + index_file + ":2"));
  }
  SECTION("out of range for a scatter_add: [0, num_outputs)") {
    const auto [message, index_file] = error_for("0\n1\n\n7\n", scatter_add(3, 1, 7));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 7) on each line, found 7 at " + index_file + ":4"));
  }
  SECTION("negative") {
    const auto [message, index_file] = error_for("-1\n", gather(4, 1, 1));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 4) on each line, found -1 at " + index_file + ":1"));
  }
  SECTION("beyond int64") {
    const auto [message, index_file] = error_for("99999999999999999999\n", gather(4, 1, 1));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 4) on each line, found 99999999999999999999 at " +
                                 index_file + ":1"));
  }
  SECTION("too few") {
    const auto [message, index_file] = error_for("0\n1\n", gather(4, 1, 3));
    CHECK_THAT(message, Contains(prefix + "expected 3 indices (one per line), found 2 in " + index_file));
  }
  SECTION("too many") {
    const auto [message, index_file] = error_for("0\n1\n2\n3\n", scatter_add(3, 1, 4));
    CHECK_THAT(message, Contains(prefix + "expected 3 indices (one per line), found more: index number 4 at " +
                                 index_file + ":4"));
  }
  SECTION("empty") {
    const auto [message, index_file] = error_for("# nothing\n", gather(4, 1, 1));
    CHECK_THAT(message, Contains(prefix + "expected 1 index (one per line), found 0 in " + index_file));
  }
  SECTION("changed between parse and instantiate") {
    dir.write("idx.txt", "0\n");
    json op = gather(4, 1, 1);
    op["indices"] = {{"file", "idx.txt"}};
    const Workload w = parse_workload(one_op(op), workload_file);
    dir.write("idx.txt", "9\n");
    CHECK_THAT(required_input_error_of([&] { instantiate(w); }),
               Contains(workload_file + ": ops[0].indices.file: expected an index in [0, 4) on each line, found 9"));
  }
}

TEST_CASE("workload errors: files that are not JSON", "[workload][errors][unit]") {
  TempDir dir;
  SECTION("a syntax error names line and column") {
    const std::string path = dir.write("bad.json", "{\n  \"name\": \"x\",\n  \"ops\": [,]\n}\n");
    const std::string message = required_input_error_of([&] { load_workload(path); });
    CHECK_THAT(message, Contains(path + ":3:11: expected valid JSON, found syntax error"));
  }
  SECTION("a missing workload file") {
    const std::string path = dir.path("absent.json");
    CHECK_THAT(required_input_error_of([&] { load_workload(path); }),
               Contains(path + ": expected a readable JSON file, found no such file"));
  }
  SECTION("a valid file with a bad value names the file") {
    const std::string path = dir.write("neg.json", one_op(gather(1, -3, 1)).dump(2));
    CHECK_THAT(required_input_error_of([&] { load_workload(path); }),
               Contains(path + ": ops[0].num_features: expected a positive integer, found -3"));
  }
}
