// Limits checked before memory is taken: readers bound their lines, declared sizes are checked against
// the host's memory before anything is allocated per node or edge, counts have documented maxima that
// their messages quote, and values that would not read back (a negative seed) are refused.
#include <chrono>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/graphs/loaders.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;
using namespace tilesim_test;
using Catch::Matchers::Contains;

namespace {

const fs::path& limits_dir() {
  static const fs::path d = scratch("input_limits_test");
  return d;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A command line tilesim must refuse as bad input (exit code 2), and what its message must say.
struct RefusedCommand {
  std::string args, message;
};

void check_refused(const std::vector<RefusedCommand>& cases) {
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = run_tilesim(c.args, limits_dir());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(c.message));
  }
}

}  // namespace

TEST_CASE("an index file without line ends is refused after one line's bound, not read whole, devices are not read", "[limits][unit]") {
  // /dev/zero never ends and a pipe may wait for a writer: neither is read.
  CHECK_THROWS_WITH(workloads::read_index_file("/dev/zero", 10, 100, "w.json", "ops[0].indices.file"),
                    "w.json: ops[0].indices.file: expected an index file, found \"/dev/zero\", which is not a regular file");
  // A regular file without line ends (4 GB of digits would do the same) stops at the line bound.
  const fs::path no_newline = limits_dir() / "no_newline.txt";
  {
    std::ofstream out(no_newline, std::ios::binary);
    out << std::string(1 << 20, '\0');
  }
  try {
    workloads::read_index_file(no_newline.string(), 10, 100, "w.json", "ops[0].indices.file");
    FAIL("a file of NUL bytes was accepted as an index file");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains("w.json: ops[0].indices.file: expected one integer per line (lines of at most 256 bytes)") &&
                             Contains("found a longer line \"\\x00\\x00") && Contains("at " + no_newline.string() + ":1"));
  }
  const fs::path long_line = write_text(limits_dir() / "long.txt", "1\n" + std::string(300, '7') + "\n");
  CHECK_THROWS_WITH(workloads::read_index_file(long_line.string(), 2, 100, "w.json", "f"), Contains(long_line.string() + ":2"));
  // A comment line may be long: it is skipped without being kept.
  const fs::path comment = write_text(limits_dir() / "comment.txt", "# " + std::string(100000, 'c') + "\n  # indented\n3\n4");
  CHECK(workloads::read_index_file(comment.string(), 2, 10, "w.json", "f") == std::vector<std::int32_t>{3, 4});
  // Lines at the bound still read.
  const fs::path padded = write_text(limits_dir() / "padded.txt", std::string(250, ' ') + "5\n");
  CHECK(workloads::read_index_file(padded.string(), 1, 10, "w.json", "f") == std::vector<std::int32_t>{5});
}

TEST_CASE("graph files: lines are bounded and declared edge counts are checked before memory is reserved", "[limits][unit]") {
  using namespace workloads::graphs;
  const fs::path zeros = limits_dir() / "zeros.mtx";
  {
    std::ofstream out(zeros, std::ios::binary);
    out << std::string(3 << 20, '\0');
  }
  CHECK_THROWS_WITH(load_matrix_market(zeros.string()), Contains(":1: expected lines of at most 1048576 bytes") && Contains("\\x00"));
  CHECK_THROWS_WITH(load_edge_list(zeros.string()), Contains("expected lines of at most"));
  // A METIS header declaring 3e9 edges in a 16-byte file: refused before the edge arrays are reserved.
  const fs::path metis = write_text(limits_dir() / "huge.graph", "2 3000000000\n1\n2\n");
  CHECK_THROWS_WITH(load_metis(metis.string()), Contains(":1: expected at most 1073741823 edges") && Contains("found 3000000000"));
  // Within the bound, a header that claims more edges than the file holds reserves only what the file
  // could fill and fails at the end as before.
  const fs::path short_metis = write_text(limits_dir() / "short.graph", "2 100000000\n2\n1\n");
  CHECK_THROWS_WITH(load_metis(short_metis.string()), Contains("neighbour entries"));
}

TEST_CASE("declared sizes over the host's memory are refused before anything is allocated per node", "[limits][cli]") {
  // A Matrix Market file of three lines declaring two billion nodes.
  write_text(limits_dir() / "two_billion.mtx", "%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 1\n1 2\n");
  const fs::path mm = write_text(limits_dir() / "mm.json", R"({"name": "mm", "graph": {"file": "two_billion.mtx", "num_features": 16},
                                                       "model": [{"layer": "gcn", "out": 16}]})");
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_tilesim("run " + mm.string() + " --backends cpu --out " + (limits_dir() / "mm_out").string(), limits_dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("mm.json: model: expected a model whose tensors") &&
                        Contains("found at least 244140 MiB (the node features of the input and each layer's output) on a graph of "
                                 "2000000000 nodes and 1 edges"));
  // A generator declaring two billion nodes and ten edges: refused when the graph object is read.
  const fs::path gen = write_text(limits_dir() / "gen.json", R"({"name": "gen", "num_features": 16, "model": [{"layer": "gcn", "out": 16}],
      "graph": {"generator": "chung_lu", "num_nodes": 2000000000, "num_edges": 10, "max_degree": 5}})");
  r = run_tilesim("run " + gen.string() + " --backends cpu --out " + (limits_dir() / "gen_out").string(), limits_dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("gen.json: graph.num_nodes: expected a graph that fits in half of this host's memory") &&
                        Contains("found 10 edges and 2000000000 nodes"));
  // A row wider than a tile's SRAM fits nowhere: exit 3 before the graph is built.
  r = run_tilesim("placement --graph cora --features 2147483647", limits_dir());
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Contains("one row of 2147483647 float32 features is 8589934588 bytes, more than a tile's"));
  // Each of these would take minutes or all memory if the limits came after the work.
  CHECK(seconds_since(t0) < 120);
}

