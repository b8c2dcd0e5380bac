// tilesim sweep on a batch-size sweep file (docs/sweep-format.md, "Batch-size sweeps"): one mini-batch
// workload run at each batch size on each backend, one results.csv row per (batch size, backend) with
// its step times, throughput, padding share, host sampling time and bound, rewritten whole (through a
// temporary file) after every point so that a kill leaves the finished rows. `tilesim plot throughput`
// draws it.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "common/tool_identity.hpp"
#include "runs/minibatch_run.hpp"
#include "runs/sweep/loader_sweep.hpp"
#include "runs/sweep/output_lock.hpp"
#include "runs/sweep/sweep_request.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/loaders/loader_knob.hpp"

namespace tilesim::runs::sweep {

namespace {

namespace fs = std::filesystem;
namespace loaders = workloads::loaders;

struct LoaderSweepSpec {
  std::string name, description, workload_file;
  std::vector<std::int64_t> batch_sizes;
  std::vector<std::string> backends;
  std::optional<std::int64_t> batches;
  bool ipu_verify = false;
  int cpu_warmup = 1, cpu_timed_calls = 3;
};

LoaderSweepSpec parse_loader_sweep(const nlohmann::json& doc, const std::string& file) {
  ObjectReader r(doc, file, "");
  LoaderSweepSpec s;
  s.name = r.string("name");
  s.description = r.string_or("description", "");
  const std::string workload = r.string("workload");
  // Relative to the sweep file, as index files are to their workload.
  s.workload_file = fs::path(workload).is_absolute() ? workload : (fs::path(file).parent_path() / workload).string();
  const nlohmann::json& sizes = r.array("batch_sizes");
  const std::string expected = "a non-empty array of batch sizes, ascending positive integers";
  if (sizes.empty()) throw InputError(file, "batch_sizes", expected, "[]");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const nlohmann::json& v = sizes[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 2147483647 ||
        (!s.batch_sizes.empty() && v.get<std::int64_t>() <= s.batch_sizes.back()))
      throw InputError(file, r.element_path("batch_sizes", i), expected, describe_json(v));
    s.batch_sizes.push_back(v.get<std::int64_t>());
  }
  const nlohmann::json& backends = r.array("backends");
  if (backends.empty()) throw InputError(file, "backends", "a non-empty array of backend names", "[]");
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (!backends[i].is_string()) throw InputError(file, r.element_path("backends", i), "a backend name", describe_json(backends[i]));
    s.backends.push_back(backends[i].get<std::string>());
  }
  if (r.has("batches")) s.batches = r.integer("batches", 1, limits::max_steps);
  if (r.has("ipu")) {
    ObjectReader ipu = r.object("ipu");
    if (ipu.has("verify")) s.ipu_verify = ipu.boolean("verify");
    ipu.ignore("verify");
    ipu.finish();
  }
  if (r.has("cpu")) {
    ObjectReader cpu = r.object("cpu");
    s.cpu_warmup = static_cast<int>(cpu.integer_or("warmup", 0, limits::max_warmup_calls, s.cpu_warmup));
    s.cpu_timed_calls = static_cast<int>(cpu.integer_or("timed_calls", 1, limits::max_timed_calls, s.cpu_timed_calls));
    cpu.finish();
  }
  for (const char* key : {"description", "batches", "ipu", "cpu"}) r.ignore(key);
  r.finish();
  return s;
}

const char* const csv_header =
    "workload,knob,batch_size,backend,kind,batches,batches_per_epoch,step_min_s,step_median_s,step_max_s,epoch_time_s,"
    "throughput_unit,throughput_per_s,nodes_per_s,edges_per_s,node_padding_share,edge_padding_share,"
    "host_sampling_s_per_batch,bound,peak_tile_bytes,verified,status";

std::string number(double v) {
  std::ostringstream s;
  s << std::setprecision(9) << v;
  return s.str();
}

// The verified cell: yes or no where the backend computed outputs and they were checked; else what the
// family writes for a row it did not check (a model: "modeled"; the IPU timing-only: "timing-only").
std::string verified_text(const backends::BackendSpec& s, const runs::RunRequest& run, const nlohmann::json& m) {
  const auto& info = s.descriptor->info();
  if (!info.reads_input_values || (run.timing_only && info.timing_only_applies)) return info.unchecked_verified;
  return m["all_batches_verified"].get<bool>() ? "yes" : "no";
}

}  // namespace

bool is_loader_sweep(const nlohmann::json& document) { return document.is_object() && document.contains("workload"); }

