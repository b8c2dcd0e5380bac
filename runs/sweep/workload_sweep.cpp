// tilesim sweep on a workload sweep file (docs/sweep-format.md, "Workload sweeps"): the base workload
// with the axes' values set, point by point, each point run on every backend, one results.csv row per
// (point, backend) with one column per axis. Every point is read by the workload reader and checked
// against the backends before the first runs, so a bad value late in the sweep costs no run. Each row
// is appended in one write as it finishes (results_file.hpp), so a kill leaves the finished rows.
#include "runs/sweep/workload_sweep.hpp"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>

#include "analysis/results_table.hpp"
#include "backends/registry.hpp"
#include "backends/system_view.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/tool_identity.hpp"
#include "results/workload_sweep_columns.hpp"
#include "runs/sweep/output_lock.hpp"
#include "runs/sweep/results_file.hpp"
#include "runs/sweep/sweep_machines.hpp"
#include "runs/sweep/workload_point_run.hpp"
#include "workloads/workload_sweep.hpp"

namespace tilesim::runs::sweep {

namespace {

namespace fs = std::filesystem;
using workloads::WorkloadSweepSpec;

// What `run` cannot learn before a point runs on a backend: a training step on a family that runs
// forward passes only, a parallel section on a backend without a system or with fewer devices. Asked
// here of every point so that such a point is refused before the first one runs. `devices`: each
// backend's system size, looked up once.
void check_point_on_backends(const WorkloadSweepSpec& spec, std::size_t point, const workloads::Workload& w,
                             const std::vector<backends::BackendSpec>& specs, std::map<std::string, std::int64_t>& devices) {
  for (const backends::BackendSpec& s : specs) {
    if (w.model && w.model->train && !s.descriptor->info().runs_training_steps)
      throw InputError(spec.file, workloads::point_label(spec, point) + ": backends",
                       "backends that run training steps, for a workload with a \"train\" section (`tilesim backends` says which)",
                       s.name());
    if (!w.parallel) continue;
    auto it = devices.find(s.name());
    if (it == devices.end()) {
      try {
        it = devices.emplace(s.name(), backends::system_view(s)->devices()).first;
      } catch (const InputError& e) {
        throw InputError(spec.file + ": " + workloads::point_label(spec, point) + ": " + e.what());
      }
    }
    if (w.parallel->devices() > it->second)
      throw InputError(spec.file, workloads::point_label(spec, point) + ": parallel",
                       "at most " + std::to_string(it->second) + " devices (replicas x stages x partitions) on " + s.name(),
                       std::to_string(w.parallel->devices()));
  }
}

// Every point read by the workload reader and checked against every backend: nothing has run yet.
void check_every_workload_point(const WorkloadSweepSpec& spec, const std::vector<backends::BackendSpec>& specs) {
  std::map<std::string, std::int64_t> devices;
  for (std::size_t i = 0; i < spec.points(); ++i)
    check_point_on_backends(spec, i, workloads::point_workload(spec, i).workload, specs, devices);
}

// Each backend's machine content hash (what-if machines hash apart from their base), "" for a
// measured backend, with every resolved machine in machines.json beside results.csv, as an op sweep
// writes it; making each backend once here also reads its machine file before any point runs.
std::map<std::string, std::string> record_backend_machines(const std::vector<backends::BackendSpec>& specs, const std::string& out_dir) {
  std::map<std::string, std::string> hashes;
  std::vector<std::unique_ptr<Backend>> made;
  for (const backends::BackendSpec& s : specs) {
    made.push_back(backends::make_backend(s));
    const nlohmann::json provenance = made.back()->machine_provenance();
    hashes[s.name()] = provenance.is_object() ? provenance.value("content_hash", std::string()) : std::string();
  }
  std::vector<const Backend*> listed;
  for (const auto& b : made) listed.push_back(b.get());
  write_sweep_machines(out_dir, listed);
  return hashes;
}

std::vector<std::string> workload_csv_columns(const WorkloadSweepSpec& spec) {
  std::vector<std::string> columns = workload_sweep_leading_columns();
  for (const workloads::WorkloadAxis& a : spec.axes) columns.push_back(a.name);
  columns.push_back(workload_sweep_status_column());
  return columns;
}

std::string workload_csv_line(const std::vector<std::string>& columns, const SweepCells& cells) {
  std::string line;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const auto it = cells.find(columns[i]);
    line += (i ? "," : "") + analysis::csv_field(it == cells.end() ? std::string() : it->second);
  }
  return line + "\n";
}

// The plan, on stdout: the base workload, the axes with their value counts, the backends.
void print_workload_plan(const WorkloadSweepSpec& spec, const std::vector<backends::BackendSpec>& specs, const std::string& csv_path) {
  const std::string base = spec.workload.is_object() && spec.workload.contains("name") && spec.workload["name"].is_string()
                               ? spec.workload["name"].get<std::string>() : std::string("?");
  std::cout << "workload sweep " << spec.name << ": " << base << ", " << spec.points() << " point" << (spec.points() == 1 ? "" : "s") << " (";
  for (std::size_t d = 0; d < spec.dimensions.size(); ++d) {
    std::cout << (d ? " x " : "");
    for (std::size_t k = 0; k < spec.dimensions[d].size(); ++k) {
      const workloads::WorkloadAxis& a = spec.axes[spec.dimensions[d][k]];
      std::cout << (k ? " with " : "") << a.name << " {";
      for (std::size_t v = 0; v < a.values.size() && v < 8; ++v) {
        std::string text = workloads::axis_cell(a.values[v]);
        if (text.size() > 24) text = text.substr(0, 21) + "...";  // a whole "model" array would fill the line
        std::cout << (v ? ", " : "") << text;
      }
      std::cout << (a.values.size() > 8 ? ", ..." : "") << "}";
    }
  }
  std::cout << ") on " << specs.size() << " backend" << (specs.size() == 1 ? "" : "s") << "; rows to " << csv_path << std::endl;
}

// The rows: every point on every backend, each row appended to results.csv as it finishes (one write,
// so a kill leaves whole rows). Returns the failures.
int run_every_workload_point(const WorkloadSweepSpec& spec, const std::vector<backends::BackendSpec>& specs, const std::string& csv_path) {
  const std::vector<std::string> columns = workload_csv_columns(spec);
  const std::map<std::string, std::string> hashes = record_backend_machines(specs, fs::path(csv_path).parent_path().string());
  WorkloadPointOptions options;
  options.batches = spec.batches;
  options.timing_only = !spec.ipu_verify;
  options.warmup = spec.cpu_warmup;
  options.repeats = spec.cpu_timed_calls;
  LoaderSources sources;
  ResultsFile csv(csv_path);
  csv.start_new(workload_csv_line(columns, [&] {
    SweepCells header;
    for (const std::string& c : columns) header[c] = c;
    return header;
  }()));
  int failures = 0;
  for (std::size_t i = 0; i < spec.points(); ++i) {
    const workloads::WorkloadPoint point = workloads::point_workload(spec, i);
    const std::vector<std::size_t> at = spec.value_indices(i);
    for (const backends::BackendSpec& s : specs) {
      const auto start = std::chrono::steady_clock::now();
      PointOutcome out;
      try {
        out = run_workload_point(point, s, options, sources);
      } catch (const InputError& e) {
        // Input only a run finds out (a loader's parts against its graph): said with the point.
        throw InputError(spec.file + ": " + workloads::point_label(spec, i) + " on " + s.name() + ": " + e.what());
      }
      SweepCells& c = out.cells;
      c["workload"] = point.workload.name;
      c["backend"] = s.name();
      c["kind"] = to_string(s.descriptor->info().kind);
      c["point"] = std::to_string(i);
      c["machine_hash"] = hashes.at(s.name());
      c["wall_s"] = sweep_number(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      for (std::size_t a = 0; a < spec.axes.size(); ++a) c[spec.axes[a].name] = workloads::axis_cell(spec.axes[a].values[at[a]]);
      c[workload_sweep_status_column()] = out.does_not_fit ? "does_not_fit" : "ok";
      if (out.does_not_fit) std::cerr << "tilesim: " << s.name() << " at " << workloads::point_label(spec, i) << ": " << out.message << std::endl;
      failures += out.failed_verification ? 1 : 0;
      csv.append(workload_csv_line(columns, c));
      std::cout << "  " << std::setw(6) << i + 1 << "/" << spec.points() << "  " << std::left << std::setw(28) << s.name() << " " << std::right
                << c[workload_sweep_status_column()] << std::endl;
    }
  }
  return failures;
}

}  // namespace

bool is_workload_sweep(const nlohmann::json& document) { return workloads::is_workload_sweep(document); }

int workload_sweep_command(const SweepRequest& args, const nlohmann::json& document) {
  if (args.resume) throw InputError("", "--resume", "no --resume for a workload sweep (it reruns; use --overwrite)", "--resume");
  if (args.jobs > 1)
    throw InputError("", "--jobs", "1 for a workload sweep (its points run one after another)", std::to_string(args.jobs));
  WorkloadSweepSpec spec = workloads::parse_workload_sweep(document, args.sweep);
  if (args.verify) spec.ipu_verify = true;
  // The file's backends, or --backends in their place, through the one backend-list parser.
  std::string list = args.backends.value_or("");
  if (!args.backends)
    for (const std::string& name : spec.backends) list += (list.empty() ? "" : ",") + name;
  const std::vector<backends::BackendSpec> specs = backends::parse_backend_list(list);
  spec.backends.clear();
  for (const auto& s : specs) spec.backends.push_back(s.name());
  std::cerr << "tilesim: reading the sweep's " << spec.points() << " workload" << (spec.points() == 1 ? "" : "s") << " ..." << std::endl;
  check_every_workload_point(spec, specs);

  const std::string out_dir = args.out_dir.empty() ? "out/" + spec.name : args.out_dir;
  create_output_directory(out_dir, "a directory the results can be written to (--out)");
  const std::string csv_path = (fs::path(out_dir) / "results.csv").string();
  const OutputLock lock(out_dir, "tilesim sweep " + args.sweep);
  if (fs::exists(csv_path) && !args.overwrite)
    throw InputError(csv_path, "", "no results.csv in --out yet, or --overwrite to replace it", "one already there");
  nlohmann::json echo = workloads::to_json(spec);
  echo["tool"] = tool_identity();
  write_file_atomically((fs::path(out_dir) / "sweep.json").string(), echo.dump(2) + "\n");

  print_workload_plan(spec, specs, csv_path);
  const int failures = run_every_workload_point(spec, specs, csv_path);
  std::cout << "results: " << csv_path << "\n";
  return failures == 0 ? 0 : static_cast<int>(ExitCode::internal_error);
}

}  // namespace tilesim::runs::sweep
