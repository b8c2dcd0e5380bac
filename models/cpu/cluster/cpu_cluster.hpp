#pragma once
// A CPU cluster as a machine file describes it (models/cpu/machines/spr-cluster.json): some number of
// identical nodes, each a modeled CPU node (a `cpu-model` backend machine such as spr-2s), joined by a
// network fabric. The figures say what a scale-out step costs between nodes; what happens inside a node
// is the node backend's business. Format: models/cpu/README.md, "CPU clusters".
#include <cstdint>
#include <string>

#include "common/machine_provenance.hpp"

namespace tilesim::cpu_model {

// The network between nodes, per node: what one node can inject into (and take out of) the fabric, and
// the one-way latency of a message. Each figure is sourced in the machine file.
struct Fabric {
  double bytes_per_s_per_node = 0;
  double latency_s = 0;
};

struct CpuCluster {
  std::string name;
  std::string description;
  std::string file;              // path it was read from
  std::int32_t num_nodes = 0;
  std::string node_backend;      // the backend a node runs as, e.g. "cpu-model:spr-2s"
  Fabric fabric;
  MachineProvenance provenance;  // the cluster file's figures with their sources (the node's are the node's)
};

// Reads a cluster file: "spr-cluster" (a name without '/' and ".json") is looked up in the shipped
// machine directory (models/cpu/machines/, or $TILESIM_CPU_MACHINE_DIR), anything else is a path.
// Strict: an unknown key, a bare number where a sourced figure belongs, a missing source or a
// value out of range (nodes below 1, a bandwidth not positive) throws tilesim::InputError naming the
// file and the JSON path; so does a "node" that is not a readable node file.
CpuCluster load_cpu_cluster(const std::string& name_or_path);

// True when the named machine file (shipped name or path) is a cluster file (its root has "cluster"), so
// that a `cpu-model:NAME` backend can tell a cluster from a node before reading it strictly; false for
// anything else, a file that cannot be read included (the node reader then says what is wrong).
bool is_cpu_cluster_file(const std::string& name_or_path);

}  // namespace tilesim::cpu_model
