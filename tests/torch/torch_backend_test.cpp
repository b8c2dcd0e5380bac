// The torch-cpu peer's forward ops: the backend end to end (verified outputs, agreement with the cpu
// backend, the thread count in its host JSON) and each ATen call the benchmark compares against,
// checked against the references so that the benchmark's peer computes what tilesim's kernel does.
// Training is in torch_training_test.cpp, half dtypes in torch_half_test.cpp. One executable for the
// three: linking libtorch costs every process ~0.3 s at start, which tilesim_tests' many processes
// should not pay.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "ir/op_graph.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference_ops.hpp"
#include "ir/tensor_values.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/torch/accumulation_probe.hpp"
#include "kernels/torch/torch_backend.hpp"
#include "kernels/torch/torch_ops.hpp"
#include "kernels/torch/training_checks.hpp"
#include "kernels/torch/training_graph.hpp"
#include "tests/support/cpu_op_cases.hpp"
#include "tests/support/random_inputs.hpp"

using namespace tilesim;
namespace cpu = tilesim::kernels::cpu;
namespace peer = tilesim::kernels::torch_peer;
namespace reference = tilesim::reference;

namespace {

using tilesim_test::random_indices;
using tilesim_test::random_values;

}  // namespace

TEST_CASE("torch-cpu runs a graph, verified, on the cpu backend's thread count, and agrees with the cpu backend", "[torch][backend][unit][slow]") {
  REQUIRE(peer::built_in());
  OpGraph graph;
  graph.add_gather_scatter("lookup", OpKind::gather, DType::float32, {300, 17, 2000});
  graph.add_gather_scatter("aggregate", OpKind::scatter_add, DType::float32, {2000, 17, 64});
  graph.add_gather_scatter("large", OpKind::scatter_add, DType::float32, {5000, 33, 4000});
  graph.ops[1].input = graph.ops[0].output;  // the scatter sums the gathered rows
  std::mt19937 rng(8);
  TensorValues inputs;
  inputs.set_f32(graph.ops[0].input, random_values(300 * 17, rng));
  inputs.set_i32(graph.ops[0].indices, random_indices(2000, 300, rng));
  inputs.set_i32(graph.ops[1].indices, random_indices(2000, 64, rng));
  inputs.set_f32(graph.ops[2].input, random_values(5000 * 33, rng));
  inputs.set_i32(graph.ops[2].indices, random_indices(5000, 4000, rng));

  auto torch_backend = peer::make_backend();
  RunOptions options;
  options.warmup = 1;
  options.repeats = 3;
  const BackendResult result = torch_backend->run(graph, inputs, options);
  CHECK(torch_backend->name() == "torch-cpu");
  CHECK(result.backend == "torch-cpu");
  CHECK(result.kind == ResultKind::measured);
  CHECK(result.host.at("aten_threads") == omp_get_max_threads());
  CHECK(result.host.at("omp_max_threads") == omp_get_max_threads());
  CHECK(result.host.at("torch_version").get<std::string>() == peer::version());
  CHECK(result.host.at("aten_calls").contains("scatter_add"));
  REQUIRE(result.ops.size() == 3);
  for (const OpResult& row : result.ops) {
    INFO(row.op << ": " << row.verification);
    CHECK(row.verified == true);
    CHECK(row.time_s > 0);
  }

  cpu::CpuBackend cpu_backend;
  cpu_backend.run(graph, inputs, options);
  const TensorValues* ours = cpu_backend.computed_outputs();
  const TensorValues* theirs = torch_backend->computed_outputs();
  REQUIRE(theirs != nullptr);
  for (const Op& op : graph.ops) {
    // compare_outputs reads the op's operands from one TensorValues: the chained scatter's input is the gather's output.
    TensorValues operands = inputs;
    if (ours->has(op.input)) operands.set_f32(op.input, ours->f32(op.input));
    const auto agreement = reference::compare_outputs(op, operands, ours->f32(op.output), theirs->f32(op.output));
    INFO(op.name << ": " << agreement.detail);
    CHECK(agreement.equal);
  }
}

TEST_CASE("torch-cpu rejects an index out of range before timing anything", "[torch][backend][unit][slow]") {
  OpGraph graph;
  const Op& op = graph.add_gather_scatter("bad", OpKind::gather, DType::float32, {4, 2, 3});
  TensorValues inputs;
  inputs.set_f32(op.input, std::vector<float>(8, 1.0f));
  inputs.set_i32(op.indices, {0, 4, 1});
  CHECK_THROWS_WITH(peer::make_backend()->run(graph, inputs, RunOptions{}), Catch::Contains("indices[1] = 4 is outside [0, 4)"));
}

