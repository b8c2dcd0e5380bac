// Turns a workload into an op graph and its input values. The generators are written out here, not
// taken from <random>'s distributions, whose algorithms differ between standard libraries: the same
// seed must give the same values wherever tilesim is built. The scheme is documented in
// docs/workload-format.md ("Generated values").
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common/error.hpp"
#include "workloads/workload.hpp"

namespace tilesim::workloads {

namespace {

// The SplitMix64 output function (Steele, Lea and Flood 2014): a bijective mixer, so nearby inputs
// (seed 1 and 2, op 0 and 1) give unrelated engine seeds.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// One independent stream per (op position, purpose): values are stream 0, indices stream 1, so
// changing one op's index distribution leaves its values and every other op unchanged.
std::mt19937_64 engine_for(std::uint64_t seed, std::size_t position, std::uint64_t stream) {
  return std::mt19937_64(mix64(seed ^ mix64(2 * static_cast<std::uint64_t>(position) + stream)));
}

// Uniform in [0, 1) with 53 random bits.
double unit(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

// Standard normal values by Marsaglia's polar method: no trigonometry, two values per accepted pair.
std::vector<float> standard_normal(std::mt19937_64& engine, std::int64_t count) {
  std::vector<float> out(static_cast<std::size_t>(count));
  std::size_t i = 0;
  while (i < out.size()) {
    const double u = 2.0 * unit(engine) - 1.0;
    const double v = 2.0 * unit(engine) - 1.0;
    const double s = u * u + v * v;
    if (s >= 1.0 || s == 0.0) continue;
    const double m = std::sqrt(-2.0 * std::log(s) / s);
    out[i++] = static_cast<float>(u * m);
    if (i < out.size()) out[i++] = static_cast<float>(v * m);
  }
  return out;
}

// Uniform integers in [0, range), with repeats, by Lemire's multiply-and-reject on the high 32 bits of
// each draw: exact (no modulo bias) and one multiply per index. range <= 2^31 - 1 (checked at parse).
std::vector<std::int32_t> uniform_indices(std::mt19937_64& engine, std::int64_t count, std::int64_t range) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(count));
  const auto r = static_cast<std::uint32_t>(range);
  const std::uint32_t threshold = static_cast<std::uint32_t>(-r) % r;  // 2^32 mod r
  for (auto& index : out) {
    std::uint64_t m;
    do {
      m = (engine() >> 32) * static_cast<std::uint64_t>(r);
    } while (static_cast<std::uint32_t>(m) < threshold);
    index = static_cast<std::int32_t>(m >> 32);
  }
  return out;
}

}  // namespace

std::vector<std::int32_t> generated_indices(std::uint64_t seed, std::size_t position, std::int64_t count, std::int64_t range) {
  auto engine = engine_for(seed, position, 1);
  return uniform_indices(engine, count, range);
}

OpGraph build_graph(const Workload& workload) {
  OpGraph graph;
  for (std::size_t i = 0; i < workload.ops.size(); ++i) {
    const OpSpec& spec = workload.ops[i];
    // parse_workload guarantees this; a Workload built in code might not, and the generators need it.
    for (std::int64_t size : {spec.shape.num_inputs, spec.shape.num_features, spec.shape.num_outputs}) {
      if (size < 1 || size > std::numeric_limits<std::int32_t>::max()) {
        throw InputError(workload.source_file, "ops[" + std::to_string(i) + "]",
                         "sizes in [1, 2147483647]", std::to_string(size));
      }
    }
    graph.add_gather_scatter(spec.name, spec.kind, spec.dtype, spec.shape);
  }
  return graph;
}

Instance instantiate(const Workload& workload) {
  Instance instance;
  instance.graph = build_graph(workload);
  for (std::size_t i = 0; i < workload.ops.size(); ++i) {
    const OpSpec& spec = workload.ops[i];
    const Op& op = instance.graph.ops[i];

    auto value_engine = engine_for(workload.seed, i, 0);
    instance.values.set_f32(op.input, standard_normal(value_engine, spec.shape.num_inputs * spec.shape.num_features));

    std::vector<std::int32_t> indices;
    if (spec.indices.distribution == IndexDistribution::file) {
      indices = read_index_file(spec.indices.file, op.num_indices(), op.index_range(), workload.source_file,
                                "ops[" + std::to_string(i) + "].indices.file");
    } else {
      indices = generated_indices(workload.seed, i, op.num_indices(), op.index_range());
      if (spec.indices.distribution == IndexDistribution::sorted) std::sort(indices.begin(), indices.end());
    }
    instance.values.set_i32(op.indices, std::move(indices));
  }
  return instance;
}

}  // namespace tilesim::workloads
