#pragma once
// Closed forms of the all-reduce (sum) of gradients over a hierarchy of links: devices inside a machine
// (IPUs of a Bow-2000, GPUs of a DGX node) joined by one level of links, machines joined by another
// (gateway links, InfiniBand, a CPU cluster's fabric). Pure functions of bytes, ranks and link figures,
// in the bandwidth-plus-latency (alpha-beta) form; docs/workload-format.md ("parallel") states them.
#include <cstdint>

#include "ir/parallelism.hpp"

namespace tilesim::system {

// One level of links as a device sees it: its bandwidth in each direction (a ring step sends and
// receives at once) and the latency of one step over it.
struct LinkLevel {
  double bytes_per_s = 0;
  double latency_s = 0;
};

// `machines` machines of `ranks_per_machine` ranks each; `inside` joins the ranks of one machine and
// `between` the machines (its bandwidth per rank: a node's network bandwidth over its ranks).
struct LinkHierarchy {
  std::int64_t ranks_per_machine = 1;
  std::int64_t machines = 1;
  LinkLevel inside;
  LinkLevel between;
  std::int64_t ranks() const { return ranks_per_machine * machines; }
};

// Reduce-scatter (or all-gather) of `bytes` per rank over a ring of `ranks`: R - 1 steps, each moving
// bytes / R over every link at once: (R - 1) / R x bytes / bandwidth + (R - 1) x latency. One rank: 0.
double ring_reduce_scatter_s(double bytes, std::int64_t ranks, const LinkLevel& link);

// Ring all-reduce: a reduce-scatter then an all-gather, 2 (R - 1) / R x bytes / bandwidth + 2 (R - 1) x latency.
double ring_allreduce_s(double bytes, std::int64_t ranks, const LinkLevel& link);

// One ring over every rank of the hierarchy: each of its steps waits for its slowest link, so across
// machines it runs at the slower level's bandwidth and the longer level's latency.
double flat_ring_allreduce_s(double bytes, const LinkHierarchy& links);

// Hierarchical (Graphcore's GCL form, NCCL's tree-free two-level form): with k ranks per machine and m
// machines, a reduce-scatter inside each machine leaves each rank 1/k of the sum, the k shards are
// all-reduced across machines by k rings in parallel (each rank over its own share of the machine's
// links), and an all-gather inside each machine spreads them back:
//   (k-1)/k x B / bw_in + (k-1) lat_in  +  2 (m-1)/m x (B/k) / bw_between + 2 (m-1) lat_between
//   + (k-1)/k x B / bw_in + (k-1) lat_in.
// One machine: the ring inside it.
double hierarchical_allreduce_s(double bytes, const LinkHierarchy& links);

// The algorithm a workload's "parallel.allreduce" names.
double allreduce_s(AllreduceAlgorithm algorithm, double bytes, const LinkHierarchy& links);

}  // namespace tilesim::system
