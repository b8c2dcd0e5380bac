#pragma once
// The backends of a sweep, resolved once: each name checked (with the sweep file and JSON path in the
// message), its machine file read and the backend made before any point runs.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "workloads/sweep_spec.hpp"

namespace tilesim::runs::sweep {

struct SweepBackendRun {
  backends::BackendSpec spec;
  std::string name;  // canonical: "ipu:bow", "gpu-model:a100-40gb:eager", "cpu"
  std::unique_ptr<Backend> backend;
  bool measured = false;            // real kernels (cpu, torch-cpu, cuda): run alone, in the parent
  backends::TimingSettings timing;  // timing-only or functional; warm-up and timed calls
  std::string machine_hash;         // its resolved machine's content hash ("" without a machine file), per row
  // The last timing-only op point this process ran on it, whose graph a point of the same op, shape and
  // dtype shares (RunOptions::same_graph_as_last_run); empty after any other kind of run.
  std::optional<analysis::SweepPoint> last_timing_point;
};

// The command line's say over the sweep file: --backends replaces its list (every backend on the full
// grid), --verify makes simulated runs functional.
void apply_command_line(analysis::SweepSpec& spec, const std::optional<std::string>& backends_list, bool verify);

// The sweep's backends, in its order; each spec.backends[i].name becomes the canonical name. Throws
// InputError for a name no family takes or a backend named twice.
std::vector<SweepBackendRun> resolve_backends(analysis::SweepSpec& spec);

// Values are generated only for backends that read them; the largest point's tensors must then fit in
// half of the host's memory (as for workloads, docs/workload-format.md). Throws InputError otherwise.
void check_host_memory(const analysis::SweepSpec& spec, const std::vector<SweepBackendRun>& backends);
// Throws InputError naming `file` and dtypes[i] when a dtype of the sweep is one a backend does not
// model (FamilyInfo::value_dtypes), before any point runs.
void check_dtypes(const analysis::SweepSpec& spec, const std::vector<SweepBackendRun>& backends, const std::string& file);

}  // namespace tilesim::runs::sweep
