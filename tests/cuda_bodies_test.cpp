// The CUDA kernels' per-thread bodies (kernels/cuda/kernel_bodies.hpp), run on the host over emulated
// launch grids and compared with the references: the indexing of every kernel is tested here, where
// no GPU is. Each body runs twice: on the grid its launcher would use (one item per thread), and on a
// deliberately small grid, so the grid-stride loops wrap several times and idle threads occur. The
// device-side atomics and the kernels' speed need a GPU (the cuda backend says so when none is present).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/kernel_bodies.hpp"
#include "kernels/reference/reference.hpp"
#include "kernels/reference/reference_ops.hpp"

using namespace tilesim;
namespace cuda = tilesim::kernels::cuda;
namespace reference = tilesim::kernels::reference;

namespace {

// The launcher's grid for `items`, and a small one: 3 blocks of 32 threads.
std::vector<cuda::LaunchShape> grids_for(std::int64_t items) { return {cuda::launch_shape(items), cuda::launch_shape(items, 32, 3)}; }

std::vector<float> random_values(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<std::int32_t> random_indices(std::int64_t n, std::int64_t range, std::mt19937& rng, bool sorted = false) {
  std::uniform_int_distribution<std::int32_t> d(0, static_cast<std::int32_t>(range - 1));
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (auto& i : v) i = d(rng);
  if (sorted) std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::int64_t> offsets_of(const std::vector<std::int32_t>& sorted, std::int64_t segments) {
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(segments + 1), 0);
  for (std::int32_t r : sorted) ++offsets[static_cast<std::size_t>(r) + 1];
  for (std::size_t s = 1; s < offsets.size(); ++s) offsets[s] += offsets[s - 1];
  return offsets;
}

struct Shape {
  std::int64_t inputs, features, outputs;
};
const std::vector<Shape> kShapes = {{1, 1, 1}, {7, 3, 5}, {50, 4, 300}, {300, 17, 40}, {64, 64, 1000}, {1000, 8, 3}, {5, 2, 0}};

}  // namespace

TEST_CASE("cuda launch_shape covers the items, caps the grid and never launches zero blocks", "[kernels][cuda]") {
  CHECK(cuda::launch_shape(0).blocks == 1);
  CHECK(cuda::launch_shape(1).blocks == 1);
  CHECK(cuda::launch_shape(256).blocks == 1);
  CHECK(cuda::launch_shape(257).blocks == 2);
  CHECK(cuda::launch_shape(std::int64_t{1} << 40).blocks == 65535);  // the grid-stride loop does the rest
  CHECK(cuda::launch_shape(1000, 128).threads_per_block == 128);
  // Every thread of an emulated launch is visited once, with consistent indices.
  std::vector<int> seen(3 * 32, 0);
  cuda::emulate_launch(cuda::launch_shape(1000, 32, 3), [&](const cuda::ThreadIndex& t) {
    CHECK(t.stride() == 96);
    ++seen[static_cast<std::size_t>(t.global())];
  });
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("cuda gather bodies (scalar and 16-byte vector) copy the reference's bits", "[kernels][cuda]") {
  std::mt19937 rng(1);
  for (const Shape& s : kShapes) {
    if (s.inputs == 0) continue;
    INFO("table rows=" << s.inputs << " features=" << s.features << " lookups=" << s.outputs);
    const auto table = random_values(s.inputs * s.features, rng);
    const auto indices = random_indices(s.outputs, s.inputs, rng);
    const auto expected = reference::gather(table, s.features, indices);
    for (const bool vec4 : {false, true}) {
      if (vec4 && s.features % 4 != 0) continue;
      const std::int64_t items = s.outputs * (vec4 ? s.features / 4 : s.features);
      for (const auto& grid : grids_for(items)) {
        std::vector<float> out(expected.size(), std::numeric_limits<float>::quiet_NaN());
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          if (vec4) cuda::gather_vec4_body(t, table.data(), s.features, indices.data(), s.outputs, out.data());
          else cuda::gather_body(t, table.data(), s.features, indices.data(), s.outputs, out.data());
        });
        CHECK((out.empty() || std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)) == 0));
      }
    }
  }
}

