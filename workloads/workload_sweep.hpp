#pragma once
// A workload sweep file (docs/sweep-format.md, "Workload sweeps"): a base workload (a file, or an
// object inline) and axes over any of its fields by JSON path ("model[*].out", "graph.num_nodes",
// "loader.batch_size", "parallel.replicas", "dtype", "train.optimizer.lr"), crossed or zipped. Each
// point's workload is the base document with the point's values set at the axes' paths, read by the
// workload reader itself (workloads::parse_workload), so a point is exactly the workload file a user
// could write and run with `tilesim run`. "batch_sizes" is the shorthand for an axis over the loader's
// batch size (the batch-size sweeps that came first). Knows no backend: runs/sweep/ runs the points.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/json_path.hpp"
#include "workloads/workload.hpp"

namespace tilesim::workloads {

// At most this many values per axis and points per sweep: each point is a whole workload run (seconds
// on the simulated IPU), and every point is read before the first runs.
inline constexpr std::size_t max_workload_axis_values = 10000;
inline constexpr std::size_t max_workload_sweep_points = 100000;

struct WorkloadAxis {
  std::string name;                   // the path as written; results.csv's column
  JsonPath path;
  std::vector<nlohmann::json> values;
  // "batch_sizes": the loader's batch knob (workloads/loaders/loader_knob.hpp) at each value, as
  // `tilesim fit` varies it (a cluster loader's clusters_per_batch, a packed loader's fixed size with
  // its edges and graphs in proportion), named by the knob's path ("loader.batch_size").
  bool batch_knob = false;
};

struct WorkloadSweepSpec {
  std::string file;                   // the sweep file
  std::string name, description;
  nlohmann::json workload;            // the base workload's document, as written
  std::string workload_file;          // the file it was read from; the sweep file for an inline workload
  bool inline_workload = false;
  std::vector<std::int64_t> batch_sizes;  // the shorthand as given (also an axis below)
  // In the order points vary: by name (alphabetical, as the sweep file's object holds them), the last
  // dimension fastest; a zip group is one dimension, placed at its first axis.
  std::vector<WorkloadAxis> axes;
  std::vector<std::vector<std::size_t>> dimensions;  // indices into `axes`: one axis, or a zip group
  std::vector<std::vector<std::string>> zip;         // as given
  std::vector<std::string> backends;
  std::optional<std::int64_t> batches;
  bool ipu_verify = false;
  int cpu_warmup = 1, cpu_timed_calls = 3;

  std::size_t points() const;
  // The value each axis takes at `point` (0-based, in sweep order): an index into its values.
  std::vector<std::size_t> value_indices(std::size_t point) const;
};

// Whether a sweep document is a workload sweep (it names a "workload") rather than an op sweep.
bool is_workload_sweep(const nlohmann::json& document);

// Parses and checks the sweep file's document. Throws InputError naming `file` and the JSON path for
// anything malformed, an axis path that is not a path into the base workload (every part of it there
// but the last key), an empty axis, a value twice, a zip of unknown or unequal axes, too many points.
// The points themselves are read by point_workload().
WorkloadSweepSpec parse_workload_sweep(const nlohmann::json& document, const std::string& file);

// Point `point`'s workload document and the workload the reader makes of it. Throws InputError
// "SWEEP: point 3 of 6 (model[*].out=64, name=\"gcn3\"): <the workload reader's message>".
struct WorkloadPoint {
  nlohmann::json document;
  Workload workload;
};
WorkloadPoint point_workload(const WorkloadSweepSpec& spec, std::size_t point);

// "point 3 of 6 (model[*].out=64, name=\"gcn3\")": what messages name a point by (values shortened).
std::string point_label(const WorkloadSweepSpec& spec, std::size_t point);

// An axis value as results.csv's cell holds it: a string as itself, any other value as compact JSON.
std::string axis_cell(const nlohmann::json& value);

// The resolved sweep, as sweep.json echoes it.
nlohmann::json to_json(const WorkloadSweepSpec& spec);

}  // namespace tilesim::workloads
