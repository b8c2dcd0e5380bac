// The float32 CUDA bodies keep their exact bits across the storage-policy change (issue 15): each body
// runs over fixed inputs on two emulated grids, and a hash of its output bits must equal the hash the
// plain float bodies gave before they were templated on the storage (recorded from that code, built with
// this test's flags). A changed hash means the float32 kernels compute something else now: an extra
// rounding, another summation order, a different formula. The inputs come from a fixed integer
// sequence, not a library distribution, and the bodies chosen use only correctly rounded arithmetic
// (+ - * /, sqrtf), so the hashes do not depend on the C++ library or libm; the bodies calling expf,
// logf, log1pf or cosf are instead checked element by element against their unchanged value functions.
// The hashes hold where the host compiler does not contract a * b + c into a fused multiply-add (x86-64
// without -mfma, as the tests build); elsewhere the bodies compute other, equally valid bits and only
// the "every element written" checks run. (The device kernels are checked apart: their PTX, float32
// instantiations against the pre-template kernels, was compared when the templates came in.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/kernel_bodies.hpp"
#include "kernels/cuda/training_bodies.hpp"
#include "tests/support/cuda_half_support.hpp"

using namespace tilesim;
namespace cuda = tilesim::kernels::cuda;

namespace {

// Values in [-1.1, 1.1) from a multiplicative hash of the index: reproducible everywhere, and inexact
// enough (the 1.1 factor) that products and sums round.
std::vector<float> fixed_values(std::int64_t n, std::uint32_t salt) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t h = (static_cast<std::uint32_t>(i) + salt) * 2654435761u;
    v[static_cast<std::size_t>(i)] = (static_cast<float>((h >> 8) & 0xFFFFu) / 32768.0f - 1.0f) * 1.1f;
  }
  return v;
}
std::vector<std::int32_t> fixed_indices(std::int64_t n, std::int64_t range, std::uint32_t salt) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(((static_cast<std::uint32_t>(i) + salt) * 2246822519u >> 7) % range);
  return v;
}

// FNV-1a over the bits of every output, folded across calls; the hashes below were printed by this
// test run on the bodies before the change.
struct BitsHash {
  std::uint64_t h = 14695981039346656037ull;
  std::int64_t nans = 0;  // an element a body never wrote stays NaN
  void add(const std::vector<float>& v) {
    for (float x : v) {
      nans += std::isnan(x) ? 1 : 0;
      std::uint32_t b;
      std::memcpy(&b, &x, sizeof b);
      for (int k = 0; k < 4; ++k) {
        h ^= (b >> (8 * k)) & 0xFFu;
        h *= 1099511628211ull;
      }
    }
  }
};

// The launcher's grid and a small one whose grid-stride loops wrap (and whose emulated atomics add in
// another order).
using tilesim_test::cuda_half::grids_for;

std::vector<float> nans(std::int64_t n) { return std::vector<float>(static_cast<std::size_t>(n), std::numeric_limits<float>::quiet_NaN()); }

#if defined(__x86_64__) && !defined(__FMA__)
constexpr bool kHashesRecordedHere = true;
#else
constexpr bool kHashesRecordedHere = false;
#endif

// The recorded hash, where this build computes the bits it was recorded from.
void check_recorded(const BitsHash& hash, std::uint64_t recorded) {
  if (kHashesRecordedHere) CHECK(hash.h == recorded);
}

}  // namespace

