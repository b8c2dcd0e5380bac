// The CPU kernels beyond gather/scatter-add (scatter mean/max, segment reduction, the fused
// gather-scale-scatter, matmul through OpenBLAS) and the 16-bit storage formats, against the references
// of ir/reference/reference_ops.hpp. Shapes are chosen so every strategy of the scatter engine runs
// (serial, sorted segments, per-thread partials, owner-computes). No timing assertions.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "ir/reference/reference_ops.hpp"
#include "kernels/cpu/gather_scatter.hpp"
#include "kernels/cpu/matmul.hpp"
#include "kernels/cpu/row_ops.hpp"
#include "kernels/cpu/scatter_reduce.hpp"
#include "kernels/cpu/spmm.hpp"
#include "kernels/cpu/storage.hpp"

using namespace tilesim;
namespace cpu = tilesim::kernels::cpu;
namespace reference = tilesim::reference;

namespace {

reference::Reduction as_reference(cpu::Reduce r) {
  switch (r) {
    case cpu::Reduce::sum: return reference::Reduction::sum;
    case cpu::Reduce::mean: return reference::Reduction::mean;
    case cpu::Reduce::max: return reference::Reduction::max;
  }
  return reference::Reduction::sum;
}

enum class Pattern { uniform, sorted, all_equal, even_only };

struct Shape {
  std::int64_t messages, features, outputs;
  Pattern pattern;
};

std::string describe(const Shape& s) {
  static const char* names[] = {"uniform", "sorted", "all_equal", "even_only"};
  return "messages=" + std::to_string(s.messages) + " features=" + std::to_string(s.features) + " outputs=" + std::to_string(s.outputs) +
         " indices=" + names[static_cast<int>(s.pattern)];
}

std::vector<std::int32_t> make_indices(std::int64_t count, std::int64_t range, Pattern pattern, std::mt19937& rng) {
  std::uniform_int_distribution<std::int32_t> any(0, static_cast<std::int32_t>(range - 1));
  std::uniform_int_distribution<std::int32_t> any_even(0, static_cast<std::int32_t>((range - 1) / 2));
  const std::int32_t one = any(rng);
  std::vector<std::int32_t> indices(static_cast<std::size_t>(count));
  for (auto& i : indices) {
    switch (pattern) {
      case Pattern::uniform:
      case Pattern::sorted: i = any(rng); break;
      case Pattern::all_equal: i = one; break;
      case Pattern::even_only: i = 2 * any_even(rng); break;
    }
  }
  if (pattern == Pattern::sorted) std::sort(indices.begin(), indices.end());
  return indices;
}

// Random values, rounded to storage T; returns them as T and as the floats the kernel reads.
template <class T>
std::vector<T> make_values(std::int64_t count, std::mt19937& rng, std::vector<float>* widened) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<T> stored(static_cast<std::size_t>(count));
  widened->resize(stored.size());
  for (std::size_t i = 0; i < stored.size(); ++i) {
    stored[i] = cpu::from_float<T>(value(rng));
    (*widened)[i] = cpu::to_float(stored[i]);
  }
  return stored;
}

template <class T>
std::vector<float> widen(const std::vector<T>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = cpu::to_float(v[i]);
  return out;
}

// Covers: serial (small), sorted segments (sorted, >= 8 features, large), partials (many messages per
// output row), owner-computes (large output), and rows no message reaches.
const std::vector<Shape> kShapes = {
    {1, 1, 1, Pattern::uniform},          {7, 3, 5, Pattern::uniform},           {100, 17, 9, Pattern::all_equal},
    {0, 8, 6, Pattern::uniform},          {64, 5, 40, Pattern::even_only},       {20000, 16, 50, Pattern::uniform},
    {20000, 3, 1, Pattern::all_equal},    {9000, 17, 301, Pattern::even_only},   {3000, 17, 5000, Pattern::uniform},
    {3000, 33, 5000, Pattern::sorted},    {20000, 8, 20000, Pattern::all_equal}, {4000, 3, 30001, Pattern::even_only},
    {16, 512, 2000, Pattern::uniform},    {40000, 24, 700, Pattern::sorted},     {30000, 64, 100, Pattern::even_only},
};

