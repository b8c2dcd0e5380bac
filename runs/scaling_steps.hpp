#pragma once
// The device steps of a scaling run (runs/scaling_run.hpp): one device's share of a step, run on the
// per-device backend with the machinery of `tilesim run`: a replica's batch (the loader's next batch, or
// the whole graph again), a pipeline's micro-batches (METIS clusters of the graph), a METIS partition's
// subgraph with its halo. Each step keeps its op graph so the caller can split its rows by stage.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/backend.hpp"
#include "workloads/graphs/halo.hpp"
#include "workloads/loaders/epoch_work.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs {

// One step that ran on the device backend.
struct DeviceStep {
  BackendResult result;
  OpGraph graph;
  workloads::training::TrainingLayout training;
  double items = 0;                    // real work in the throughput's unit (padding excluded)
  std::int64_t nodes = 0, edges = 0;   // real
  std::int64_t host_input_bytes = 0;   // what the host sends for this step (workloads/layers: host_input_bytes)
  bool verified = true;                // every row that was checked passed
};

// Steps of one kind on one backend, and how they stand for the steps they represent.
struct DeviceRuns {
  std::vector<DeviceStep> steps;  // in the order of the batches they stand for
  std::string unit;               // the throughput's unit: "nodes", "graphs" or "seed_nodes"
  std::string how;                // one line: what ran and what stands for what
  // A loader's runs: its epoch (batches and items from the loader's plan of every batch), which the
  // throughput counts rather than the batches that ran.
  std::optional<workloads::loaders::EpochWork> epoch;
};

struct DeviceOptions {
  RunOptions run;
  bool fixed_shapes = false;        // the backend runs programs compiled for one shape (the simulated IPU)
  bool shapes_only = false;         // the backend reads shapes alone (a model): no input values are made
};

// The workload as it is (no loader: the whole graph; with a loader: its first batch) as one step: what
// one device runs without a "parallel" section.
DeviceStep run_whole_step(const workloads::Workload& workload, Backend& device, const DeviceOptions& options);

// `count` batches of the workload's loader (batch k for replica k mod R, micro-step k / R), each as a
// step. A fixed-shape backend runs one program for every batch (all padded to the largest), whose
// simulated time depends on the shape alone: it runs the first batch once and that step stands for all.
DeviceRuns run_loader_batches(const workloads::Workload& workload, Backend& device, std::int64_t count, const DeviceOptions& options);

// A pipeline's micro-batches: the graph cut by METIS into `micro_batches` clusters of about 1/M of the
// nodes each, a micro-batch the subgraph its cluster's nodes induce (as Cluster-GCN cuts them; one
// micro-batch is the whole graph). A fixed-shape backend runs the largest (all padded to it) once.
DeviceRuns run_micro_batches(const workloads::Workload& workload, Backend& device, std::int64_t micro_batches,
                             const DeviceOptions& options);

// The METIS partitions of the workload's graph and each one's halo (workloads/graphs/halo.hpp), and the
// partition with the most edges run as one node's step: its owned nodes, its halo nodes and every in-edge
// of its owned nodes (the halo nodes' own dense work is counted too: a small over-estimate).
struct PartitionRuns {
  std::vector<workloads::graphs::PartitionHalo> parts;
  std::int64_t graph_nodes = 0, graph_edges = 0;
  std::size_t largest = 0;  // the partition that ran
  DeviceRuns runs;
};
PartitionRuns run_largest_partition(const workloads::Workload& workload, Backend& device, std::int64_t partitions,
                                    const DeviceOptions& options);

}  // namespace tilesim::runs