TEST_CASE("cuda float32 bodies: gather, scatter, degree, elementwise and segment matmul bits as before the storage templates",
          "[kernels][cuda][unit]") {
  const std::int64_t rows = 200, outputs = 37;
  BitsHash gather, scatter, degree, unary, binary, segmm;
  for (const std::int64_t features : {7, 8}) {
    const auto table = fixed_values(rows * features, 1);
    const auto idx = fixed_indices(rows, outputs, 2);
    for (const auto& grid : grids_for(rows * features)) {
      auto out = nans(outputs * features);
      const auto lookups = fixed_indices(outputs, rows, 3);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        if (features % 4 == 0) cuda::gather_vec4_body(t, table.data(), features, lookups.data(), outputs, out.data());
        else cuda::gather_body(t, table.data(), features, lookups.data(), outputs, out.data());
      });
      gather.add(out);
      for (int reduce = 0; reduce < 3; ++reduce) {
        auto o = nans(outputs * features);
        std::vector<std::int32_t> counts(static_cast<std::size_t>(outputs), -1);
        const float identity = reduce == 2 ? -std::numeric_limits<float>::infinity() : 0.0f;
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, o.data(), outputs * features, identity); });
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, counts.data(), outputs, 0); });
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::scatter_atomic_body(t, reduce == 2 ? cuda::ScatterOp::max : cuda::ScatterOp::add, table.data(), rows, features, idx.data(),
                                    o.data(), reduce == 0 ? nullptr : counts.data());
        });
        if (reduce != 0)
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::finish_body(t, reduce == 1, counts.data(), outputs, features, o.data()); });
        scatter.add(o);
      }
      auto d = nans(outputs);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, d.data(), outputs, 0.0f); });
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::degree_body(t, idx.data(), rows, d.data()); });
      degree.add(d);
      for (const auto& [fn, scalar] : std::vector<std::pair<UnaryFn, float>>{
               {UnaryFn::relu, 0.0f}, {UnaryFn::leaky_relu, 0.2f}, {UnaryFn::scale, 1.7f}, {UnaryFn::rsqrt_or_zero, 0.0f}, {UnaryFn::reciprocal_or_zero, 0.0f}}) {
        auto u = nans(rows * features);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::unary_body(t, fn, scalar, table.data(), rows * features, u.data()); });
        unary.add(u);
      }
      // The libm functions: the body writes exactly its (unchanged) value function of each element.
      for (const auto& [fn, scalar] : std::vector<std::pair<UnaryFn, float>>{
               {UnaryFn::exp, 0.0f}, {UnaryFn::shifted_softplus, 0.0f}, {UnaryFn::cosine_cutoff, 0.9f}}) {
        auto u = nans(rows * features);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::unary_body(t, fn, scalar, table.data(), rows * features, u.data()); });
        for (std::size_t e = 0; e < u.size(); ++e) {
          const float expected = cuda::unary_value(fn, table[e], scalar);
          CHECK(std::memcmp(&u[e], &expected, sizeof(float)) == 0);
        }
      }
      const std::int64_t groups = features == 8 ? 4 : 7;
      const auto other = fixed_values(rows * groups, 4);
      for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal}) {
        for (const std::int64_t other_rows : {std::int64_t{1}, rows}) {
          auto b = nans(rows * features);
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
            cuda::binary_body(t, fn, table.data(), rows, features, other.data(), other_rows, groups, b.data());
          });
          binary.add(b);
        }
      }
      const std::vector<std::int32_t> offsets{0, 60, 60, 141, 200};
      const std::int64_t cols = 5;
      const auto w = fixed_values(4 * features * cols, 5);
      auto s = nans(rows * cols);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::segment_matmul_body(t, table.data(), rows, features, offsets.data(), 4, w.data(), cols, s.data());
      });
      segmm.add(s);
    }
  }
  for (const BitsHash* h : {&gather, &scatter, &degree, &unary, &binary, &segmm}) CHECK(h->nans == 0);
  check_recorded(gather, 0x123c1fa5437dc21dull);
  check_recorded(scatter, 0x3c3b34f2328b9394ull);
  check_recorded(degree, 0x16e8c8dade6c6765ull);
  check_recorded(unary, 0x788e222c8bc83495ull);
  check_recorded(binary, 0x844e34a165a21b81ull);
  check_recorded(segmm, 0x13ad2d39a2608665ull);
}

