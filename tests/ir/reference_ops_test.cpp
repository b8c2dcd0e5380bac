// The reference of every op kind (ir/reference/reference.hpp) against hand-computed values, its
// check against outputs a wrong kernel would give (a missing term, an off-by-one count, a few ulp too
// far) and right ones it must accept (another summation order, a last-bit difference within the stated
// bound), and the shared operand helper (ir/operands.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ir/operands.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference.hpp"
#include "tests/support/cpu_op_cases.hpp"

using namespace tilesim;
using namespace tilesim_test;
namespace reference = tilesim::reference;

namespace {

// Replaces the values of one of the case's tensors.
void set_values(OpCase& c, TensorId id, std::vector<float> v) { c.values.set_f32(id, std::move(v)); }

std::vector<float> compute(const OpCase& c) { return reference::compute(c.op(), c.values); }

float ulps_away(float x, int ulps) {
  for (int i = 0; i < std::abs(ulps); ++i) x = std::nextafter(x, ulps > 0 ? INFINITY : -INFINITY);
  return x;
}

}  // namespace

TEST_CASE("reference scatter_mean and scatter_max: hand-computed rows, 0 where nobody scatters", "[reference][formula]") {
  OpCase mean = scatter_case(OpKind::scatter_mean, 2, 3, {0, 0, 2}, 1);
  set_values(mean, mean.op().input, {1, 2, 3, 4, 5, -6});
  CHECK(compute(mean) == std::vector<float>{2, 3, 0, 0, 5, -6});

  OpCase max = scatter_case(OpKind::scatter_max, 1, 3, {1, 1, 1}, 1);
  set_values(max, max.op().input, {-1, -5, -3});
  CHECK(compute(max) == std::vector<float>{0, -1, 0});  // all-negative messages keep their max; empty rows 0

  SECTION("a max one ulp off fails; the exact max passes") {
    std::vector<float> out{0, -1, 0};
    CHECK(reference::verify(max.op(), max.values, out).ok);
    out[1] = ulps_away(-1.0f, 1);
    const auto v = reference::verify(max.op(), max.values, out);
    CHECK_FALSE(v.ok);
    CHECK(v.mismatches == 1);
    CHECK_THAT(v.detail, Catch::Contains("row 1, column 0") && Catch::Contains("3 terms"));
  }
  SECTION("an empty row must be exactly 0 for mean") {
    std::vector<float> out{2, 3, 1e-30f, 0, 5, -6};
    const auto v = reference::verify(mean.op(), mean.values, out);
    CHECK(v.mismatches == 1);
    CHECK_THAT(v.detail, Catch::Contains("0 terms"));
  }
  SECTION("a sum where a mean was due fails") {
    CHECK(reference::verify(mean.op(), mean.values, {4, 6, 0, 0, 5, -6}).mismatches == 2);
  }
}

TEST_CASE("reference degree_count counts exactly", "[reference][unit]") {
  const OpCase c = degree_case(4, {2, 0, 2, 2});
  CHECK(compute(c) == std::vector<float>{1, 0, 3, 0});
  CHECK(reference::verify(c.op(), c.values, {1, 0, 3, 0}).ok);
  CHECK(reference::verify(c.op(), c.values, {1, 0, 2, 0}).mismatches == 1);
  CHECK(reference::verify(c.op(), c.values, {1, 0, 3}).mismatches == 4);  // wrong size: nothing trusted
}

