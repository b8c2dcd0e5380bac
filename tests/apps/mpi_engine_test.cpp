// The engine spread over MPI ranks (sim/engine.hpp) end to end: `mpirun -n 2` and `-n 4` `tilesim run` of
// a functional training step on ipu:bow-2000 and ipu:pod16 writes the one-process report bit for bit
// (every number but the host's wall times), rank 0 alone printing; the engine driven directly
// (tests/mpi/engine_driver.cpp) gives every rank the one process's bytes, host reads and writes across
// ranks included; a vertex failing on one rank fails every rank, none left waiting; and bad input ends
// the job with its exit code, said once.
//
// These cases exist only where CMake found MPI (TILESIM_MPIEXEC); elsewhere tests/CMakeLists.txt
// registers a CTest test that reports them skipped and says why. The in-process checks of the same
// machinery are in tests/sim/rank_spread_test.cpp.
#ifdef TILESIM_MPIEXEC

#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

using json = nlohmann::json;
using namespace tilesim_test;
using Catch::Matchers::Contains;

namespace {

// `mpiexec -n K COMMAND` from the source tree under a time limit (a rank left waiting would otherwise
// hang the test), its output kept in files under `dir`.
CliResult run_ranks(int ranks, const std::string& command, const fs::path& dir, const std::string& tag) {
  return run_in_source_tree("timeout 300 " + mpi_launch(ranks) + " " + command, dir / (tag + ".stdout"),
                            dir / (tag + ".stderr"));
}

// One GCN layer's training step on 1000 nodes of 200 features: its 800 kB tensors, mapped linearly at
// 128 bytes a tile at least, reach past the first 5888 tiles, so a POD16's rank 1 of 4 and each
// Bow-2000 chip hold some, and exchanges cross ranks (checked below, not assumed).
std::string training_workload(const fs::path& dir) {
  const json w = {{"name", "spread_train"},
                  {"seed", 3},
                  {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 1000}, {"num_edges", 4000}}},
                  {"num_features", 200},
                  {"model", json::array({{{"layer", "gcn"}, {"name", "conv1"}, {"out", 8}}})},
                  {"train", {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}}}, {"steps", 1}}}};
  return write_text(dir / "spread_train.json", w.dump()).string();
}

// The report without what two runs of the same step may differ in: the date and the host's seconds.
json comparable(json j) {
  if (j.is_object()) {
    for (const char* key : {"created_utc", "wall_s", "engine_wall_s", "simulated_cycles_per_s"}) j.erase(key);
    for (auto& [key, value] : j.items()) value = comparable(value);
  } else if (j.is_array()) {
    for (auto& value : j) value = comparable(value);
  }
  return j;
}

struct SpreadLine {
  long long programs = -1, exchange_bytes = -1;
};

// "engine spread over K MPI ranks: P functional programs spread, B exchange bytes sent between ranks".
SpreadLine spread_line(const std::string& err, int ranks) {
  std::smatch m;
  const std::regex line("engine spread over " + std::to_string(ranks) +
                        " MPI ranks: ([0-9]+) functional programs spread, ([0-9]+) exchange bytes sent between ranks");
  SpreadLine s;
  if (std::regex_search(err, m, line)) {
    s.programs = std::stoll(m[1]);
    s.exchange_bytes = std::stoll(m[2]);
  }
  return s;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void check_spread_training(const std::string& backend, const std::vector<int>& rank_counts) {
  TempDir dir("mpi-engine-" + backend.substr(4));
  const std::string workload = training_workload(dir.dir());
  const auto one = run_tilesim("run " + workload + " --backends " + backend + " --out " + dir.path("one"), dir.dir());
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const json expected = json::parse(slurp(dir.path("one/report.json")));
  const json& result = expected["results"][0];
  // Not a vacuous comparison: a verified step with a loss and a cycle count for every op.
  REQUIRE(result["ops"].size() == 19);
  for (const json& op : result["ops"]) {
    CHECK(op["verified"] == true);
    CHECK(op["cycles"].get<long long>() > 0);
  }
  REQUIRE(result["training"]["loss"][0].is_number());

  for (int ranks : rank_counts) {
    INFO(ranks << " ranks");
    const auto r = run_ranks(ranks,
                             std::string(TILESIM_BINARY) + " run " + workload + " --backends " + backend + " --out " +
                                 dir.path("n" + std::to_string(ranks)),
                             dir.dir(), "n" + std::to_string(ranks));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // Every op's programs were spread, and bytes crossed ranks in exchanges.
    const SpreadLine spread = spread_line(r.err, ranks);
    CHECK(spread.programs >= 19);
    CHECK(spread.exchange_bytes > 0);
    // Rank 0 alone printed the table and the report's path, and wrote the report.
    CHECK(count(r.out, "report: ") == 1);
    CHECK(count(r.out, "(loss)") == 1);
    const json got = json::parse(slurp(dir.path("n" + std::to_string(ranks) + "/report.json")));
    CHECK(got["results"][0]["training"]["loss"] == result["training"]["loss"]);
    for (std::size_t k = 0; k < result["ops"].size(); ++k) {
      INFO("op " << result["ops"][k]["op"]);
      CHECK(got["results"][0]["ops"][k]["cycles"] == result["ops"][k]["cycles"]);
      CHECK(got["results"][0]["ops"][k]["verification"] == result["ops"][k]["verification"]);
    }
    // And everything else, number for number (JSON numbers parse back to the doubles written).
    CHECK(comparable(got) == comparable(expected));
  }
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
  }
  return found;
}