int loader_sweep_command(const SweepRequest& args, const nlohmann::json& document) {
  if (args.resume) throw InputError("", "--resume", "no --resume for a batch-size sweep (it reruns; use --overwrite)", "--resume");
  if (args.jobs != 1) throw InputError("", "--jobs", "1 for a batch-size sweep (its points run one after another)", std::to_string(args.jobs));
  LoaderSweepSpec spec = parse_loader_sweep(document, args.sweep);
  if (args.verify) spec.ipu_verify = true;
  const workloads::Workload workload = workloads::load_workload(spec.workload_file);
  if (!workload.model || !workload.model->loader)
    throw InputError(spec.workload_file, "loader", "a workload with a \"loader\" (the sweep varies its batch size)", "none");
  // The file's backends, or --backends in their place, through the one backend-list parser.
  std::string list = args.backends.value_or("");
  if (!args.backends)
    for (const std::string& name : spec.backends) list += (list.empty() ? "" : ",") + name;
  const std::vector<backends::BackendSpec> specs = backends::parse_backend_list(list);
  spec.backends.clear();
  for (const auto& s : specs) spec.backends.push_back(s.name());

  const std::string out_dir = args.out_dir.empty() ? "out/" + spec.name : args.out_dir;
  create_output_directory(out_dir, "a directory the results can be written to (--out)");
  const std::string csv_path = (fs::path(out_dir) / "results.csv").string();
  const sweep::OutputLock lock(out_dir, "tilesim sweep " + args.sweep);
  if (fs::exists(csv_path) && !args.overwrite)
    throw InputError(csv_path, "", "no results.csv in --out yet, or --overwrite to replace it", "one already there");

  nlohmann::json echo{{"name", spec.name},
                      {"description", spec.description},
                      {"workload", workloads::to_json(workload)},
                      {"batch_sizes", spec.batch_sizes},
                      {"backends", spec.backends},
                      {"ipu", {{"verify", spec.ipu_verify}}},
                      {"cpu", {{"warmup", spec.cpu_warmup}, {"timed_calls", spec.cpu_timed_calls}}},
                      {"tool", tool_identity()}};
  if (spec.batches) echo["batches"] = *spec.batches;
  write_file_atomically((fs::path(out_dir) / "sweep.json").string(), echo.dump(2) + "\n");

  std::cerr << "tilesim: building the loader's graph ..." << std::endl;
  const loaders::BatchSource base(workload);
  const loaders::BatchKnob knob = loaders::batch_knob(*workload.model->loader);
  std::cout << "batch-size sweep " << spec.name << ": " << workload.name << ", " << knob.name << " in {";
  for (std::size_t i = 0; i < spec.batch_sizes.size(); ++i) std::cout << (i ? ", " : "") << spec.batch_sizes[i];
  std::cout << "} on " << specs.size() << " backend" << (specs.size() == 1 ? "" : "s") << "; rows to " << csv_path << std::endl;

  std::string csv = std::string(csv_header) + "\n";
  write_file_atomically(csv_path, csv);
  int failures = 0;
  for (const std::int64_t size : spec.batch_sizes) {
    workloads::Workload w = workload;
    *w.model->loader = loaders::with_batch_knob(*workload.model->loader, size);
    const loaders::BatchSource source(base, w);
    for (const auto& s : specs) {
      runs::RunRequest run;
      run.workload = w;
      run.backends = {s};
      run.backends_text = s.name();
      run.progress = false;
      run.batches = spec.batches;
      run.timing_only = !spec.ipu_verify;
      run.warmup = spec.cpu_warmup;
      run.repeats = spec.cpu_timed_calls;
      std::vector<std::unique_ptr<Backend>> one;
      one.push_back(backends::make_backend(s));
      std::ostringstream row;
      row << workload.name << "," << knob.name << "," << size << "," << s.name() << "," << to_string(s.descriptor->info().kind) << ",";
      std::string status = "ok";
      try {
        const runs::MiniBatchOutcome out = runs::run_batches(run, one, source);
        const nlohmann::json& m = out.report["results"][0]["minibatch"];
        const nlohmann::json& loader = out.report["loader"];
        const double per_batch = loader["sampling_s"]["total"].get<double>() / m["batches"].get<double>();
        row << m["batches"] << "," << loader["batches_per_epoch"] << "," << number(m["step_time_s"]["min"]) << ","
            << number(m["step_time_s"]["median"]) << "," << number(m["step_time_s"]["max"]) << "," << number(m["epoch_time_s"]) << ","
            << m["throughput"]["unit"].get<std::string>() << "," << number(m["throughput"]["value"]) << ","
            << number(m["throughput"]["nodes_per_s"]) << "," << number(m["throughput"]["edges_per_s"]) << ","
            << number(m["padding"]["node_share"]) << "," << number(m["padding"]["edge_share"]) << "," << number(per_batch) << ","
            << m["host_vs_device"]["bound"].get<std::string>() << ","
            << (m.contains("peak_tile_bytes") ? std::to_string(m["peak_tile_bytes"]["bytes"].get<std::int64_t>()) : "") << ","
            << verified_text(s, run, m) << ",";
        if (!out.all_verified && verified_text(s, run, m) == "no") ++failures;
      } catch (const PlanError& e) {
        status = "does_not_fit";
        row << ",,,,,,,,,,,,,,,does-not-fit,";
        std::cerr << "tilesim: " << s.name() << " at " << knob.name << " " << size << ": " << e.what() << std::endl;
      }
      row << status;
      csv += row.str() + "\n";
      write_file_atomically(csv_path, csv);
      std::cout << "  " << knob.name << " " << std::setw(7) << size << "  " << std::left << std::setw(28) << s.name() << std::right
                << status << std::endl;
    }
  }
  std::cout << "results: " << csv_path << "\n";
  return failures == 0 ? 0 : static_cast<int>(ExitCode::internal_error);
}

}  // namespace tilesim::runs::sweep