template <class T>
void check_scatter_reduce(cpu::Reduce reduce) {
  std::uint32_t seed = 1000;
  for (const Shape& s : kShapes) {
    INFO(describe(s) << " reduce=" << cpu::to_string(reduce) << " storage=" << cpu::storage_name<T>());
    std::mt19937 rng(seed++);
    std::vector<float> src_f;
    const std::vector<T> src = make_values<T>(s.messages * s.features, rng, &src_f);
    const std::vector<std::int32_t> indices = make_indices(s.messages, s.outputs, s.pattern, rng);
    std::vector<T> out(static_cast<std::size_t>(s.outputs * s.features), cpu::from_float<T>(std::numeric_limits<float>::quiet_NaN()));
    cpu::scatter_reduce(reduce, src.data(), s.messages, s.features, indices.data(), s.outputs, out.data());
    const auto expected = reference::scatter_reduce(as_reference(reduce), src_f, s.features, indices, s.outputs,
                                                    reference::storage_rounding(cpu::storage_name<T>()));
    const auto v = reference::check("scatter_reduce", s.features, widen(out), expected);
    INFO(v.detail);
    CHECK(v.ok);
    // A second call gives the same bits: no races, one summation order per strategy and thread count.
    std::vector<T> again(out.size());
    cpu::scatter_reduce(reduce, src.data(), s.messages, s.features, indices.data(), s.outputs, again.data());
    CHECK(std::memcmp(again.data(), out.data(), out.size() * sizeof(T)) == 0);
    if (s.pattern == Pattern::sorted) {
      // The same reduction through explicit segment offsets.
      const auto offsets = cpu::segment_offsets(indices.data(), s.messages, s.outputs);
      std::vector<T> seg(out.size());
      cpu::segment_reduce(reduce, src.data(), s.features, offsets.data(), s.outputs, seg.data());
      const auto sv = reference::check("segment_reduce", s.features, widen(seg),
                                       reference::segment_reduce(as_reference(reduce), src_f, s.features, offsets,
                                                                 reference::storage_rounding(cpu::storage_name<T>())));
      INFO(sv.detail);
      CHECK(sv.ok);
    }
  }
}

}  // namespace

TEST_CASE("cpu scatter_reduce sum, mean and max over float32 agree with the reference on every strategy", "[kernels][cpu][reduce][unit]") {
  for (cpu::Reduce r : {cpu::Reduce::sum, cpu::Reduce::mean, cpu::Reduce::max}) check_scatter_reduce<float>(r);
}

TEST_CASE("cpu scatter_reduce over float16 and bfloat16 storage accumulates in float32", "[kernels][cpu][reduce][storage][unit]") {
  for (cpu::Reduce r : {cpu::Reduce::sum, cpu::Reduce::mean, cpu::Reduce::max}) {
    check_scatter_reduce<cpu::Float16>(r);
    check_scatter_reduce<cpu::BFloat16>(r);
  }
}

TEST_CASE("float32 accumulation keeps a long bfloat16 sum accurate where bfloat16 accumulation would not", "[kernels][cpu][storage][unit]") {
  // 4096 messages of 1.0 into one row: a bfloat16 running sum sticks at 256 (256 + 1 rounds back to
  // 256), a float32 one reaches 4096, which bfloat16 stores exactly.
  const std::int64_t messages = 4096, features = 16;
  std::vector<cpu::BFloat16> src(static_cast<std::size_t>(messages * features), cpu::to_bfloat16(1.0f));
  std::vector<std::int32_t> indices(static_cast<std::size_t>(messages), 0);
  std::vector<cpu::BFloat16> out(static_cast<std::size_t>(features));
  cpu::scatter_reduce(cpu::Reduce::sum, src.data(), messages, features, indices.data(), 1, out.data());
  for (const auto& x : out) CHECK(cpu::to_float(x) == 4096.0f);
}

