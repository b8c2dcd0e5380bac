// RunOptions::same_graph_as_last_run: a sweep's next repeat of a point reuses the plans the IPU backend
// made for the last run. The cycles must be those of planning afresh, and an op whose plan reads its
// index tensor (segment_matmul follows its offsets) must be planned again whatever the caller says.
#include <catch2/catch.hpp>

#include "models/ipu/ipu_backend.hpp"
#include "tests/support/ipu_test_support.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using tilesim_test::bow;

namespace {

sim::Cycles cycles_of(IpuBackend& backend, const OpGraph& graph, const TensorValues& values, bool same_graph) {
  RunOptions options;
  options.timing_only = true;
  options.plan_details = false;
  options.same_graph_as_last_run = same_graph;
  const BackendResult r = backend.run(graph, values, options);
  REQUIRE(r.ops.size() == 1);
  return *r.ops[0].cycles;
}

}  // namespace

TEST_CASE("a repeat that reuses the last run's plans gets the cycles of plans made afresh, gather and scatters", "[unit]") {
  for (const OpKind kind : {OpKind::gather, OpKind::scatter_add, OpKind::scatter_mean}) {
    for (const OpShape shape : {OpShape{300, 32, 2000}, OpShape{4096, 128, 8192}}) {
      INFO(to_string(kind) << " " << shape.num_inputs << "x" << shape.num_features << " -> " << shape.num_outputs);
      const auto first = tilesim_test::make_problem(kind, shape, 1);
      const auto next = tilesim_test::make_problem(kind, shape, 2, tilesim_test::IndexPattern::first_half_only);
      IpuBackend repeated(bow(), "ipu:bow");
      cycles_of(repeated, first.graph, first.values, false);
      const sim::Cycles reused = cycles_of(repeated, next.graph, next.values, true);
      IpuBackend fresh(bow(), "ipu:bow");
      CHECK(reused == cycles_of(fresh, next.graph, next.values, false));
    }
  }
}

TEST_CASE("a segment_matmul is planned again for new offsets even when the caller says the graph is the same", "[unit]") {
  const std::int64_t M = 900, K = 64, N = 32, S = 4;
  auto problem = [&](std::vector<std::int32_t> offsets) {
    tilesim_test::GraphProblem p;
    Op op;
    op.name = "rel";
    op.kind = OpKind::segment_matmul;
    op.shape = {M, K, 0, N, S};
    op.input = p.add_input("x", {M, K}, 21);
    op.weight = p.add_input("w", {S, K, N}, 22);
    op.indices = p.add_indices("offsets", std::move(offsets));
    p.graph.add_op(op);
    return p;
  };
  const auto balanced = problem({0, 225, 450, 675, 900});
  const auto skewed = problem({0, 850, 850, 880, 900});
  IpuBackend fresh_balanced(bow(), "ipu:bow"), fresh_skewed(bow(), "ipu:bow");
  const sim::Cycles want = cycles_of(fresh_skewed, skewed.graph, skewed.values, false);
  // Offsets that change the plan, so reusing the balanced one would show.
  REQUIRE(cycles_of(fresh_balanced, balanced.graph, balanced.values, false) != want);
  IpuBackend repeated(bow(), "ipu:bow");
  cycles_of(repeated, balanced.graph, balanced.values, false);
  CHECK(cycles_of(repeated, skewed.graph, skewed.values, true) == want);
}
