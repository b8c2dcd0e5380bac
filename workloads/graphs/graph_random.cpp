#include "workloads/graphs/graph_random.hpp"

#include "workloads/random_streams.hpp"

namespace tilesim::workloads::graphs {

std::mt19937_64 graph_engine(std::uint64_t seed, std::uint64_t stream) {
  return std::mt19937_64(streams::mix64(seed ^ streams::mix64(stream)));
}

}  // namespace tilesim::workloads::graphs