TEST_CASE("cpu scatter_reduce gives 0 for rows no message reaches, for every reduction", "[kernels][cpu][reduce][unit]") {
  const std::vector<float> src = {-5.0f, -7.0f, 3.0f, 1.0f};  // two messages of two features
  const std::vector<std::int32_t> indices = {2, 2};
  for (cpu::Reduce r : {cpu::Reduce::sum, cpu::Reduce::mean, cpu::Reduce::max}) {
    std::vector<float> out(8, 99.0f);
    cpu::scatter_reduce(r, src.data(), 2, 2, indices.data(), 4, out.data());
    INFO(cpu::to_string(r));
    CHECK(out[0] == 0.0f);
    CHECK(out[3] == 0.0f);
    CHECK(out[6] == 0.0f);
    CHECK(out[7] == 0.0f);
    if (r == cpu::Reduce::sum) CHECK((out[4] == -2.0f && out[5] == -6.0f));
    if (r == cpu::Reduce::mean) CHECK((out[4] == -1.0f && out[5] == -3.0f));
    if (r == cpu::Reduce::max) CHECK((out[4] == 3.0f && out[5] == 1.0f));  // negative maxima are not clamped to 0
  }
}

TEST_CASE("segment_offsets counts sorted indices and names the first bad one", "[kernels][cpu][reduce][unit]") {
  const std::vector<std::int32_t> sorted = {0, 0, 2, 2, 2, 4};
  CHECK(cpu::segment_offsets(sorted.data(), 6, 5) == std::vector<std::int64_t>{0, 2, 2, 5, 5, 6});
  CHECK(cpu::segment_offsets(sorted.data(), 0, 2) == std::vector<std::int64_t>{0, 0, 0});
  const std::vector<std::int32_t> unsorted = {0, 3, 1};
  CHECK_THROWS_AS(cpu::segment_offsets(unsorted.data(), 3, 5), InputError);
  CHECK_THROWS_WITH(cpu::segment_offsets(unsorted.data(), 3, 5), Catch::Contains("indices[2] = 1 < indices[1] = 3"));
  CHECK_THROWS_WITH(cpu::segment_offsets(sorted.data(), 6, 4), Catch::Contains("indices[5] = 4 is outside [0, 4)"));
  CHECK(cpu::indices_sorted(sorted.data(), 6));
  CHECK_FALSE(cpu::indices_sorted(unsorted.data(), 3));
  CHECK(cpu::reduce_from_string("mean") == cpu::Reduce::mean);
  CHECK_FALSE(cpu::reduce_from_string("median").has_value());
}

TEST_CASE("segment_reduce handles empty segments and a segment holding every message", "[kernels][cpu][reduce][unit]") {
  std::mt19937 rng(5);
  std::vector<float> src_f;
  const std::int64_t messages = 30000, features = 20;
  const auto src = make_values<float>(messages * features, rng, &src_f);
  // Segments: empty, all messages, empty, empty.
  const std::vector<std::int64_t> offsets = {0, 0, messages, messages, messages};
  for (cpu::Reduce r : {cpu::Reduce::sum, cpu::Reduce::mean, cpu::Reduce::max}) {
    std::vector<float> out(static_cast<std::size_t>(4 * features), std::numeric_limits<float>::quiet_NaN());
    cpu::segment_reduce(r, src.data(), features, offsets.data(), 4, out.data());
    const auto v = reference::check("segment_reduce", features, out, reference::segment_reduce(as_reference(r), src_f, features, offsets, 0));
    INFO(v.detail);
    CHECK(v.ok);
  }
}

