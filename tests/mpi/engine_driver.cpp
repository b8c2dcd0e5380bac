// tilesim_mpi_engine_driver: drives the engine spread over the ranks of `mpirun -n K` directly, for
// tests/apps/mpi_engine_test.cpp, which compares what each rank prints with a one-process run.
//   spread   the program of tests/support/sim_spread_program.hpp: inputs written as column blocks over the
//            tiles of every rank, a run, every output read back; prints one line per rank with the
//            cycles and a digest of each output, as read on that rank
//   fail     the same program with a vertex on the last tile that throws: every rank must fail (with
//            the failing rank's exit code and message), none left waiting; then the plain program
//            runs again on the same engine
// Exit status 0 when it ran as described (the test judges the printed lines), 1 otherwise.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "mpi/world.hpp"
#include "sim/engine.hpp"
#include "tests/support/sim_spread_program.hpp"

using namespace tilesim::sim;

namespace {

std::string digest(const void* data, std::size_t bytes) {
  // FNV-1a: enough to tell any two byte strings this program makes apart.
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// Writes the inputs: a host array of 2 rows x 64 int32, tile t holding columns 2t and 2t+1 of both
// rows (16 column blocks over the same host rows, as an op's tensor is split); then tile 15's third
// value alone, by Engine::write.
void write_inputs(Engine& engine, const tilesim_test::SpreadProgram& s) {
  const auto in = tilesim_test::spread_inputs();
  std::vector<std::int32_t> host(2 * 32);
  std::vector<HostRows> pieces;
  for (TileId t = 0; t < 16; ++t) {
    for (int r = 0; r < 2; ++r) {
      for (int c = 0; c < 2; ++c) host[static_cast<std::size_t>(r * 32 + 2 * t + c)] = in[static_cast<std::size_t>(4 * t + 2 * r + c)];
    }
    pieces.push_back({s.input[static_cast<std::size_t>(t)], 2, 8, 8 * t, 128});
  }
  engine.write_rows(pieces, host.data(), 256);
  const std::int32_t replaced = 4242;
  engine.write(s.input[15], 8, &replaced, 4);
}

std::string run_spread(Engine& engine, const tilesim_test::SpreadProgram& s, const std::string& rank) {
  engine.load(s.program, tilesim_test::four_chips(), Mode::functional);
  write_inputs(engine, s);
  const RunStats stats = engine.run();
  std::vector<std::int64_t> results(16);
  std::vector<HostRows> pieces;
  for (TileId t = 0; t < 16; ++t) pieces.push_back({s.result[static_cast<std::size_t>(t)], 1, 8, 8 * t, 8});
  engine.read_rows(pieces, results.data(), 128);
  std::vector<std::int32_t> inputs(64);
  pieces.clear();
  for (TileId t = 0; t < 16; ++t) pieces.push_back({s.input[static_cast<std::size_t>(t)], 2, 8, 8 * t, 128});
  engine.read_rows(pieces, inputs.data(), 256);
  std::byte gathered[128], far_copy[32], column[24];
  engine.read(s.gathered, 0, gathered, sizeof gathered);
  engine.read(s.table_far_copy, 0, far_copy, sizeof far_copy);
  engine.read(s.column, 0, column, sizeof column);
  std::ostringstream line;
  line << rank << ": cycles " << stats.total_cycles << " (";
  for (const auto& phase : stats.phases) line << phase.cycles << (&phase == &stats.phases.back() ? "" : " ");
  line << "); results " << digest(results.data(), 128) << ", inputs " << digest(inputs.data(), 256) << ", gathered "
       << digest(gathered, sizeof gathered) << ", far copy " << digest(far_copy, sizeof far_copy) << ", column "
       << digest(column, sizeof column) << "; tile 9 " << (results[9] == tilesim_test::spread_tile9_result() ? "right" : "WRONG")
       << ", tile 15's written input " << (inputs[32 + 30] == 4242 ? "read back" : "LOST");
  return line.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  if (scenario != "spread" && scenario != "fail") {
    std::cerr << "usage: tilesim_mpi_engine_driver spread|fail\n";
    return 1;
  }
  const tilesim::mpi::World& world = tilesim::mpi::world();
  const std::string rank = "rank " + std::to_string(world.rank);
  Engine::spread_over_mpi_ranks(true);
  Engine& engine = Engine::instance(16);
  const tilesim_test::SpreadProgram s = tilesim_test::spread_program();
  try {
    if (scenario == "fail") {
      tilesim_test::SpreadProgram failing = tilesim_test::spread_program();
      failing.program.steps[1].compute.vertices.push_back(
          {15, tilesim_test::spread_vertex({1}, {{failing.value[15], 0}}, [](const VertexContext&) {
             throw tilesim::InputError("vertex on tile 15: index 99 outside the table");
           })});
      try {
        run_spread(engine, failing, rank);
        std::cout << rank << ": the failing program did not fail" << std::endl;
        return 1;
      } catch (const tilesim::Error& e) {
        std::cout << rank << ": failed with exit code " << static_cast<int>(e.code()) << ": " << e.what() << std::endl;
      }
      std::cout << rank << ": after the failure, " << run_spread(engine, s, rank).substr(rank.size() + 2) << std::endl;
    } else {
      std::cout << run_spread(engine, s, rank) << std::endl;
    }
    const Engine::SpreadTotals totals = Engine::spread_totals();
    std::cout << rank << ": " << totals.programs_spread << " programs spread, " << totals.exchange_bytes_sent
              << " exchange bytes sent to other ranks, " << totals.host_bytes_received << " host bytes received" << std::endl;
  } catch (const std::exception& e) {
    std::cout << rank << ": unexpected error: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