std::string after_rank(const std::string& line) { return line.substr(line.find(':')); }

}  // namespace

TEST_CASE("mpirun: a functional training step on ipu:bow-2000 spread over 2 and 4 ranks writes the one-process report",
          "[mpi][cli][slow]") {
  check_spread_training("ipu:bow-2000", {2, 4});
}

TEST_CASE("mpirun: the same step on ipu:pod16 spread over 4 ranks writes the one-process report", "[mpi][cli][slow]") {
  check_spread_training("ipu:pod16", {4});
}

TEST_CASE("mpirun: every rank reads the one process's bytes, written and moved across ranks", "[mpi][cli]") {
  TempDir dir("mpi-engine-driver");
  const auto one = run_ranks(1, TILESIM_MPI_ENGINE_DRIVER + std::string(" spread"), dir.dir(), "one");
  INFO(one.out << one.err);
  REQUIRE(one.exit_code == 0);
  const auto expected = lines_starting(one.out, "rank 0: cycles");
  REQUIRE(expected.size() == 1);
  CHECK_THAT(expected[0], Contains("tile 9 right") && Contains("tile 15's written input read back"));
  CHECK_THAT(one.out, Contains("rank 0: 0 programs spread"));  // a world of one rank holds every tile
  for (int ranks : {2, 4}) {
    INFO(ranks << " ranks");
    const auto r = run_ranks(ranks, TILESIM_MPI_ENGINE_DRIVER + std::string(" spread"), dir.dir(), "n" + std::to_string(ranks));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    long long sent = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      const std::string prefix = "rank " + std::to_string(rank);
      const auto line = lines_starting(r.out, prefix + ": cycles");
      REQUIRE(line.size() == 1);
      CHECK(after_rank(line[0]) == after_rank(expected[0]));
      const auto totals = lines_starting(r.out, prefix + ": 1 programs spread, ");
      REQUIRE(totals.size() == 1);
      sent += std::stoll(totals[0].substr(totals[0].find("spread, ") + 8));
    }
    CHECK(sent > 0);
  }
}

TEST_CASE("mpirun: a vertex failing on one rank fails every rank with its exit code and message, and the engine runs on",
          "[mpi][cli]") {
  TempDir dir("mpi-engine-fail");
  const auto one = run_ranks(1, TILESIM_MPI_ENGINE_DRIVER + std::string(" spread"), dir.dir(), "one");
  REQUIRE(one.exit_code == 0);
  const auto expected = lines_starting(one.out, "rank 0: cycles");
  REQUIRE(expected.size() == 1);
  const auto r = run_ranks(2, TILESIM_MPI_ENGINE_DRIVER + std::string(" fail"), dir.dir(), "fail");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);  // not killed by the time limit: no rank was left waiting
  // Tile 15 is rank 1's: it fails with its own error, rank 0 with rank 1's, both with exit code 2.
  CHECK(lines_starting(r.out, "rank 1: failed with exit code 2: vertex on tile 15: index 99 outside the table").size() == 1);
  CHECK(lines_starting(r.out, "rank 0: failed with exit code 2: rank 1 failed: vertex on tile 15: index 99 outside the table").size() ==
        1);
  for (const std::string rank : {"rank 0", "rank 1"}) {
    const auto after = lines_starting(r.out, rank + ": after the failure, cycles");
    REQUIRE(after.size() == 1);
    CHECK(after[0].substr(after[0].find("cycles")) == expected[0].substr(expected[0].find("cycles")));
  }
}

TEST_CASE("mpirun: tilesim run's bad input ends every rank with exit 2, said once by rank 0", "[mpi][cli]") {
  TempDir dir("mpi-engine-bad");
  const auto r = run_ranks(2, std::string(TILESIM_BINARY) + " run " + dir.path("missing.json") + " --backends ipu:bow-2000 --out " +
                                  dir.path("out"),
                           dir.dir(), "bad");
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(count(r.err, "tilesim: error:") == 1);
  CHECK_THAT(r.err, Contains("tilesim: error: rank 0 of 2: " + dir.path("missing.json")));
  CHECK(r.out.empty());
}

#endif  // TILESIM_MPIEXEC
