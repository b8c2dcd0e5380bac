#include "models/system/allreduce.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::system {

namespace {

void check(double bytes, std::int64_t ranks, const LinkLevel& link) {
  if (!(bytes >= 0) || ranks < 1) throw std::invalid_argument("all-reduce: bytes >= 0 and ranks >= 1 expected");
  if (ranks > 1 && !(link.bytes_per_s > 0)) throw std::invalid_argument("all-reduce: a link with a positive bandwidth expected");
}

}  // namespace

double ring_reduce_scatter_s(double bytes, std::int64_t ranks, const LinkLevel& link) {
  check(bytes, ranks, link);
  if (ranks == 1) return 0;
  const double r = static_cast<double>(ranks);
  return (r - 1) / r * bytes / link.bytes_per_s + (r - 1) * link.latency_s;
}

double ring_allreduce_s(double bytes, std::int64_t ranks, const LinkLevel& link) { return 2 * ring_reduce_scatter_s(bytes, ranks, link); }

double flat_ring_allreduce_s(double bytes, const LinkHierarchy& links) {
  if (links.machines <= 1) return ring_allreduce_s(bytes, links.ranks(), links.inside);
  // Ranks of one machine alone cross no slower link.
  const LinkLevel slowest{std::min(links.inside.bytes_per_s, links.between.bytes_per_s),
                          std::max(links.inside.latency_s, links.between.latency_s)};
  return ring_allreduce_s(bytes, links.ranks(), links.ranks_per_machine == 1 ? links.between : slowest);
}

double hierarchical_allreduce_s(double bytes, const LinkHierarchy& links) {
  const std::int64_t k = links.ranks_per_machine;
  const double inside = ring_reduce_scatter_s(bytes, k, links.inside);
  const double across = ring_allreduce_s(bytes / static_cast<double>(k), links.machines, links.between);
  return inside + across + inside;  // reduce-scatter, all-reduce of the shards, all-gather
}

double allreduce_s(AllreduceAlgorithm algorithm, double bytes, const LinkHierarchy& links) {
  switch (algorithm) {
    case AllreduceAlgorithm::ring: return flat_ring_allreduce_s(bytes, links);
    case AllreduceAlgorithm::hierarchical: return hierarchical_allreduce_s(bytes, links);
  }
  throw std::logic_error("allreduce_s: unknown algorithm");
}

}  // namespace tilesim::system