TEST_CASE("the benchmark's ATen calls compute what tilesim's kernels do", "[torch][peer][unit][slow]") {
  peer::set_num_threads(omp_get_max_threads());
  CHECK(peer::num_threads() == omp_get_max_threads());
  std::mt19937 rng(9);
  const std::int64_t messages = 3000, features = 19, outputs = 250;
  const auto src = random_values(messages * features, rng);
  const auto indices = random_indices(messages, outputs, rng);
  std::vector<float> out(static_cast<std::size_t>(outputs * features), std::numeric_limits<float>::quiet_NaN());

  SECTION("scatter sum, mean and amax (PyG's scatter, rows with no message 0)") {
    const std::pair<cpu::Reduce, reference::Reduction> reductions[] = {{cpu::Reduce::sum, reference::Reduction::sum},
                                                                       {cpu::Reduce::mean, reference::Reduction::mean},
                                                                       {cpu::Reduce::max, reference::Reduction::max}};
    // 400 rows for 3000 messages: some rows get none.
    const auto sparse = random_indices(messages, 4000, rng);
    std::vector<float> wide(static_cast<std::size_t>(4000 * features));
    for (const auto& [ours, theirs] : reductions) {
      peer::scatter(ours, src.data(), messages, features, sparse.data(), 4000, wide.data())();
      const auto v = reference::check("torch scatter", features, wide, reference::scatter_reduce(theirs, src, features, sparse, 4000, 0));
      INFO(v.detail);
      CHECK(v.ok);
    }
  }
  SECTION("index_add_") {
    peer::index_add(src.data(), messages, features, indices.data(), outputs, out.data())();
    const auto v = reference::check("torch index_add_", features, out,
                                    reference::scatter_reduce(reference::Reduction::sum, src, features, indices, outputs, 0));
    INFO(v.detail);
    CHECK(v.ok);
  }
  SECTION("index_select") {
    const auto lookups = random_indices(700, messages, rng);
    std::vector<float> gathered(static_cast<std::size_t>(700 * features));
    peer::index_select(src.data(), messages, features, lookups.data(), 700, gathered.data())();
    CHECK(gathered == reference::gather(src, features, lookups));
  }
  SECTION("segment_reduce sum over CSR offsets, empty segments 0") {
    const auto sorted = random_indices(messages, 4000, rng, true);
    const auto offsets = cpu::segment_offsets(sorted.data(), messages, 4000);
    std::vector<float> seg(static_cast<std::size_t>(4000 * features));
    peer::segment_reduce(cpu::Reduce::sum, src.data(), messages, features, offsets.data(), 4000, seg.data())();
    const auto v = reference::check("torch segment_reduce", features, seg,
                                    reference::segment_reduce(reference::Reduction::sum, src, features, offsets, 0));
    INFO(v.detail);
    CHECK(v.ok);
  }
  SECTION("unfused gather-scale-scatter") {
    const auto x = random_values(outputs * features, rng);
    const auto w = random_values(messages, rng);
    const auto src_nodes = random_indices(messages, outputs, rng);
    peer::gather_scale_scatter(x.data(), outputs, features, src_nodes.data(), indices.data(), w.data(), messages, outputs, out.data())();
    const auto v = reference::check("torch spmm", features, out,
                                    reference::gather_scale_scatter(x, features, src_nodes, indices, w, outputs, 0));
    INFO(v.detail);
    CHECK(v.ok);
  }
  SECTION("mm and addmm") {
    const std::int64_t m = 70, k = 33, n = 19;
    const auto a = random_values(m * k, rng), b = random_values(k * n, rng), bias = random_values(n, rng);
    std::vector<float> c(static_cast<std::size_t>(m * n));
    peer::mm(a.data(), b.data(), m, k, n, nullptr, c.data())();
    CHECK(reference::check("torch mm", n, c, reference::matmul(a, b, m, k, n, {})).ok);
    peer::mm(a.data(), b.data(), m, k, n, bias.data(), c.data())();
    CHECK(reference::check("torch addmm", n, c, reference::matmul(a, b, m, k, n, bias)).ok);
  }
}

TEST_CASE("torch-cpu runs every GNN op kind, verified, and agrees with the cpu backend", "[torch][gnn-ops][unit][slow]") {
  using namespace tilesim_test;
  std::vector<OpCase> cases;
  OpCaseBuilder idx(31);
  auto even_rows = idx.random_indices(500, 30);
  for (auto& i : even_rows) i *= 2;  // odd rows of 60 get no message: 0 for mean and max
  cases.push_back(scatter_case(OpKind::scatter_mean, 9, 60, even_rows, 1));
  cases.push_back(scatter_case(OpKind::scatter_max, 9, 60, even_rows, 2));
  cases.push_back(degree_case(70, idx.random_indices(900, 70)));
  cases.push_back(matmul_case(50, 24, 10, true, 3));
  cases.push_back(matmul_case(50, 24, 10, false, 4));
  cases.push_back(segment_matmul_case({0, 12, 40, 0, 5}, 8, 6, 5));
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min})
    cases.push_back(unary_case(fn, fn == UnaryFn::leaky_relu ? 0.2f : fn == UnaryFn::cosine_cutoff ? 6.0f : 1.5f, 40, 6, 6, -8, 8));
  for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal}) {
    cases.push_back(binary_case(fn, 30, 8, 30, 8, 7));
    cases.push_back(binary_case(fn, 30, 8, 30, 1, 8));
    cases.push_back(binary_case(fn, 30, 8, 30, 4, 9));
    cases.push_back(binary_case(fn, 30, 8, 1, 8, 10));
  }
  RunOptions options;
  options.warmup = 0;
  options.repeats = 2;
  auto torch_backend = peer::make_backend();
  cpu::CpuBackend cpu_backend;
  for (const OpCase& c : cases) {
    const Op& op = c.op();
    INFO(op.name << " " << to_string(op.kind) << (op.kind == OpKind::unary ? " " + to_string(op.unary) : "")
                 << (op.kind == OpKind::binary ? " " + to_string(op.binary) + " other " + std::to_string(op.shape.other_rows) + " x " +
                                                     std::to_string(op.shape.other_groups)
                                               : ""));
    const BackendResult result = torch_backend->run(c.graph, c.values, options);
    REQUIRE(result.ops.size() == 1);
    INFO(result.ops[0].verification);
    CHECK(result.ops[0].verified == true);
    cpu_backend.run(c.graph, c.values, options);
    const auto agreement = reference::compare_outputs(op, c.values, cpu_backend.outputs().f32(op.output),
                                                      torch_backend->computed_outputs()->f32(op.output));
    INFO(agreement.detail);
    CHECK(agreement.equal);
  }
}

// ---- Training steps: libtorch's autograd and torch::optim as the peer and as an oracle ----
