#pragma once
// The deterministic random streams of generated workloads and graphs (scheme in
// docs/workload-format.md, "Generated values"). Written out rather than taken from <random>'s distributions, whose algorithms
// differ between standard libraries: the same seed must give the same values wherever tilesim builds.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tilesim::workloads::streams {

// The SplitMix64 output function: a bijective mixer, so nearby inputs give unrelated seeds.
std::uint64_t mix64(std::uint64_t x);
// FNV-1a of a name, to key a stream by a tensor's name.
std::uint64_t name_hash(const std::string& name);
// The engine of the stream `name` under `seed`: mix64(seed ^ mix64(name_hash(name))).
std::mt19937_64 named_engine(std::uint64_t seed, const std::string& name);

// Uniform in [0, 1) with 53 random bits.
double unit(std::mt19937_64& engine);
// Standard normal float32 values by Marsaglia's polar method.
std::vector<float> standard_normal(std::mt19937_64& engine, std::int64_t count);
// Uniform integers in [0, range) by Lemire's multiply-and-reject on the high 32 bits; range <= 2^31 - 1.
std::vector<std::int32_t> uniform_indices(std::mt19937_64& engine, std::int64_t count, std::int64_t range);
// Uniform floats in [low, high): low + (high - low) * unit, rounded to float.
std::vector<float> uniform_reals(std::mt19937_64& engine, std::int64_t count, double low, double high);

// Values keyed by an item (a node or a graph of a dataset) instead of drawn in sequence, so that the
// same item gets the same values in whichever mini-batch it appears: each value is a SplitMix64 counter
// (mix64 of the stream's base, the key and the value's position), with no engine state to seed.
class KeyedStream {
 public:
  KeyedStream(std::uint64_t seed, const std::string& name);
  // `count` standard normal float32 values of item `key` (Box-Muller on pairs of counters).
  void standard_normal(std::uint64_t key, std::int64_t count, float* out) const;
  // A uniform integer in [0, range) for item `key` (Lemire's multiply-and-reject); range <= 2^31 - 1.
  std::int32_t uniform_index(std::uint64_t key, std::int64_t range) const;

 private:
  std::uint64_t counter(std::uint64_t key, std::uint64_t position) const;
  std::uint64_t base_;
};

}  // namespace tilesim::workloads::streams