TEST_CASE("cpu gather_scale_scatter (SpMM) agrees with the reference, sorted and unsorted, every storage", "[kernels][cpu][spmm][unit]") {
  struct Case {
    std::int64_t nodes, features, edges, outputs;
    Pattern dst;
  };
  const std::vector<Case> cases = {{5, 3, 7, 4, Pattern::uniform},       {100, 16, 40000, 100, Pattern::uniform},
                                   {300, 17, 5000, 6000, Pattern::uniform}, {2000, 64, 30000, 2000, Pattern::sorted},
                                   {50, 8, 0, 10, Pattern::uniform},       {1000, 5, 3000, 1000, Pattern::even_only}};
  std::uint32_t seed = 77;
  for (const Case& c : cases) {
    INFO("nodes=" << c.nodes << " features=" << c.features << " edges=" << c.edges << " outputs=" << c.outputs);
    std::mt19937 rng(seed++);
    std::vector<float> x_f, w;
    const auto x32 = make_values<float>(c.nodes * c.features, rng, &x_f);
    make_values<float>(c.edges, rng, &w);
    const auto src_nodes = make_indices(c.edges, c.nodes, Pattern::uniform, rng);
    const auto dst_nodes = make_indices(c.edges, c.outputs, c.dst, rng);
    {
      std::vector<float> out(static_cast<std::size_t>(c.outputs * c.features), std::numeric_limits<float>::quiet_NaN());
      cpu::gather_scale_scatter(x32.data(), c.nodes, c.features, src_nodes.data(), dst_nodes.data(), w.data(), c.edges, c.outputs, out.data());
      const auto v = reference::check("spmm float32", c.features, out,
                                      reference::gather_scale_scatter(x_f, c.features, src_nodes, dst_nodes, w, c.outputs, 0));
      INFO(v.detail);
      CHECK(v.ok);
    }
    {
      std::vector<float> xb_f;
      std::mt19937 rng16(seed);
      const auto xb = make_values<cpu::BFloat16>(c.nodes * c.features, rng16, &xb_f);
      std::vector<cpu::BFloat16> out(static_cast<std::size_t>(c.outputs * c.features));
      cpu::gather_scale_scatter(xb.data(), c.nodes, c.features, src_nodes.data(), dst_nodes.data(), w.data(), c.edges, c.outputs, out.data());
      const auto v = reference::check("spmm bfloat16", c.features, widen(out),
                                      reference::gather_scale_scatter(xb_f, c.features, src_nodes, dst_nodes, w, c.outputs,
                                                                      reference::storage_rounding("bfloat16")));
      INFO(v.detail);
      CHECK(v.ok);
    }
  }
}

TEST_CASE("cpu matmul_f32 through OpenBLAS agrees with the reference, with and without bias", "[kernels][cpu][matmul][unit]") {
  struct Dims {
    std::int64_t m, k, n;
  };
  std::uint32_t seed = 3;
  for (const Dims d : {Dims{1, 1, 1}, Dims{7, 5, 3}, Dims{64, 64, 64}, Dims{1000, 64, 64}, Dims{33, 129, 17}, Dims{5, 0, 4}, Dims{0, 3, 2}}) {
    INFO("m=" << d.m << " k=" << d.k << " n=" << d.n);
    std::mt19937 rng(seed++);
    std::vector<float> a, b, bias;
    make_values<float>(d.m * d.k, rng, &a);
    make_values<float>(d.k * d.n, rng, &b);
    make_values<float>(d.n, rng, &bias);
    for (const bool with_bias : {false, true}) {
      std::vector<float> c(static_cast<std::size_t>(d.m * d.n), std::numeric_limits<float>::quiet_NaN());
      cpu::matmul_f32(a.data(), b.data(), d.m, d.k, d.n, with_bias ? bias.data() : nullptr, c.data());
      const auto v = reference::check("matmul", std::max<std::int64_t>(d.n, 1), c,
                                      reference::matmul(a, b, d.m, d.k, d.n, with_bias ? bias : std::vector<float>{}));
      INFO(v.detail);
      CHECK(v.ok);
    }
  }
  CHECK(cpu::blas_threads() == omp_get_max_threads());
  CHECK_THAT(cpu::blas_description(), Catch::Contains("OpenBLAS"));
  CHECK_THROWS_AS(cpu::matmul_f32(nullptr, nullptr, 1, std::int64_t{1} << 32, 1, nullptr, nullptr), InputError);
}

TEST_CASE("cpu gather of float16 and bfloat16 rows copies bits", "[kernels][cpu][storage][unit]") {
  std::mt19937 rng(9);
  for (const auto& [rows, features, lookups] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {10, 3, 7}, {100, 32, 5000}, {4096, 64, 20000}, {7, 1000, 300}}) {
    INFO("rows=" << rows << " features=" << features << " lookups=" << lookups);
    std::vector<std::uint16_t> table(static_cast<std::size_t>(rows * features));
    for (auto& b : table) b = static_cast<std::uint16_t>(rng());
    const auto indices = make_indices(lookups, rows, Pattern::uniform, rng);
    std::vector<std::uint16_t> expected(static_cast<std::size_t>(lookups * features));
    for (std::int64_t i = 0; i < lookups; ++i)
      std::memcpy(&expected[static_cast<std::size_t>(i * features)], &table[static_cast<std::size_t>(indices[i] * features)],
                  static_cast<std::size_t>(features) * 2);
    std::vector<cpu::Float16> out16(expected.size());
    cpu::gather_f16(reinterpret_cast<const cpu::Float16*>(table.data()), rows, features, indices.data(), lookups, out16.data());
    CHECK(std::memcmp(out16.data(), expected.data(), expected.size() * 2) == 0);
    std::vector<cpu::BFloat16> outb(expected.size());
    cpu::gather_bf16(reinterpret_cast<const cpu::BFloat16*>(table.data()), rows, features, indices.data(), lookups, outb.data());
    CHECK(std::memcmp(outb.data(), expected.data(), expected.size() * 2) == 0);
  }
}

