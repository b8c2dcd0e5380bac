#pragma once
// Sweep files (format: docs/sweep-format.md): the ops, the values of each size axis (lists or
// ranges), the dtypes, the backends (each optionally on a subset of the grid), the repeats and the
// options of the simulated and measured backends. Strictly validated: an unknown key, a wrong type or
// an impossible value is a tilesim::InputError naming the file, the JSON path, what was expected and
// what was found. Knows nothing of machines: backend names are checked by the caller.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/defaults.hpp"
#include "ir/op_graph.hpp"

namespace tilesim::analysis {

struct SweepBackend {
  std::string name;       // as written: "ipu:bow", "gpu-model:a100-40gb:eager", "cpu"
  std::string json_path;  // "backends[2]" (or "backends[2].backend"), for the caller's messages
  // The subset of the grid this backend runs; each axis a subset of the sweep's values (all when the
  // sweep file gives no "sizes" for the backend).
  std::vector<std::int64_t> num_inputs, num_features, num_outputs;
  bool subset = false;    // true when the backend runs fewer points than the full grid
};

struct SweepSpec {
  std::string file;
  std::string name;
  std::string description;
  std::vector<std::string> ops;        // "gather", "scatter_add", "schnet_block"
  std::vector<std::string> dtypes;     // "float32", "float16", "bfloat16"
  std::vector<std::int64_t> num_inputs, num_features, num_outputs;  // ascending, distinct
  std::vector<SweepBackend> backends;
  int repeats = 1;
  std::uint64_t seed = 0;
  std::string indices = "uniform";     // "uniform" or "sorted"
  bool ipu_verify = false;             // simulated IPU: functional runs (outputs checked) instead of timing-only
  int cpu_warmup = defaults::warmup_calls;     // measured CPU: untimed calls per point
  int cpu_timed_calls = defaults::timed_calls;  // measured CPU: timed calls per point (the median is the row's time)
};

struct SweepPoint {
  std::string op;
  OpShape shape;
  std::string dtype;
  std::size_t backend = 0;  // index into SweepSpec::backends
  int repeat = 0;
};

SweepSpec parse_sweep(const nlohmann::json& document, const std::string& file);
SweepSpec load_sweep(const std::string& path);

// Every point, backend by backend (in the file's order), then op, dtype, num_inputs, num_features,
// num_outputs, repeat: the order of the hydronet CSVs within each backend. Stored: for small sweeps and
// tests; a sweep run reads them through SweepPoints (sweep_points.hpp), which stores none.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec);

// The seed of a point's indices, as a one-op workload seed (docs/workload-format.md, "Generated
// values"): (point_index_seed(shape) + seed + 1000003 * repeat) mod 2^63, so repeat 0 of a sweep with
// seed 0 draws exactly the indices `tilesim validate` gives the same point.
std::uint64_t sweep_index_seed(const OpShape& shape, std::uint64_t seed, int repeat);

// The resolved sweep (every default filled in), as written beside results.csv.
nlohmann::json to_json(const SweepSpec& spec);

}  // namespace tilesim::analysis