TEST_CASE("cuda float32 training bodies: gradients, sums, mse loss and optimizer bits as before the storage templates",
          "[kernels][cuda][training][unit]") {
  const std::int64_t rows = 3 * cuda::kSumToChunkRows + 17, cols = 6;
  const auto x = fixed_values(rows * cols, 11), g = fixed_values(rows * cols, 12), targets = fixed_values(rows * cols, 13);
  auto weights = fixed_values(rows, 14);
  for (float& w : weights) w = w < 0 ? -w : w;  // row weights are non-negative
  BitsHash unary_grad, sums, loss, optimizer, segmm;
  for (const auto& grid : grids_for(rows * cols)) {
    for (const auto& [fn, scalar] : std::vector<std::pair<UnaryFn, float>>{
             {UnaryFn::relu, 0.0f}, {UnaryFn::leaky_relu, 0.2f}, {UnaryFn::scale, 1.7f}, {UnaryFn::rsqrt_or_zero, 0.0f}, {UnaryFn::reciprocal_or_zero, 0.0f}}) {
      auto o = nans(rows * cols);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::unary_grad_body(t, fn, scalar, x.data(), g.data(), rows * cols, o.data()); });
      unary_grad.add(o);
    }
    for (const auto& [other_rows, groups] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 6}, {1, 2}, {rows, 3}}) {
      auto o = nans(other_rows * groups);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::sum_to_body(t, x.data(), rows, cols, other_rows, groups, o.data()); });
      sums.add(o);
    }
    const std::int64_t chunks = cuda::sum_to_chunks(rows);
    auto partial = nans(chunks * cols), o = nans(3);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::column_partials_body(t, x.data(), rows, cols, cuda::kSumToChunkRows, partial.data()); });
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::sum_to_body(t, partial.data(), chunks, cols, 1, 3, o.data()); });
    sums.add(partial);
    sums.add(o);
    // mse, plain and weighted: row losses, their means and the gradients.
    for (const bool weighted : {false, true}) {
      const float* w = weighted ? weights.data() : nullptr;
      auto row_loss = nans(rows), mean = nans(1), sum = nans(1), grad = nans(rows * cols);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::loss_rows_body(t, LossFn::mse, x.data(), rows, cols, nullptr, targets.data(), row_loss.data(), w);
      });
      if (weighted) {
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::weight_sum_body(t, w, rows, sum.data()); });
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::weighted_loss_mean_body(t, row_loss.data(), rows, static_cast<float>(cols), sum.data(), mean.data());
        });
      } else {
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::loss_mean_body(t, row_loss.data(), rows, static_cast<float>(rows * cols), mean.data()); });
      }
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::loss_grad_body(t, LossFn::mse, x.data(), rows, cols, nullptr, targets.data(), grad.data(), w, weighted ? sum.data() : nullptr);
      });
      loss.add(row_loss);
      loss.add(mean);
      loss.add(grad);
    }
    // Optimizers at step 1 (Adam's bias corrections are then exactly 1 - beta: no libm pow rounding).
    OptimizerSpec plain;
    plain.lr = 0.1;
    plain.weight_decay = 0.01;
    OptimizerSpec momentum = plain;
    momentum.momentum = 0.9;
    OptimizerSpec adam;
    adam.kind = OptimizerSpec::Kind::adam;
    adam.lr = 0.01;
    adam.weight_decay = 5e-4;
    auto state = fixed_values(2 * rows * cols, 15);
    for (float& v : state) v = v < 0 ? -v : v;  // Adam's second moment is non-negative
    for (const OptimizerSpec& spec : {plain, momentum, adam}) {
      auto out = nans((1 + spec.state_rows()) * rows * cols);
      const cuda::OptimizerScalars s = cuda::optimizer_scalars(spec, 1.0);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::optimizer_step_body(t, s, x.data(), g.data(), spec.state_rows() > 0 ? state.data() : nullptr, rows * cols, out.data());
      });
      optimizer.add(out);
    }
    // segment_matmul's two backward forms over segments of 300, 0 and 485 rows.
    const std::vector<std::int32_t> offsets{0, 300, 300, static_cast<std::int32_t>(rows)};
    const std::int64_t depth = 4;
    const auto w = fixed_values(3 * cols * depth, 16);
    auto gi = nans(rows * depth), gw = nans(3 * cols * depth);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
      cuda::segment_matmul_transposed_weight_body(t, g.data(), rows, cols, offsets.data(), 3, w.data(), depth, gi.data());
    });
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
      cuda::segment_matmul_transposed_input_body(t, x.data(), cols, offsets.data(), 3, g.data(), depth, gw.data());
    });
    segmm.add(gi);
    segmm.add(gw);
  }
  for (const BitsHash* h : {&unary_grad, &sums, &loss, &optimizer, &segmm}) CHECK(h->nans == 0);
  check_recorded(unary_grad, 0x95de1e47f6e83e9dull);
  check_recorded(sums, 0x2edde0c2e3fa1d1dull);
  check_recorded(loss, 0x53d02feb1e2348adull);
  check_recorded(optimizer, 0x133c0e6f05d2b7e9ull);
  check_recorded(segmm, 0x929c1b9a6ab95a99ull);
}