TEST_CASE("reference matmul and segment_matmul: hand-computed products, bias, empty segments", "[reference][formula]") {
  OpCase lin = matmul_case(2, 2, 3, true, 1);
  set_values(lin, lin.op().input, {1, 2, 3, 4});
  set_values(lin, lin.op().weight, {1, 0, 1, 0, 1, 1});
  set_values(lin, lin.op().bias, {10, 20, 30});
  CHECK(compute(lin) == std::vector<float>{11, 22, 33, 13, 24, 37});
  CHECK(reference::verify(lin.op(), lin.values, {11, 22, 33, 13, 24, 37}).ok);
  CHECK_FALSE(reference::verify(lin.op(), lin.values, {1, 2, 3, 13, 24, 37}).ok);  // bias left out of row 0

  // Segments of 1, 0 and 2 rows; k = 2, n = 1.
  OpCase seg = segment_matmul_case({1, 0, 2}, 2, 1, 1);
  set_values(seg, seg.op().input, {1, 2, 3, 4, 5, 7});
  set_values(seg, seg.op().weight, {1, 1, 5, 5, 1, -1});
  CHECK(compute(seg) == std::vector<float>{3, -1, -2});
  CHECK_FALSE(reference::verify(seg.op(), seg.values, {3, 35, 60}).ok);  // the empty segment's weight used
}

TEST_CASE("reference sums accept another summation order and reject a missing term", "[reference][unit]") {
  // 64-term dot products: a float32 sum in the opposite order lies within the bound; dropping the smallest
  // term (still far above the bound) does not.
  const OpCase c = matmul_case(3, 64, 5, false, 7);
  const auto& x = c.values.f32(c.op().input);
  const auto& w = c.values.f32(c.op().weight);
  std::vector<float> reversed(15), missing(15);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      float sum = 0;
      for (int p = 63; p >= 0; --p) sum += x[i * 64 + p] * w[p * 5 + j];
      reversed[i * 5 + j] = sum;
      float smallest = INFINITY, drop = 0;
      for (int p = 0; p < 64; ++p) {
        const float t = x[i * 64 + p] * w[p * 5 + j];
        if (std::fabs(t) < smallest && std::fabs(t) > 1e-3f) smallest = std::fabs(t), drop = t;
      }
      missing[i * 5 + j] = sum - drop;
    }
  CHECK(reference::verify(c.op(), c.values, reversed).ok);
  CHECK(reference::verify(c.op(), c.values, missing).mismatches == 15);
}

TEST_CASE("reference unary functions: hand-computed values and their bounds", "[reference][formula]") {
  const auto one = [](UnaryFn fn, float scalar, std::vector<float> x) {
    OpCase c = unary_case(fn, scalar, static_cast<std::int64_t>(x.size()), 1, 1);
    set_values(c, c.op().input, std::move(x));
    return c;
  };
  CHECK(compute(one(UnaryFn::relu, 0, {-1, 0, 2.5f})) == std::vector<float>{0, 0, 2.5f});
  CHECK(compute(one(UnaryFn::leaky_relu, 0.2f, {-2, 3})) == std::vector<float>{-0.4f, 3});
  CHECK(compute(one(UnaryFn::scale, 2.5f, {3, -1})) == std::vector<float>{7.5f, -2.5f});
  CHECK(compute(one(UnaryFn::exp, 0, {0, 1})) == std::vector<float>{1, static_cast<float>(M_E)});
  CHECK(compute(one(UnaryFn::shifted_softplus, 0, {0})) == std::vector<float>{0});
  CHECK(compute(one(UnaryFn::rsqrt_or_zero, 0, {4, 0, -1})) == std::vector<float>{0.5f, 0, 0});
  CHECK(compute(one(UnaryFn::reciprocal_or_zero, 0, {4, 0, -0.5f})) == std::vector<float>{0.25f, 0, -2});
  CHECK(compute(one(UnaryFn::cosine_cutoff, 6, {0, 3, 6, 7})) == std::vector<float>{1, 0.5f, 0, 0});

  SECTION("exp: 4 ulp off passes, 16 ulp off fails; overflow to infinity passes") {
    const OpCase c = one(UnaryFn::exp, 0, {1, 100});
    const float e = static_cast<float>(M_E);
    CHECK(reference::verify(c.op(), c.values, {ulps_away(e, 4), INFINITY}).ok);
    CHECK_FALSE(reference::verify(c.op(), c.values, {ulps_away(e, 16), INFINITY}).ok);
  }
  SECTION("relu is exact; a wrong slope fails leaky_relu") {
    const OpCase r = one(UnaryFn::relu, 0, {2});
    CHECK_FALSE(reference::verify(r.op(), r.values, {ulps_away(2, 1)}).ok);
    const OpCase c = one(UnaryFn::leaky_relu, 0.2f, {-2});
    CHECK_FALSE(reference::verify(c.op(), c.values, {-0.02f}).ok);
  }
  SECTION("NaN in, NaN out passes; NaN where a number is due fails") {
    const OpCase c = one(UnaryFn::exp, 0, {std::numeric_limits<float>::quiet_NaN(), 0});
    CHECK(reference::verify(c.op(), c.values, {std::numeric_limits<float>::quiet_NaN(), 1}).ok);
    CHECK_FALSE(reference::verify(c.op(), c.values, {0, std::numeric_limits<float>::quiet_NaN()}).ok);
  }
}