TEST_CASE("cuda scatter bodies (fill, atomic scatter, finish) give sum, mean and max within the reference's bounds", "[kernels][cuda]") {
  std::mt19937 rng(2);
  for (const Shape& s : kShapes) {
    if (s.outputs == 0) continue;
    INFO("messages=" << s.inputs << " features=" << s.features << " outputs=" << s.outputs);
    const auto src = random_values(s.inputs * s.features, rng);
    const auto indices = random_indices(s.inputs, s.outputs, rng);
    for (const auto reduce : {reference::Reduction::sum, reference::Reduction::mean, reference::Reduction::max}) {
      INFO("reduce=" << static_cast<int>(reduce));
      const auto expected = reference::scatter_reduce(reduce, src, s.features, indices, s.outputs, 0.0);
      for (const auto& grid : grids_for(s.inputs * s.features)) {
        const bool counted = reduce != reference::Reduction::sum;
        std::vector<float> out(static_cast<std::size_t>(s.outputs * s.features), std::numeric_limits<float>::quiet_NaN());
        std::vector<std::int32_t> counts(static_cast<std::size_t>(s.outputs), -7);
        const float identity = reduce == reference::Reduction::max ? -std::numeric_limits<float>::infinity() : 0.0f;
        // The launcher's sequence: fill, fill counts, scatter, finish (each its own launch).
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, out.data(), static_cast<std::int64_t>(out.size()), identity); });
        if (counted) cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, counts.data(), s.outputs, 0); });
        const auto op = reduce == reference::Reduction::max ? cuda::ScatterOp::max : cuda::ScatterOp::add;
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::scatter_atomic_body(t, op, src.data(), s.inputs, s.features, indices.data(), out.data(), counted ? counts.data() : nullptr);
        });
        if (counted) {
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
            cuda::finish_body(t, reduce == reference::Reduction::mean, counts.data(), s.outputs, s.features, out.data());
          });
        }
        const auto v = reference::check("cuda scatter", s.features, out, expected);
        INFO(v.detail);
        CHECK(v.ok);
      }
    }
  }
}

TEST_CASE("cuda segment body reduces CSR segments, empty ones to 0", "[kernels][cuda]") {
  std::mt19937 rng(3);
  for (const Shape& s : kShapes) {
    if (s.outputs == 0) continue;
    INFO("messages=" << s.inputs << " features=" << s.features << " segments=" << s.outputs);
    const auto src = random_values(s.inputs * s.features, rng);
    const auto sorted = random_indices(s.inputs, s.outputs, rng, true);
    const auto offsets = offsets_of(sorted, s.outputs);
    const std::pair<int, reference::Reduction> ops[] = {
        {0, reference::Reduction::sum}, {1, reference::Reduction::mean}, {2, reference::Reduction::max}};
    for (const auto& [op, reduce] : ops) {
      const auto expected = reference::segment_reduce(reduce, src, s.features, offsets, 0.0);
      for (const auto& grid : grids_for(s.outputs * s.features)) {
        std::vector<float> out(static_cast<std::size_t>(s.outputs * s.features), std::numeric_limits<float>::quiet_NaN());
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::segment_body(t, op, src.data(), s.features, offsets.data(), s.outputs, out.data());
        });
        const auto v = reference::check("cuda segment", s.features, out, expected);
        INFO(v.detail);
        CHECK(v.ok);
      }
    }
  }
}

TEST_CASE("cuda SpMM bodies, atomic over any edge order and owner-computes over CSR, agree with the reference", "[kernels][cuda]") {
  std::mt19937 rng(4);
  for (const Shape& s : kShapes) {
    if (s.outputs == 0) continue;
    const std::int64_t nodes = s.outputs, edges = s.inputs;
    INFO("nodes=" << nodes << " features=" << s.features << " edges=" << edges);
    const auto x = random_values(nodes * s.features, rng);
    const auto weights = random_values(edges, rng);
    const auto src = random_indices(edges, nodes, rng);
    const auto dst_sorted = random_indices(edges, nodes, rng, true);
    const auto expected = reference::gather_scale_scatter(x, s.features, src, dst_sorted, weights, nodes, 0.0);
    for (const auto& grid : grids_for(edges * s.features)) {
      std::vector<float> out(static_cast<std::size_t>(nodes * s.features), std::numeric_limits<float>::quiet_NaN());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, out.data(), static_cast<std::int64_t>(out.size()), 0.0f); });
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::spmm_atomic_body(t, x.data(), s.features, src.data(), dst_sorted.data(), weights.data(), edges, out.data());
      });
      const auto v = reference::check("cuda spmm atomic", s.features, out, expected);
      INFO(v.detail);
      CHECK(v.ok);
    }
    const auto offsets = offsets_of(dst_sorted, nodes);
    for (const auto& grid : grids_for(nodes * s.features)) {
      std::vector<float> out(static_cast<std::size_t>(nodes * s.features), std::numeric_limits<float>::quiet_NaN());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::spmm_csr_body(t, x.data(), s.features, offsets.data(), src.data(), weights.data(), nodes, out.data());
      });
      const auto v = reference::check("cuda spmm csr", s.features, out, expected);
      INFO(v.detail);
      CHECK(v.ok);
    }
  }
}

TEST_CASE("cuda atomic_max emulation keeps the larger value, negatives included", "[kernels][cuda]") {
  float x = -std::numeric_limits<float>::infinity();
  for (float v : {-3.0f, -5.0f, -0.5f, -2.0f}) cuda::atomic_max(&x, v);
  CHECK(x == -0.5f);
  cuda::atomic_max(&x, 2.0f);
  CHECK(x == 2.0f);
  CHECK(cuda::bits_to_float(0xFF800000u) == -std::numeric_limits<float>::infinity());
}
