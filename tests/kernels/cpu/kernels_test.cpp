// The CPU kernels against the reference, the reference's check against corrupted outputs, the timing
// summary against hand-computed quartiles, and the CPU backend end to end. No timing assertions.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/reference/reference.hpp"
#include "ir/tensor_values.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cpu/gather_scatter.hpp"
#include "kernels/cpu/timing.hpp"

using namespace tilesim;
namespace cpu = tilesim::kernels::cpu;
namespace reference = tilesim::reference;

namespace {

enum class Indices { uniform, all_equal, sorted, even_rows_only };

std::string describe(OpKind kind, OpShape shape, Indices pattern) {
  static const char* names[] = {"uniform", "all_equal", "sorted", "even_rows_only"};
  return to_string(kind) + " inputs=" + std::to_string(shape.num_inputs) + " features=" + std::to_string(shape.num_features) +
         " outputs=" + std::to_string(shape.num_outputs) + " indices=" + names[static_cast<int>(pattern)];
}

// One op with random values and indices of the given pattern, as the workload layer would supply them.
struct KernelCase {
  OpGraph graph;
  TensorValues values;
  const Op& op() const { return graph.ops.front(); }
  const std::vector<float>& input() const { return values.f32(op().input); }
  const std::vector<std::int32_t>& indices() const { return values.i32(op().indices); }
};

KernelCase make_case(OpKind kind, OpShape shape, Indices pattern, std::uint32_t seed, float min_abs_value = 0.0f) {
  KernelCase c;
  const Op& op = c.graph.add_gather_scatter("op", kind, DType::float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(min_abs_value, 1.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> input(static_cast<std::size_t>(shape.num_inputs * shape.num_features));
  for (float& x : input) x = negative(rng) ? -magnitude(rng) : magnitude(rng);
  const std::int64_t range = op.index_range();
  std::vector<std::int32_t> indices(static_cast<std::size_t>(op.num_indices()));
  std::uniform_int_distribution<std::int32_t> any_row(0, static_cast<std::int32_t>(range - 1));
  std::uniform_int_distribution<std::int32_t> any_even_row(0, static_cast<std::int32_t>((range - 1) / 2));
  const std::int32_t the_row = any_row(rng);
  for (auto& index : indices) {
    switch (pattern) {
      case Indices::uniform:
      case Indices::sorted: index = any_row(rng); break;
      case Indices::all_equal: index = the_row; break;
      case Indices::even_rows_only: index = 2 * any_even_row(rng); break;
    }
  }
  if (pattern == Indices::sorted) std::sort(indices.begin(), indices.end());
  c.values.set_f32(op.input, std::move(input));
  c.values.set_i32(op.indices, std::move(indices));
  return c;
}

std::vector<float> run_kernel(const KernelCase& c) {
  const Op& op = c.op();
  std::vector<float> out(static_cast<std::size_t>(op.shape.num_outputs * op.shape.num_features),
                         std::numeric_limits<float>::quiet_NaN());
  if (op.kind == OpKind::gather)
    cpu::gather_f32(c.input().data(), op.shape.num_inputs, op.shape.num_features, c.indices().data(), op.shape.num_outputs, out.data());
  else
    cpu::scatter_add_f32(c.input().data(), op.shape.num_inputs, op.shape.num_features, c.indices().data(), op.shape.num_outputs,
                         out.data());
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

struct ShapeCase {
  OpShape shape;
  Indices pattern;
};

}  // namespace

TEST_CASE("cpu gather_f32 equals the reference bitwise over random shapes and edge cases", "[kernels][cpu][unit]") {
  // Sizes below 256 KiB moved run on the calling thread; the larger ones take the parallel path.
  const std::vector<ShapeCase> cases = {
      {{1, 1, 1}, Indices::uniform},          {{1, 3, 5}, Indices::uniform},        {{7, 17, 1}, Indices::uniform},
      {{5, 16, 100}, Indices::all_equal},     {{4, 8, 0}, Indices::uniform},        {{33, 3, 257}, Indices::sorted},
      {{1000, 3, 50000}, Indices::uniform},   {{300, 17, 4000}, Indices::uniform},  {{64, 512, 200}, Indices::uniform},
      {{1, 17, 5000}, Indices::all_equal},    {{2000, 1, 100001}, Indices::sorted}, {{4096, 64, 3}, Indices::uniform},     {{8, 20000, 3}, Indices::uniform},
  };
  std::uint32_t seed = 1;
  for (const auto& [shape, pattern] : cases) {
    INFO(describe(OpKind::gather, shape, pattern));
    const KernelCase c = make_case(OpKind::gather, shape, pattern, seed++);
    const std::vector<float> out = run_kernel(c);
    CHECK(same_bits(out, reference::gather(c.input(), shape.num_features, c.indices())));
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK(v.ok);
    CHECK(v.mismatches == 0);
  }
}

TEST_CASE("cpu scatter_add_f32 passes verification over random shapes and edge cases", "[kernels][cpu][unit]") {
  // Covers the three strategies: serial (small calls), per-thread partial outputs (small output, many
  // messages) and threads owning output rows (large output), each with odd feature counts, all indices
  // equal and output rows that receive nothing.
  const std::vector<ShapeCase> cases = {
      {{1, 1, 1}, Indices::uniform},            {{1, 17, 4}, Indices::uniform},          {{5, 3, 1}, Indices::uniform},
      {{100, 16, 7}, Indices::all_equal},       {{0, 8, 6}, Indices::uniform},           {{64, 3, 40}, Indices::even_rows_only},
      {{20000, 16, 8}, Indices::uniform},       {{20000, 3, 1}, Indices::all_equal},     {{9000, 17, 301}, Indices::even_rows_only},
      {{3000, 17, 5000}, Indices::uniform},     {{3000, 17, 5000}, Indices::sorted},     {{20000, 8, 20000}, Indices::all_equal},
      {{4000, 3, 30001}, Indices::even_rows_only}, {{16, 512, 2000}, Indices::uniform},  {{300, 64, 1024}, Indices::uniform},
  };
  std::uint32_t seed = 100;
  for (const auto& [shape, pattern] : cases) {
    INFO(describe(OpKind::scatter_add, shape, pattern));
    const KernelCase c = make_case(OpKind::scatter_add, shape, pattern, seed++);
    const std::vector<float> out = run_kernel(c);
    const auto v = reference::verify(c.op(), c.values, out);
    INFO(v.detail);
    CHECK(v.ok);
    CHECK(v.mismatches == 0);
    // Repeated calls give the same bits (no races, a fixed summation order for a fixed thread count).
    CHECK(same_bits(run_kernel(c), out));
    if (pattern == Indices::even_rows_only && shape.num_outputs > 1) {
      bool odd_rows_zero = true;
      for (std::int64_t r = 1; r < shape.num_outputs; r += 2)
        for (std::int64_t f = 0; f < shape.num_features; ++f)
          odd_rows_zero = odd_rows_zero && out[static_cast<std::size_t>(r * shape.num_features + f)] == 0.0f;
      CHECK(odd_rows_zero);
    }
  }
}

TEST_CASE("cpu scatter_add_f32 zeroes the output it is given", "[kernels][cpu][unit]") {
  for (const OpShape shape : {OpShape{10, 4, 50}, OpShape{3000, 17, 5000}, OpShape{20000, 16, 8}}) {
    INFO(describe(OpKind::scatter_add, shape, Indices::uniform));
    const KernelCase c = make_case(OpKind::scatter_add, shape, Indices::uniform, 7);
    std::vector<float> out(static_cast<std::size_t>(shape.num_outputs * shape.num_features), 123.0f);
    cpu::scatter_add_f32(c.input().data(), shape.num_inputs, shape.num_features, c.indices().data(), shape.num_outputs, out.data());
    CHECK(reference::verify(c.op(), c.values, out).ok);
  }
}

TEST_CASE("reference verify catches corrupted scatter_add outputs", "[kernels][reference][unit]") {
  // Terms of magnitude >= 0.25 so one missing or extra term is far outside the rounding bound.
  const OpShape shape{400, 8, 50};
  const KernelCase c = make_case(OpKind::scatter_add, shape, Indices::even_rows_only, 42, 0.25f);
  const std::vector<float> good = run_kernel(c);
  REQUIRE(reference::verify(c.op(), c.values, good).ok);
  const std::int64_t features = shape.num_features;
  const std::int32_t row = c.indices()[17];
  const auto add_message = [&](std::vector<float>& out, std::int64_t message, std::int64_t to_row, float times) {
    for (std::int64_t f = 0; f < features; ++f)
      out[static_cast<std::size_t>(to_row * features + f)] += times * c.input()[static_cast<std::size_t>(message * features + f)];
  };
  const std::string row_text = "row " + std::to_string(row) + ",";

  SECTION("a missing term") {
    auto out = good;
    add_message(out, 17, row, -1.0f);
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK_FALSE(v.ok);
    CHECK(v.mismatches == features);
    CHECK_THAT(v.detail, Catch::Contains(row_text) && Catch::Contains("outside"));
  }
  SECTION("a doubled term") {
    auto out = good;
    add_message(out, 17, row, 1.0f);
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK_FALSE(v.ok);
    CHECK(v.mismatches == features);
    CHECK_THAT(v.detail, Catch::Contains(row_text));
  }
  SECTION("a term added to the wrong row") {
    auto out = good;
    const std::int64_t wrong_row = (row + 2) % shape.num_outputs;
    add_message(out, 17, row, -1.0f);
    add_message(out, 17, wrong_row, 1.0f);
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK_FALSE(v.ok);
    CHECK(v.mismatches == 2 * features);
  }
  SECTION("a row no index points at that is not zero") {
    auto out = good;
    out[static_cast<std::size_t>(1 * features + 3)] = 1e-20f;  // row 1 is odd: no message goes there
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK_FALSE(v.ok);
    CHECK(v.mismatches == 1);
    CHECK_THAT(v.detail, Catch::Contains("row 1, column 3") && Catch::Contains("0 terms"));
  }
  SECTION("a NaN") {
    auto out = good;
    out[static_cast<std::size_t>(row * features)] = std::numeric_limits<float>::quiet_NaN();
    CHECK(reference::verify(c.op(), c.values, out).mismatches == 1);
  }
  SECTION("a wrong output size") {
    auto out = good;
    out.pop_back();
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK_FALSE(v.ok);
    CHECK_THAT(v.detail, Catch::Contains("output has 399 elements, expected 400"));
  }
  SECTION("a different summation order still passes") {
    // Sum each row's terms from the last message to the first, in float32.
    std::vector<float> reversed(good.size(), 0.0f);
    for (std::int64_t m = shape.num_inputs - 1; m >= 0; --m) add_message(reversed, m, c.indices()[static_cast<std::size_t>(m)], 1.0f);
    CHECK(reference::verify(c.op(), c.values, reversed).ok);
  }
}

TEST_CASE("reference verify catches corrupted gather outputs", "[kernels][reference][unit]") {
  const OpShape shape{30, 5, 40};
  const KernelCase c = make_case(OpKind::gather, shape, Indices::uniform, 3);
  const std::vector<float> good = run_kernel(c);
  REQUIRE(reference::verify(c.op(), c.values, good).ok);

  SECTION("one element off by one ulp") {
    auto out = good;
    float& x = out[static_cast<std::size_t>(7 * shape.num_features + 2)];
    x = std::nextafter(x, 2.0f);
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK_FALSE(v.ok);
    CHECK(v.mismatches == 1);
    CHECK_THAT(v.detail, Catch::Contains("row 7, column 2"));
  }
  SECTION("a row copied from the wrong table row") {
    auto out = good;
    const std::int32_t wrong = (c.indices()[9] + 1) % static_cast<std::int32_t>(shape.num_inputs);
    for (std::int64_t f = 0; f < shape.num_features; ++f)
      out[static_cast<std::size_t>(9 * shape.num_features + f)] = c.input()[static_cast<std::size_t>(wrong * shape.num_features + f)];
    CHECK(reference::verify(c.op(), c.values, out).mismatches == shape.num_features);
  }
  SECTION("a wrong output size") {
    auto out = good;
    out.push_back(0.0f);
    const auto v = reference::verify(c.op(), c.values, out);
    CHECK_FALSE(v.ok);
    CHECK_THAT(v.detail, Catch::Contains("expected 200"));
  }
}

TEST_CASE("reference scatter_add sums, absolute sums and counts per row", "[kernels][reference][unit]") {
  // Two features, three rows: row 0 gets messages 0 and 2, row 1 nothing, row 2 message 1.
  const std::vector<float> src = {1.0f, -2.0f, 10.0f, 20.0f, -3.0f, 5.0f};
  const auto ref = reference::scatter_add(src, 2, {0, 2, 0}, 3);
  CHECK(ref.sum == std::vector<double>{-2.0, 3.0, 0.0, 0.0, 10.0, 20.0});
  CHECK(ref.abs_sum == std::vector<double>{4.0, 7.0, 0.0, 0.0, 10.0, 20.0});
  CHECK(ref.count_per_row == std::vector<std::int32_t>{2, 0, 1});
  CHECK_THROWS_AS(reference::scatter_add(src, 2, {0, 3, 0}, 3), std::out_of_range);
  CHECK_THROWS_AS(reference::gather(src, 2, {3}), std::out_of_range);
}

TEST_CASE("summarise gives median and quartiles by linear interpolation", "[kernels][timing][unit]") {
  SECTION("even count") {
    const auto s = cpu::summarise({4.0, 1.0, 3.0, 2.0}, 2);
    CHECK(s.median_s == Approx(2.5));
    CHECK(s.p25_s == Approx(1.75));  // position 0.75 between 1 and 2
    CHECK(s.p75_s == Approx(3.25));  // position 2.25 between 3 and 4
    CHECK(s.min_s == 1.0);
    CHECK(s.max_s == 4.0);
    CHECK(s.repeats == 4);
    CHECK(s.warmup == 2);
    CHECK(s.samples_s == std::vector<double>{4.0, 1.0, 3.0, 2.0});
  }
  SECTION("odd count") {
    const auto s = cpu::summarise({5.0, 1.0, 4.0, 2.0, 3.0}, 0);
    CHECK(s.median_s == Approx(3.0));
    CHECK(s.p25_s == Approx(2.0));
    CHECK(s.p75_s == Approx(4.0));
  }
  SECTION("ten samples") {
    // Sorted 1..10: quartile positions 2.25, 4.5 and 6.75.
    const auto s = cpu::summarise({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 1);
    CHECK(s.p25_s == Approx(3.25));
    CHECK(s.median_s == Approx(5.5));
    CHECK(s.p75_s == Approx(7.75));
  }
  SECTION("one sample") {
    const auto s = cpu::summarise({0.5}, 0);
    CHECK(s.median_s == 0.5);
    CHECK(s.p25_s == 0.5);
    CHECK(s.p75_s == 0.5);
  }
  SECTION("json has every statistic with its unit and no samples") {
    const auto j = cpu::summarise({4.0, 1.0, 3.0, 2.0}, 2).to_json();
    CHECK(j.at("median_s") == Approx(2.5));
    CHECK(j.at("p25_s") == Approx(1.75));
    CHECK(j.at("p75_s") == Approx(3.25));
    CHECK(j.at("min_s") == 1.0);
    CHECK(j.at("max_s") == 4.0);
    CHECK(j.at("warmup") == 2);
    CHECK(j.at("repeats") == 4);
    CHECK(j.size() == 7);
  }
  SECTION("no samples") { CHECK_THROWS_AS(cpu::summarise({}, 0), std::invalid_argument); }
}

TEST_CASE("time_calls makes the warm-up and timed calls", "[kernels][timing][unit]") {
  int calls = 0;
  const auto s = cpu::time_calls([&] { ++calls; }, 3, 5);
  CHECK(calls == 8);
  CHECK(s.samples_s.size() == 5);
  CHECK(s.repeats == 5);
  CHECK(s.warmup == 3);
  CHECK(s.min_s >= 0.0);
  CHECK(s.min_s <= s.p25_s);
  CHECK(s.p25_s <= s.median_s);
  CHECK(s.median_s <= s.p75_s);
  CHECK(s.p75_s <= s.max_s);
  CHECK_THROWS_AS(cpu::time_calls([] {}, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(cpu::time_calls([] {}, -1, 3), std::invalid_argument);
}

TEST_CASE("CpuBackend runs a small graph end to end, measured and verified", "[kernels][cpu][backend][unit]") {
  OpGraph graph;
  const OpShape gather_shape{50, 17, 300};
  const OpShape scatter_shape{400, 3, 64};
  const OpShape large_shape{3000, 17, 5000};
  graph.add_gather_scatter("lookup", OpKind::gather, DType::float32, gather_shape);
  graph.add_gather_scatter("aggregate", OpKind::scatter_add, DType::float32, scatter_shape);
  graph.add_gather_scatter("aggregate_large", OpKind::scatter_add, DType::float32, large_shape);
  TensorValues inputs;
  std::uint32_t seed = 11;
  for (const Op& op : graph.ops) {
    const KernelCase c = make_case(op.kind, op.shape, Indices::uniform, seed++);
    inputs.set_f32(op.input, c.input());
    inputs.set_i32(op.indices, c.indices());
  }

  cpu::CpuBackend backend;
  RunOptions options;
  options.warmup = 1;
  options.repeats = 3;
  const BackendResult result = backend.run(graph, inputs, options);

  CHECK(backend.name() == "cpu");
  CHECK(result.backend == "cpu");
  CHECK(result.kind == ResultKind::measured);
  CHECK_THAT(result.machine, Catch::Contains("OpenMP threads"));
  CHECK(result.host.at("omp_max_threads") == omp_get_max_threads());
  CHECK(result.host.contains("load_average_1min"));
  REQUIRE(result.ops.size() == 3);
  double sum_s = 0;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    const OpResult& row = result.ops[i];
    INFO(row.verification);
    CHECK(row.op == op.name);
    CHECK(row.op_kind == op.kind);
    CHECK(row.verified == true);
    CHECK(row.time_s == row.timing.at("median_s").get<double>());
    CHECK(row.timing.at("repeats") == 3);
    CHECK(row.timing.at("warmup") == 1);
    CHECK(row.flops == op.flops());
    CHECK(row.min_bytes == op.min_bytes());
    CHECK(row.bytes_by_level.at("dram_min_bytes") == op.min_bytes());
    CHECK(backend.outputs().f32(op.output).size() == static_cast<std::size_t>(op.shape.num_outputs * op.shape.num_features));
    sum_s += row.time_s;
  }
  CHECK(result.time_s == Approx(sum_s));
  const Op& lookup = graph.ops[0];
  CHECK(same_bits(backend.outputs().f32(lookup.output),
                  reference::gather(inputs.f32(lookup.input), gather_shape.num_features, inputs.i32(lookup.indices))));
  const auto json = result.to_json();
  CHECK(json.at("kind") == "measured");
  CHECK(json.at("ops").at(1).at("verified") == true);
}

TEST_CASE("CpuBackend feeds one op's output to the next", "[kernels][cpu][backend][unit]") {
  // gather rows of a table, then sum the gathered rows into groups: the scatter_add reads the gather's output.
  OpGraph graph;
  graph.add_gather_scatter("lookup", OpKind::gather, DType::float32, {20, 6, 500});
  graph.add_gather_scatter("aggregate", OpKind::scatter_add, DType::float32, {500, 6, 9});
  graph.ops[1].input = graph.ops[0].output;
  const KernelCase gather_case = make_case(OpKind::gather, graph.ops[0].shape, Indices::uniform, 5);
  const KernelCase scatter_case = make_case(OpKind::scatter_add, graph.ops[1].shape, Indices::uniform, 6);
  TensorValues inputs;
  inputs.set_f32(graph.ops[0].input, gather_case.input());
  inputs.set_i32(graph.ops[0].indices, gather_case.indices());
  inputs.set_i32(graph.ops[1].indices, scatter_case.indices());

  cpu::CpuBackend backend;
  const BackendResult result = backend.run(graph, inputs, RunOptions{});
  REQUIRE(result.ops.size() == 2);
  CHECK(result.ops[0].verified == true);
  CHECK(result.ops[1].verified == true);
  const auto gathered = reference::gather(gather_case.input(), 6, gather_case.indices());
  const auto expected = reference::scatter_add(gathered, 6, scatter_case.indices(), 9);
  const auto& out = backend.outputs().f32(graph.ops[1].output);
  REQUIRE(out.size() == expected.sum.size());
  for (std::size_t e = 0; e < out.size(); ++e) CHECK(out[e] == Approx(expected.sum[e]).margin(1e-5));
}

TEST_CASE("CpuBackend rejects indices out of range before running a kernel", "[kernels][cpu][backend][unit]") {
  OpGraph graph;
  const Op& op = graph.add_gather_scatter("bad", OpKind::scatter_add, DType::float32, {4, 2, 3});
  TensorValues inputs;
  inputs.set_f32(op.input, std::vector<float>(8, 1.0f));
  inputs.set_i32(op.indices, {0, 1, 3, 2});
  cpu::CpuBackend backend;
  CHECK_THROWS_WITH(backend.run(graph, inputs, RunOptions{}), Catch::Contains("indices[2] = 3 is outside [0, 3)"));
}
