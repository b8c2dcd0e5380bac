// Strided transfers: one descriptor moving a column block of rows, as layout rearrangements use.
#include <cstdint>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine.hpp"
#include "tests/support/sim_test_machine.hpp"

using namespace tilesim::sim;

namespace {
MachineConfig strided_machine() {
  return tilesim_test::sim_test_machine("strided", 4, 4096, 0);
}
}  // namespace

TEST_CASE("engine: a strided transfer moves every block and costs its total bytes", "[sim][engine][unit]") {
  Engine& engine = Engine::instance(1472);
  // Tile 0 holds a 4 x 2 column block (rows of 2 floats); tile 2 holds a 4 x 6 matrix whose columns
  // 3..4 receive it: 4 blocks of 8 bytes, source stride 8, destination stride 24.
  Program p;
  p.name = "strided";
  const BufferId block = p.add_buffer("block", 0, 4 * 2 * 4);
  const BufferId matrix = p.add_buffer("matrix", 2, 4 * 6 * 4);
  Superstep s;
  s.name = "move";
  Transfer t;
  t.src = {block, 0};
  t.bytes = 8;
  t.dst = {{matrix, 3 * 4}};
  t.blocks = 4;
  t.src_stride_bytes = 8;
  t.dst_stride_bytes = 24;
  s.exchange.transfers.push_back(t);
  p.steps.push_back(s);

  for (Mode mode : {Mode::functional, Mode::timing_only}) {
    engine.load(p, strided_machine(), mode);
    std::vector<float> values(8), zeros(24, 0.0f);
    std::iota(values.begin(), values.end(), 1.0f);
    if (mode == Mode::functional) {
      engine.write(block, 0, values.data(), 32);
      engine.write(matrix, 0, zeros.data(), 96);
    }
    const RunStats stats = engine.run();
    // sync 10, then exchange 5 + ceil(32 bytes / 4) = 13.
    CHECK(stats.total_cycles == 10 + 13);
    CHECK(stats.exchange_bytes_sent == 32);
    CHECK(stats.exchange_bytes_received == 32);
    if (mode == Mode::functional) {
      std::vector<float> out(24);
      engine.read(matrix, 0, out.data(), 96);
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 6; ++c) {
          const float expected = (c == 3 || c == 4) ? values[static_cast<std::size_t>(r * 2 + c - 3)] : 0.0f;
          CHECK(out[static_cast<std::size_t>(r * 6 + c)] == expected);
        }
      }
    }
  }
  // A stride that runs past the destination is refused at load.
  p.steps[0].exchange.transfers[0].dst_stride_bytes = 40;
  CHECK_THROWS_AS(engine.load(p, strided_machine(), Mode::timing_only), std::logic_error);
}