TEST_CASE("reference binary broadcast: same shape, per-row scalar, per-head scalar, bias row", "[reference][unit]") {
  const auto with = [](BinaryFn fn, std::int64_t other_rows, std::int64_t groups, std::vector<float> other) {
    OpCase c = binary_case(fn, 2, 4, other_rows, groups, 1);
    set_values(c, c.op().input, {1, 2, 3, 4, 5, 6, 7, 8});
    set_values(c, c.op().weight, std::move(other));
    return c;
  };
  CHECK(compute(with(BinaryFn::add, 2, 4, {1, 1, 1, 1, 2, 2, 2, 2})) == std::vector<float>{2, 3, 4, 5, 7, 8, 9, 10});
  CHECK(compute(with(BinaryFn::multiply, 2, 1, {2, -1})) == std::vector<float>{2, 4, 6, 8, -5, -6, -7, -8});
  CHECK(compute(with(BinaryFn::divide, 2, 2, {1, 2, 4, 8})) == std::vector<float>{1, 2, 1.5f, 2, 1.25f, 1.5f, 0.875f, 1});
  CHECK(compute(with(BinaryFn::subtract, 1, 4, {1, 2, 3, 4})) == std::vector<float>{0, 0, 0, 0, 4, 4, 4, 4});
  CHECK(compute(with(BinaryFn::equal, 1, 4, {1, 2, 0, 4})) == std::vector<float>{1, 1, 0, 1, 0, 0, 0, 0});
  const OpCase heads = with(BinaryFn::multiply, 2, 2, {1, 2, 4, 8});
  // The other row's value used for the wrong row fails.
  CHECK_FALSE(reference::verify(heads.op(), heads.values, {1, 2, 6, 8, 5, 6, 7, 8}).ok);
}

TEST_CASE("reference compute passes its own verify for every kind on random operands", "[reference][unit]") {
  std::vector<OpCase> cases;
  cases.push_back(scatter_case(OpKind::scatter_add, 5, 7, OpCaseBuilder(1).random_indices(40, 7), 2));
  cases.push_back(scatter_case(OpKind::scatter_mean, 5, 7, OpCaseBuilder(2).random_indices(40, 7), 3));
  cases.push_back(scatter_case(OpKind::scatter_max, 5, 7, OpCaseBuilder(3).random_indices(40, 7), 4));
  cases.push_back(degree_case(9, OpCaseBuilder(4).random_indices(50, 9)));
  cases.push_back(matmul_case(6, 9, 4, true, 5));
  cases.push_back(segment_matmul_case({3, 0, 4}, 5, 3, 6));
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min})
    cases.push_back(unary_case(fn, 2.0f, 5, 3, 7));
  for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal})
    cases.push_back(binary_case(fn, 4, 6, 4, 3, 8));
  for (const OpCase& c : cases) {
    const auto out = compute(c);
    INFO(c.op().name << " " << to_string(c.op().kind));
    CHECK(static_cast<std::int64_t>(out.size()) == c.op().output_rows() * c.op().output_cols());
    const auto v = reference::verify(c.op(), c.values, out);
    INFO(v.detail);
    CHECK(v.ok);
    CHECK(reference::compare_outputs(c.op(), c.values, out, out).equal);
  }
}