TEST_CASE("float16 and bfloat16 conversions match first principles, scalar and vector paths alike", "[kernels][cpu][storage][unit]") {
  SECTION("every float16 and bfloat16 pattern widens to its value") {
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      const auto bits = static_cast<std::uint16_t>(b);
      const double h = reference::float16_value(bits), bf = reference::bfloat16_value(bits);
      const float h_got = cpu::to_float(cpu::Float16{bits}), bf_got = cpu::to_float(cpu::BFloat16{bits});
      if (std::isnan(h)) CHECK(std::isnan(h_got)); else if (static_cast<double>(h_got) != h) FAIL_CHECK("float16 " << b << ": " << h_got << " vs " << h);
      if (std::isnan(bf)) CHECK(std::isnan(bf_got)); else if (static_cast<double>(bf_got) != bf) FAIL_CHECK("bfloat16 " << b << ": " << bf_got << " vs " << bf);
    }
  }
  SECTION("floats round to the nearest pattern, ties to even") {
    std::mt19937 rng(11);
    std::vector<float> xs = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e10f, -1e10f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f,
                             0x1p-26f, 0x1.002p0f, 0x1.006p0f, 0x1.01p0f, 0x1.03p0f, 6.1e-5f, 3.4e38f, -3.4e38f,
                             std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::denorm_min(), 1e-40f};
    std::uniform_int_distribution<std::uint32_t> any_bits;
    for (int i = 0; i < 200000; ++i) {
      float x;
      const std::uint32_t b = any_bits(rng);
      std::memcpy(&x, &b, sizeof x);
      if (!std::isnan(x)) xs.push_back(x);
    }
    // Values near float16's range, where its rounding cases live.
    std::uniform_real_distribution<float> moderate(-70000.0f, 70000.0f);
    for (int i = 0; i < 100000; ++i) xs.push_back(moderate(rng) * std::ldexp(1.0f, -static_cast<int>(rng() % 30)));
    std::int64_t bad16 = 0, badb = 0;
    for (float x : xs) {
      bad16 += cpu::to_float16(x).bits != reference::nearest_float16(x) ? 1 : 0;
      badb += cpu::to_bfloat16(x).bits != reference::nearest_bfloat16(x) ? 1 : 0;
    }
    CHECK(bad16 == 0);
    CHECK(badb == 0);
    // The AVX-512 row store rounds as the scalar conversion does (1003 values: 62 vectors and a tail).
    std::vector<float> row(xs.begin(), xs.begin() + 1003);
    std::vector<cpu::Float16> h(row.size());
    std::vector<cpu::BFloat16> bf(row.size());
    cpu::rows::store(row.data(), static_cast<std::int64_t>(row.size()), h.data());
    cpu::rows::store(row.data(), static_cast<std::int64_t>(row.size()), bf.data());
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (h[i].bits != cpu::to_float16(row[i]).bits) FAIL_CHECK("float16 row store at " << i << " of " << row[i]);
      if (bf[i].bits != cpu::to_bfloat16(row[i]).bits) FAIL_CHECK("bfloat16 row store at " << i << " of " << row[i]);
    }
  }
  SECTION("NaN stays NaN") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(std::isnan(cpu::to_float(cpu::to_float16(nan))));
    CHECK(std::isnan(cpu::to_float(cpu::to_bfloat16(nan))));
    float signalling;
    const std::uint32_t bits = 0x7F800001u;  // the payload is in bits bfloat16 drops
    std::memcpy(&signalling, &bits, sizeof signalling);
    CHECK(std::isnan(cpu::to_float(cpu::to_bfloat16(signalling))));
    CHECK(std::isnan(cpu::to_float(cpu::to_float16(signalling))));
  }
}
