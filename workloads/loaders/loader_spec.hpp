#pragma once
// The "loader" section of a model workload (format in docs/workload-format.md, "Mini-batches"): how the
// training (or inference) steps get their batches, as PyG's loaders make them: sampled neighbourhoods
// (NeighborLoader), METIS clusters (ClusterData + ClusterLoader) or batches of small graphs, padded to
// fixed shapes or packed as PopTorch Geometric does for the IPU. Strictly validated.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/loaders/fixed_size.hpp"
#include "workloads/loaders/graph_dataset.hpp"

namespace tilesim::workloads::loaders {

struct LoaderSpec {
  enum class Kind { neighbor, cluster, graphs };
  // graphs: how batches are formed. pad: batch_size graphs per batch, each batch padded to the fixed
  // size; lpfhp / stream: graphs packed into batches of the fixed size (pack_lpfhp / pack_stream).
  enum class Packing { pad, lpfhp, stream };
  Kind kind = Kind::neighbor;
  std::int64_t batch_size = 0;          // neighbor: seed nodes per batch; graphs with pad: graphs per batch
  std::vector<std::int64_t> fanouts;    // neighbor: per hop; -1 keeps every in-edge
  bool replace = false;                 // neighbor
  bool shuffle = true;
  std::int32_t num_parts = 0;           // cluster
  std::int64_t clusters_per_batch = 1;  // cluster
  std::optional<DatasetSpec> dataset;   // graphs
  Packing packing = Packing::pad;       // graphs
  std::optional<FixedSize> fixed_size;  // the shape fixed-shape backends pad to (default: the largest batch run)
  std::optional<std::int64_t> batches;  // batches to run (default: one epoch)
  // How PopTorch feeds the device (poptorch.Options and poptorch.DataLoader as a published script sets
  // them), priced by a backend's execution model (results/epoch_execution.hpp); the batches are the same.
  std::int64_t device_iterations = 1;   // optimizer steps per host call (Options.deviceIterations)
  bool synthetic_data = false;          // inputs made on the device, none sent (Options.enableSyntheticData)
  bool asynchronous = false;            // the loader makes the next batches while the device runs (DataLoaderMode.Async)
};

std::string to_string(LoaderSpec::Kind kind);
std::string to_string(LoaderSpec::Packing packing);
std::string to_string(DatasetKind kind);

// Parses the object at `json_path` of `file`. Throws tilesim::InputError naming the file, the JSON path,
// what was expected and what was found; unknown keys (including another kind's) are errors.
LoaderSpec parse_loader(const nlohmann::json& object, const std::string& file, const std::string& json_path);

// The resolved section (every default filled in), as echoed in report.json: itself valid input.
nlohmann::json to_json(const LoaderSpec& spec);

// The node feature width of a dataset kind's graphs when the workload gives none (QM9: 11, as PyG's).
std::int64_t dataset_num_features(DatasetKind kind);

}  // namespace tilesim::workloads::loaders
