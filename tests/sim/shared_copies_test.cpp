// Read-only broadcast copies (sim::Transfer::read_only_copies) share their source's bytes in functional
// runs: the outputs and every cycle must be those of a run that copies them, and a program that visibly
// breaks the promise must be refused.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/ipu_test_support.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/tensor_io.hpp"
#include "sim/block_copy.hpp"
#include "sim/engine.hpp"
#include "tests/support/sim_test_machine.hpp"

using namespace tilesim;
using tilesim_test::bow;

namespace {

struct CopiesOutcome {
  std::vector<float> output;
  sim::RunStats stats;
};

// Runs `program` functionally with the problem's inputs; with `share` false, every read-only copy is
// made a plain copy first.
CopiesOutcome run_functional(ipu::OpProgram program, const tilesim_test::IpuProblem& p, bool share) {
  for (auto& step : program.program.steps) {
    for (auto& t : step.exchange.transfers) t.read_only_copies = t.read_only_copies && share;
  }
  auto& engine = ipu::engine_for(bow());
  engine.load(program.program, bow().chip, sim::Mode::functional);
  ipu::write_pieces(engine, program.input, p.values.f32(p.op().input), program.input_width);
  ipu::write_pieces(engine, program.indices, p.values.i32(p.op().indices), 1);
  CopiesOutcome out;
  out.stats = engine.run();
  out.output.assign(static_cast<std::size_t>(p.op().shape.num_outputs * p.op().shape.num_features), 0.0f);
  ipu::read_pieces(engine, program.output, out.output, program.output_width);
  return out;
}

}  // namespace

TEST_CASE("shared copies: gathers and scatters give the bytes and cycles of copying runs", "[sim][ipu][unit][slow]") {
  // Splits with several index groups (the gather's table broadcast), row blocks (the scatter's message
  // broadcast, the gather's second stage) and column blocks (the indices' broadcast).
  const OpShape shapes[] = {{4096, 512, 32768}, {256, 64, 2048}, {64, 16, 32}, {4096, 16, 512}};
  std::int64_t flagged = 0;  // the comparison means something only if some programs share copies
  for (OpKind kind : {OpKind::gather, OpKind::scatter_add, OpKind::scatter_mean}) {
    for (const OpShape& shape : shapes) {
      const auto p = tilesim_test::make_problem(kind, shape, 7);
      const auto& indices = p.values.i32(p.op().indices);
      const auto plan = ipu::plan_op(p.op(), indices, bow());
      const auto program = ipu::build_op_program(p.op(), plan, indices, bow());
      for (const auto& step : program.program.steps) {
        for (const auto& t : step.exchange.transfers) flagged += t.read_only_copies ? 1 : 0;
      }
      const CopiesOutcome copied = run_functional(program, p, false);
      const CopiesOutcome shared = run_functional(program, p, true);
      INFO(to_string(kind) << " " << shape.num_inputs << " x " << shape.num_features << " x " << shape.num_outputs);
      REQUIRE(copied.output.size() == shared.output.size());
      CHECK(std::memcmp(copied.output.data(), shared.output.data(), copied.output.size() * sizeof(float)) == 0);
      CHECK(copied.stats.total_cycles == shared.stats.total_cycles);
      REQUIRE(copied.stats.phases.size() == shared.stats.phases.size());
      for (std::size_t k = 0; k < copied.stats.phases.size(); ++k) {
        CHECK(copied.stats.phases[k].cycles == shared.stats.phases[k].cycles);
        CHECK(copied.stats.phases[k].bytes == shared.stats.phases[k].bytes);
      }
      CHECK(copied.stats.exchange_bytes_received == shared.stats.exchange_bytes_received);
    }
  }
  CHECK(flagged > 0);
}

namespace {

sim::MachineConfig small_machine() {
  return tilesim_test::sim_test_machine("small", 4, 4096, 0);
}

// Tile 0's 16-byte block broadcast read-only to tiles 1 and 2.
struct Broadcast {
  sim::Program program;
  sim::BufferId held = -1, copy1 = -1, copy2 = -1;
  Broadcast() {
    program.name = "broadcast";
    held = program.add_buffer("held", 0, 16);
    copy1 = program.add_buffer("copy", 1, 16);
    copy2 = program.add_buffer("copy", 2, 16);
    sim::Superstep step;
    step.name = "send";
    sim::Transfer t{{held, 0}, 16, {{copy1, 0}, {copy2, 0}}};
    t.read_only_copies = true;
    step.exchange.transfers.push_back(t);
    program.steps.push_back(step);
  }
};

}  // namespace

TEST_CASE("shared copies: a copy reads its source's bytes and refuses host writes", "[sim][engine][unit]") {
  auto& engine = sim::Engine::instance(1472);
  Broadcast b;
  engine.load(b.program, small_machine(), sim::Mode::functional);
  const float values[4] = {1.5f, -2.0f, 3.25f, 4.0f};
  engine.write(b.held, 0, values, 16);
  engine.run();
  float seen[4] = {};
  engine.read(b.copy2, 0, seen, 16);
  CHECK(std::memcmp(seen, values, 16) == 0);
  CHECK_THROWS_AS(engine.write(b.copy1, 0, values, 4), std::logic_error);
}

TEST_CASE("shared copies: a program that breaks the promise is refused", "[sim][engine][unit]") {
  auto& engine = sim::Engine::instance(1472);
  SECTION("a copy read before the exchange") {
    Broadcast b;
    sim::Vertex v;
    v.codelet = "early reader";
    v.worker_cycles = {1};
    v.buffers = {{b.copy1, 0}};
    b.program.steps.front().compute.vertices.push_back({1, v});
    CHECK_THROWS_AS(engine.load(b.program, small_machine(), sim::Mode::functional), std::logic_error);
  }
  SECTION("a copy that is part of a buffer") {
    Broadcast b;
    b.program.buffers[static_cast<std::size_t>(b.copy1)].bytes = 32;
    CHECK_THROWS_AS(engine.load(b.program, small_machine(), sim::Mode::functional), std::logic_error);
    // Timing-only moves no bytes, so nothing is shared and the promise is not needed.
    CHECK_NOTHROW(engine.load(b.program, small_machine(), sim::Mode::timing_only));
  }
  SECTION("a source overwritten by a later exchange") {
    Broadcast b;
    const auto other = b.program.add_buffer("other", 3, 16);
    sim::Superstep later;
    later.name = "overwrite";
    later.exchange.transfers.push_back({{other, 0}, 16, {{b.held, 0}}});
    b.program.steps.push_back(later);
    CHECK_THROWS_AS(engine.load(b.program, small_machine(), sim::Mode::functional), std::logic_error);
  }
}

TEST_CASE("block copy: short and long moves, overlapping ones as memmove", "[sim][engine][unit]") {
  for (std::size_t n : {0u, 1u, 3u, 4u, 7u, 8u, 15u, 16u, 24u, 31u, 32u, 63u, 64u, 65u, 200u}) {
    for (std::size_t shift : {0u, 1u, 5u, 8u, 17u, 20u, 25u, 40u}) {
      std::vector<std::byte> expected(300), actual(300);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = actual[i] = static_cast<std::byte>(i * 7 + 3);
      std::memmove(expected.data() + shift, expected.data() + 20, n);
      sim::move_bytes(actual.data() + shift, actual.data() + 20, n);
      INFO("n " << n << " to offset " << shift);
      CHECK(expected == actual);
    }
  }
}
