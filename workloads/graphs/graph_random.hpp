#pragma once
// Random streams of the graph generators (SplitMix64-keyed mt19937_64 as in workloads/random_streams.hpp,
// Lemire's bounded integers), written out rather than taken from <random>'s distributions, whose
// algorithms differ between standard libraries: the same seed must give the same graph wherever
// tilesim builds. Boost's own generators
// (plod, small world, R-MAT, Erdos-Renyi) use Boost.Random's distributions, which are fixed code too.
#include <cstdint>
#include <random>

namespace tilesim::workloads::graphs {

// The engine of stream `stream` (a generator's purpose, or a chunk number) under `seed`:
// mt19937_64(mix64(seed ^ mix64(stream))). Uniform reals come from streams::unit.
std::mt19937_64 graph_engine(std::uint64_t seed, std::uint64_t stream);

// Uniform in [0, range), range >= 1, by Lemire's multiply-and-reject on 64 bits.
inline std::uint64_t bounded(std::mt19937_64& engine, std::uint64_t range) {
  unsigned __int128 product = static_cast<unsigned __int128>(engine()) * range;
  auto low = static_cast<std::uint64_t>(product);
  if (low < range) {
    const std::uint64_t threshold = (0 - range) % range;
    while (low < threshold) {
      product = static_cast<unsigned __int128>(engine()) * range;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

// Stream numbers, one per purpose, so that changing one option does not move another's draws.
namespace stream {
constexpr std::uint64_t generator = 1;
constexpr std::uint64_t shuffle_edges = 2;
constexpr std::uint64_t relation_types = 3;
constexpr std::uint64_t permutation = 4;
constexpr std::uint64_t chunk_base = 1000;  // parallel generators: chunk c draws from stream chunk_base + c
}  // namespace stream

}  // namespace tilesim::workloads::graphs