TEST_CASE("compare_outputs allows twice the bound for sums and nothing for exact kinds", "[reference][unit]") {
  const OpCase lin = matmul_case(2, 32, 2, false, 9);
  auto a = compute(lin);
  auto b = a;
  b[0] = ulps_away(b[0], 1);
  CHECK(reference::compare_outputs(lin.op(), lin.values, a, b).equal);
  b[0] += 1.0f;
  CHECK_FALSE(reference::compare_outputs(lin.op(), lin.values, a, b).equal);

  const OpCase deg = degree_case(3, {0, 0, 1});
  CHECK_FALSE(reference::compare_outputs(deg.op(), deg.values, {2, 1, 0}, {2, 1, 1}).equal);
}

TEST_CASE("compare_outputs reads a chained op's operands from the outputs given", "[reference][unit]") {
  // relu then scale: the second op's input is the first op's output, in no graph-input set.
  OpCaseBuilder b(3);
  Op relu = make_op("relu", OpKind::unary, {2, 2, 0});
  relu.input = b.values("x", {2, 2}, {-1, 2, 3, -4});
  const TensorId h = b.add(relu);
  Op scale = make_op("scale", OpKind::unary, {2, 2, 0});
  scale.unary = UnaryFn::scale;
  scale.scalar = 3;
  scale.input = h;
  b.add(scale);
  const OpCase c = b.take();
  TensorValues produced;
  produced.set_f32(h, {0, 2, 3, 0});
  CHECK(reference::compare_outputs(c.op(), c.values, produced, {0, 6, 9, 0}, {0, 6, 9, 0}).equal);
  CHECK_FALSE(reference::compare_outputs(c.op(), c.values, produced, {0, 6, 9, 0}, {0, 6, 9, 1}).equal);
  CHECK_THROWS_WITH(reference::compare_outputs(c.op(), c.values, {0, 6, 9, 0}, {0, 6, 9, 0}), Catch::Contains("no values for its input"));
}

TEST_CASE("operands resolve from earlier outputs first, and bad operands are named", "[reference][operands][unit]") {
  OpCase c = segment_matmul_case({2, 1}, 2, 2, 1);
  const Op& op = c.op();
  TensorValues produced;
  produced.set_f32(op.input, {1, 1, 1, 1, 1, 1});
  const Operands o = resolve_operands(op, c.values, produced);
  CHECK(o.input == &produced.f32(op.input));
  CHECK(o.weight == &c.values.f32(op.weight));
  CHECK(o.bias == nullptr);
  CHECK_NOTHROW(check_operands(op, o, "test"));

  SECTION("offsets that do not end at num_inputs") {
    TensorValues bad;
    bad.set_i32(op.indices, {0, 2, 2});
    CHECK_THROWS_WITH(check_operands(op, resolve_operands(op, c.values, bad), "test"),
                      Catch::Contains("test: op 'segment_linear'") && Catch::Contains("expected num_inputs = 3"));
  }
  SECTION("decreasing offsets") {
    TensorValues bad;
    bad.set_i32(op.indices, {0, 3, 2});
    CHECK_THROWS_WITH(check_operands(op, resolve_operands(op, c.values, bad), "test"),
                      Catch::Contains("offsets") && Catch::Contains("3 then 2"));
  }
  SECTION("a missing operand") {
    TensorValues none;
    CHECK_THROWS_WITH(resolve_operands(op, none), Catch::Contains("no values for its input tensor"));
  }
  SECTION("an index out of range") {
    OpCase s = scatter_case(OpKind::scatter_max, 2, 3, {0, 3}, 1);
    CHECK_THROWS_WITH(check_operands(s.op(), resolve_operands(s.op(), s.values), "test"),
                      Catch::Contains("indices[1] = 3 is outside [0, 3)"));
  }
  SECTION("a size that does not match the shape") {
    OpCase u = unary_case(UnaryFn::relu, 0, 2, 3, 1);
    u.values.set_f32(u.op().input, {1, 2, 3});
    CHECK_THROWS_WITH(check_operands(u.op(), resolve_operands(u.op(), u.values), "test"),
                      Catch::Contains("input has 3 values, expected 2 x 3 = 6"));
  }
}