TEST_CASE("counts, seeds and backend lists out of their ranges are refused, quoting the range", "[limits][cli]") {
  const std::string run = "run workloads/examples/default.json --backends cpu --out " + (limits_dir() / "range_out").string();
  const std::vector<RefusedCommand> cases = {
      {run + " --repeats 1000000000", "--repeats: expected an integer in [1, 100000], found 1000000000"},
      {run + " --repeats 0", "--repeats: expected an integer in [1, 100000], found 0"},
      {run + " --warmup 1001", "--warmup: expected an integer in [0, 1000], found 1001"},
      {run + " --seed -1", "--seed: expected an integer in [0, 9223372036854775807], found -1"},
      {"run workloads/examples/default.json --backends cpu,", "found an empty entry in \"cpu,\""},
      {"run workloads/examples/default.json --backends ,cpu", "found an empty entry in \",cpu\""},
      {"run workloads/examples/default.json --backends cpu,,ipu", "found an empty entry in \"cpu,,ipu\""},
      {"sweep workloads/sweeps/hydronet.json --backends ''", "--backends: expected a comma-separated list of backends"},
      {"sweep workloads/sweeps/hydronet.json --backends 'cpu,'", "found an empty entry in \"cpu,\""},
      {"sweep workloads/sweeps/hydronet.json --jobs 257", "--jobs: expected an integer in [1, 256], found 257"},
      {"placement --graph cora --features 0", "--features: expected a feature width in [1, 2147483647], found 0"},
      {"placement --graph cora --features -3", "--features: expected a feature width in [1, 2147483647], found -3"},
      {"placement --graph cora --seed -2", "--seed: expected an integer in [0, 9223372036854775807], found -2"},
  };
  check_refused(cases);
  // The ranges the messages quote are the ones in common/limits.hpp.
  CHECK(limits::range_text(1, limits::max_timed_calls) == "[1, 100000]");
  CHECK(limits::max_size == 2147483647);
}

TEST_CASE("numeric flags beyond their type or not numbers are refused with the flag, the range and the value", "[limits][cli]") {
  const fs::path out = limits_dir() / "numeric_out";
  const std::string run = "run workloads/examples/default.json --backends cpu --out " + out.string();
  const std::string seed_range = "[0, 9223372036854775807]";
  const std::vector<RefusedCommand> cases = {
      // 2^63 and 2^64 were clamped to 2^63 - 1 by the conversion, and run with it.
      {run + " --seed 9223372036854775808", "--seed: expected an integer in " + seed_range + ", found 9223372036854775808"},
      {run + " --seed 18446744073709551616", "--seed: expected an integer in " + seed_range + ", found 18446744073709551616"},
      {run + " --seed 1e20", "--seed: expected an integer in " + seed_range + ", found 1e20"},
      {run + " --repeats 99999999999999999999", "--repeats: expected an integer in [1, 100000], found 99999999999999999999"},
      {run + " --repeats abc", "--repeats: expected an integer in [1, 100000], found \"abc\" (not a number)"},
      {run + " --warmup 2.5", "--warmup: expected an integer in [0, 1000], found 2.5"},
      {run + " --steps ten", "--steps: expected an integer in [1, 1000000], found \"ten\" (not a number)"},
      {"placement --graph cora --features 1e20", "--features: expected a feature width in [1, 2147483647], found 1e20"},
      {"placement --graph cora --seed 9223372036854775808", "--seed: expected an integer in " + seed_range + ", found 9223372036854775808"},
      {"sweep workloads/sweeps/hydronet.json --jobs 4294967297", "--jobs: expected an integer in [1, 256], found 4294967297"},
      {"fit workloads/examples/default.json --sample-batches -1", "--sample-batches: expected an integer in [1, 1000000], found -1"},
      {"plot surface results.csv --target cpu --range many", "--range: expected a number in [1.5, 1e+06], found \"many\" (not a number)"},
  };
  check_refused(cases);
  // Refused before anything ran: no report with a clamped seed.
  CHECK_FALSE(fs::exists(out / "report.json"));
}

TEST_CASE("an empty --out is refused, and the default folder's report is kept", "[limits][cli]") {
  // An empty --out used to mean "the default folder" and replaced the report there.
  const fs::path home = limits_dir() / "empty_out";
  fs::remove_all(home);
  fs::create_directories(home / "out" / "default");
  const fs::path earlier = write_text(home / "out" / "default" / "report.json", "{\"earlier\": true}\n");
  const std::string workload = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/default.json";
  const auto r = run_in_source_tree("cd '" + home.string() + "' && " + TILESIM_BINARY + " run '" + workload + "' --backends cpu --out ''",
                                    home / "stdout.txt", home / "stderr.txt");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--out: expected a directory path, found an empty value"));
  CHECK(slurp(earlier) == "{\"earlier\": true}\n");
  const auto sweep = run_tilesim("sweep workloads/sweeps/hydronet.json --out ''", limits_dir());
  CHECK(sweep.exit_code == 2);
  CHECK_THAT(sweep.err, Contains("--out: expected a directory path, found an empty value"));
}
