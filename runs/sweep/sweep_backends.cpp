#include "runs/sweep/sweep_backends.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/host_info.hpp"

namespace tilesim::runs::sweep {

void apply_command_line(analysis::SweepSpec& spec, const std::optional<std::string>& backends_list, bool verify) {
  if (backends_list) {
    // --backends replaces the file's list: every backend on the full grid.
    std::vector<analysis::SweepBackend> replaced;
    for (const std::string& item : backends::split_backend_list(*backends_list)) {
      analysis::SweepBackend b;
      b.name = item;
      b.json_path = "--backends";
      b.num_inputs = spec.num_inputs;
      b.num_features = spec.num_features;
      b.num_outputs = spec.num_outputs;
      replaced.push_back(b);
    }
    spec.backends = replaced;
  }
  if (verify) spec.ipu_verify = true;
}

namespace {

// The family's parse of one name, its error restated with the sweep file and JSON path (the sweep
// file's parser knows no machines).
backends::BackendSpec parse_sweep_backend(const analysis::SweepSpec& spec, const analysis::SweepBackend& b) {
  try {
    return backends::parse_backend_list(b.name).front();
  } catch (const InputError& e) {
    const std::string why = e.what();
    const auto found = why.find(", found ");
    const std::string detail = found == std::string::npos ? "" : why.substr(found + 8);
    throw InputError(b.json_path == "--backends" ? "" : spec.file, b.json_path,
                     "a backend name: ipu, ipu:MACHINE, cpu, gpu-model:MACHINE[:eager|:kernel]",
                     "\"" + b.name + "\"" + (detail.empty() || detail == "\"" + b.name + "\"" ? "" : " (" + detail + ")"));
  }
}

}  // namespace

std::vector<SweepBackendRun> resolve_backends(analysis::SweepSpec& spec) {
  std::vector<SweepBackendRun> backends;
  std::set<std::string> names;
  for (auto& b : spec.backends) {
    SweepBackendRun run;
    run.spec = parse_sweep_backend(spec, b);
    run.name = run.spec.name();
    if (!names.insert(run.name).second)
      throw InputError(b.json_path == "--backends" ? "" : spec.file, b.json_path, "each backend once",
                       "\"" + run.name + "\" twice");
    b.name = run.name;
    const backends::FamilyInfo& family = run.spec.descriptor->info();
    // Real kernels (cpu, torch-cpu, cuda) are timed: they run in the parent, alone.
    run.measured = family.kind == ResultKind::measured;
    run.timing.timing_only = family.timing_only_applies && !spec.ipu_verify;
    run.timing.warmup = spec.cpu_warmup;
    run.timing.timed_calls = spec.cpu_timed_calls;
    try {
      run.backend = backends::make_backend(run.spec);
    } catch (const InputError& e) {
      // An error without a place (an unknown shipped machine, "ipu:bowx") gets the backend's.
      if (!e.file().empty() || !e.json_path().empty()) throw;
      throw InputError(b.json_path == "--backends" ? "" : spec.file, b.json_path, "a usable backend",
                       "\"" + b.name + "\" (" + e.what() + ")");
    }
    // Once per backend: every row carries it, and a what-if machine's differs from its base's.
    const nlohmann::json provenance = run.backend->machine_provenance();
    if (provenance.is_object()) run.machine_hash = provenance.value("content_hash", std::string());
    backends.push_back(std::move(run));
  }
  return backends;
}

void check_dtypes(const analysis::SweepSpec& spec, const std::vector<SweepBackendRun>& backends, const std::string& file) {
  for (const auto& b : backends) {
    const auto& allowed = b.spec.descriptor->info().value_dtypes;
    for (std::size_t i = 0; i < spec.dtypes.size(); ++i) {
      if (std::find(allowed.begin(), allowed.end(), spec.dtypes[i]) != allowed.end()) continue;
      std::string names;
      for (const auto& d : allowed) names += (names.empty() ? "\"" : ", \"") + d + "\"";
      throw InputError(file, "dtypes[" + std::to_string(i) + "]",
                       "dtypes every backend of the sweep models (" + b.name + ": " + names + ")",
                       "\"" + spec.dtypes[i] + "\" with backend " + b.name);
    }
  }
}

void check_host_memory(const analysis::SweepSpec& spec, const std::vector<SweepBackendRun>& backends) {
  bool needs_values = false;
  for (const auto& b : backends) needs_values = needs_values || (b.spec.descriptor->info().reads_input_values && !b.timing.timing_only);
  if (!needs_values) return;
  const double half = static_cast<double>(host_input_memory_bytes());
  const double in = static_cast<double>(spec.num_inputs.back()), f = static_cast<double>(spec.num_features.back()),
               out = static_cast<double>(spec.num_outputs.back());
  double bytes = 4 * (in * f + std::max(in, out) + out * f);
  // A schnet_block point also holds per edge 50 Gaussians and about six filter-wide tensors.
  if (std::find(spec.ops.begin(), spec.ops.end(), "schnet_block") != spec.ops.end())
    bytes = std::max(bytes, 4 * (out * (50 + 6 * f) + 6 * in * f + 2 * out));
  if (half > 0 && bytes > half)
    throw InputError(spec.file, "sizes", "points whose tensors fit in half of this host's memory (" +
                                             std::to_string(static_cast<long long>(half / (1 << 20))) + " MiB)",
                     "a largest point of " + std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB");
}

}  // namespace tilesim::runs::sweep
