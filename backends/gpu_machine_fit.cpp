// The GPU model's fit for `tilesim calibrate-model --gpu MACHINE` (backends/machine_fit.hpp): the free
// figures fitted to the calibration half of the measured A100 eager times, the fitted values and the
// errors on both halves as JSON and as the printed table, and, when asked to write, the machine file's
// new text and that of every shipped machine file that carries its fit over (files deriving from
// either inherit them).
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <sstream>

#include "backends/machine_fit.hpp"
#include "common/error.hpp"
#include "fitting/split.hpp"
#include "models/gpu/gpu_fit.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::backends {

namespace {

namespace fs = std::filesystem;

// The measured ops and the GpuOp each file holds, as the hydronet A100 folder names them.
const std::vector<std::pair<const char*, gpu::GpuOp>>& measured_gpu_ops() {
  static const std::vector<std::pair<const char*, gpu::GpuOp>> ops = {{"gather", gpu::GpuOp::gather},
                                                                      {"scatter_add", gpu::GpuOp::scatter_add},
                                                                      {"scatter_max", gpu::GpuOp::scatter_max},
                                                                      {"scatter_min", gpu::GpuOp::scatter_min}};
  return ops;
}

gpu::GpuOp measured_gpu_op(const std::string& name) {
  for (const auto& [file, op] : measured_gpu_ops())
    if (name == file) return op;
  throw InputError("", "", "an op the GPU model is fitted on (gather, scatter_add, scatter_max, scatter_min)", "\"" + name + "\"");
}

std::string shipped_a100_data_dir() { return (fs::path(analysis::validation_data_dir()) / "hydronet-gnn" / "a100").string(); }

bool same_directory(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

// What the fitted figures' sources say they were fitted on.
std::string data_description(const std::string& data_dir) {
  if (same_directory(data_dir, shipped_a100_data_dir())) {
    return "the hydronet-gnn A100 measurements (graphcore-research/hydronet-gnn @ a89c2e4, experiments/a100/; eager "
           "PyTorch 1.13 + torch_scatter)";
  }
  return "the measurements in " + data_dir + " (hydronet CSV format)";
}

std::string fitted_source(const std::string& machine, const std::string& data_dir, std::size_t calibration_points,
                          std::size_t total_points) {
  std::ostringstream s;
  s << "fitted by `tilesim calibrate-model --gpu " << machine << "` on the calibration half (fitting/split.hpp: log2 "
    << "sizes summing to an even number, " << calibration_points << " of " << total_points << " points) of "
    << data_description(data_dir) << " for gather, scatter_add, scatter_max and scatter_min; objective: mean "
    << "|log(predicted/measured)|";
  return s.str();
}

std::string zero_fill_source(const std::string& machine) {
  return "set by `tilesim calibrate-model --gpu " + machine +
         "` equal to the fitted gather (index_select) floor: torch.zeros takes the same path (one ATen op, one "
         "caching-allocator block, one kernel launch) and no hydronet measurement calls it alone (inference)";
}

std::string carried_source(const std::string& from, const std::string& own_source, bool host_floor) {
  return "carried over from the " + from + " fit (" + own_source + "); assumed to hold on this GPU: " +
         (host_floor ? "the same host CPU class and eager PyTorch 1.13 stack (inference)"
                     : "per-SM-cycle rates and shares of the vendor peak transfer across NVIDIA data-centre GPUs (inference)");
}

std::string fixed_text(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string general_text(double v) {
  std::ostringstream s;
  s << std::setprecision(4) << v;
  return s.str();
}

nlohmann::json summary_json(const fitting::ErrorSummary& e) {
  return {{"count", e.count}, {"median_ape_pct", e.median_ape_pct}, {"p90_ape_pct", e.p90_ape_pct}, {"bias_pct", e.bias_pct}};
}

// The GPU machine --gpu names, if it is one whose fitted figures are its own to fit.
gpu::GpuMachine machine_to_fit(const std::string& name) {
  const gpu::GpuMachine machine = gpu::load_gpu_machine(name);
  if (!machine.fit_carried_over_from.empty()) {
    throw InputError(machine.file, "fit_carried_over_from",
                     "a machine whose fitted figures are fitted on its own measurements (calibrate " +
                         machine.fit_carried_over_from + " instead; --write updates this file too)",
                     "\"" + machine.fit_carried_over_from + "\"");
  }
  // A derived file that inherits its fitted figures follows its base's fit (docs/machine-format.md).
  for (const auto& f : gpu::calibration_figures()) {
    const std::string path = std::string(f.section) + "." + f.key;
    const std::string& from = machine.provenance.file_stating(path);
    if (from != machine.file)
      throw InputError(machine.file, path,
                       "a machine that states its fitted figures itself (calibrate its base instead; --write there "
                       "carries over to this file, which inherits them)",
                       "a figure inherited from " + from);
  }
  return machine;
}

// --write: the fitted figures in the machine's file and in every shipped file that carries its fit
// over, each with its source; the new texts in writing order.
std::vector<MachineFileText> fitted_files(const gpu::GpuMachine& machine, const gpu::GpuFitResult& fit,
                                          const std::vector<std::pair<std::string, std::string>>& own_sources) {
  std::vector<MachineFileText> files;
  files.push_back({machine.file, gpu::machine_text_with_calibration(machine.file, fit.calibration, own_sources)});
  const bool shipped = same_directory(fs::path(machine.file).parent_path().string(), gpu::gpu_machine_dir());
  for (const auto& name : shipped ? gpu::shipped_gpu_machines() : std::vector<std::string>{}) {
    const gpu::GpuMachine other = gpu::load_gpu_machine(name);
    // Only files stating the carry-over themselves: one inheriting it follows the file it inherits from.
    if (other.fit_carried_over_from != machine.name || other.provenance.file_stating("fit_carried_over_from") != other.file)
      continue;
    std::vector<std::pair<std::string, std::string>> sources;
    for (std::size_t i = 0; i < own_sources.size(); ++i) {
      const bool host = std::string(gpu::calibration_figures()[i].section) == "eager_host_floor_s";
      sources.emplace_back(own_sources[i].first, carried_source(machine.name, own_sources[i].second, host));
    }
    files.push_back({other.file, gpu::machine_text_with_calibration(other.file, fit.calibration, sources)});
  }
  return files;
}

// What the fit found, as JSON (--json).
nlohmann::json fit_json(const gpu::GpuMachine& machine, const std::string& data_dir, const gpu::GpuFitResult& fit,
                        const std::vector<std::string>& written) {
  nlohmann::json j;
  j["machine"] = machine.name;
  j["machine_file"] = machine.file;
  j["data_dir"] = data_dir;
  j["split"] = fitting::split_rule_text();
  j["objective"] = "mean over ops of mean |log(predicted/measured)|, calibration half, eager mode";
  j["start_objective"] = fit.start_objective;
  j["calibration_objective"] = fit.calibration_objective;
  j["sweeps"] = fit.sweeps;
  j["fitted"] = nlohmann::json::object();
  for (const auto& f : gpu::calibration_figures()) j["fitted"][f.key] = fit.calibration.*(f.member);
  j["errors"] = nlohmann::json::array();
  for (std::size_t i = 0; i < fit.ops.size(); ++i) {
    j["errors"].push_back({{"op", gpu::to_string(fit.ops[i])},
                           {"calibration", summary_json(fit.errors[i].calibration)},
                           {"held_out", summary_json(fit.errors[i].held_out)}});
  }
  j["written"] = written;
  return j;
}

// The fitted figures as the printed table: each with its value and what it means on this machine.
std::string figures_text(const gpu::GpuMachine& machine, const gpu::GpuFitResult& fit) {
  std::ostringstream out;
  const double sm_cycles = machine.sm_cycles_per_s();
  out << std::left << std::setw(38) << "fitted figure" << std::right << std::setw(12) << "value"
      << "  meaning\n";
  for (const auto& f : gpu::calibration_figures()) {
    const double v = fit.calibration.*(f.member);
    std::string meaning;
    const std::string key = f.key;
    if (std::string(f.section) == "eager_host_floor_s") {
      meaning = fixed_text(v * 1e6, 2) + " us per eager call" + (key == "zero_fill" ? " (= gather, not fitted)" : "");
    } else if (key == "launch_latency_s") {
      meaning = fixed_text(v * 1e6, 2) + " us per kernel";
    } else if (key == "dram_efficiency") {
      meaning = fixed_text(v * machine.hbm_bytes_per_s / 1e12, 3) + " TB/s achieved of " + fixed_text(machine.hbm_bytes_per_s / 1e12, 3);
    } else if (key == "l2_efficiency") {
      meaning = fixed_text(v * machine.l2_bytes_per_s / 1e12, 3) + " TB/s achieved of " + fixed_text(machine.l2_bytes_per_s / 1e12, 3);
    } else {
      meaning = general_text(v * sm_cycles) + " per second";
    }
    out << std::left << std::setw(38) << (std::string(f.section) + "." + key) << std::right << std::setw(12) << general_text(v)
        << "  " << meaning << "\n";
  }
  return out.str();
}

// The errors per op and half, then the worst held-out points of each op with the fitted prediction.
std::string errors_text(const gpu::GpuMachine& machine, const gpu::GpuFitResult& fit, const std::vector<gpu::GpuMeasurement>& points) {
  gpu::GpuMachine fitted = machine;
  fitted.calibration = fit.calibration;
  std::ostringstream out;
  out << "\n"
      << std::left << std::setw(13) << "op" << std::setw(12) << "half" << std::right << std::setw(7) << "count" << std::setw(10)
      << "median%" << std::setw(9) << "p90%" << std::setw(9) << "bias%" << "\n";
  for (std::size_t i = 0; i < fit.ops.size(); ++i) {
    for (const auto& [half, e] : {std::pair<const char*, const fitting::ErrorSummary*>{"calibration", &fit.errors[i].calibration},
                                  {"held-out", &fit.errors[i].held_out}}) {
      out << std::left << std::setw(13) << gpu::to_string(fit.ops[i]) << std::setw(12) << half << std::right << std::setw(7) << e->count
          << std::setw(10) << fixed_text(e->median_ape_pct, 2) << std::setw(9) << fixed_text(e->p90_ape_pct, 2) << std::setw(9)
          << fixed_text(e->bias_pct, 2) << "\n";
    }
  }
  out << "\nworst held-out points (num_inputs x num_features x num_outputs: measured -> predicted):\n";
  for (std::size_t i = 0; i < fit.ops.size(); ++i) {
    const auto& e = fit.errors[i];
    out << "  " << gpu::to_string(fit.ops[i]) << ":";
    for (std::size_t w = 0; w < std::min<std::size_t>(3, e.held_out.worst.size()); ++w) {
      const auto& p = points[e.held_out_points[e.held_out.worst[w]]];
      const double predicted = gpu::predict(p.op, p.shape, DType::float32, fitted, gpu::GpuMode::eager).time_s;
      out << (w ? "," : "") << " " << p.shape.num_inputs << "x" << p.shape.num_features << "x" << p.shape.num_outputs << ": "
          << fixed_text(p.time_s * 1e6, 1) << " -> " << fixed_text(predicted * 1e6, 1) << " us (" << (predicted >= p.time_s ? "+" : "")
          << fixed_text(100 * (predicted - p.time_s) / p.time_s, 1) << "%)";
    }
    out << "\n";
  }
  return out.str();
}

// What the fit found, as the table the command prints: the figures, the errors per half, the worst
// held-out points and what was written.
std::string fit_summary(const gpu::GpuMachine& machine, const std::string& data_dir, const gpu::GpuFitResult& fit,
                        const std::vector<gpu::GpuMeasurement>& points, std::size_t calibration_points,
                        const std::vector<std::string>& written) {
  std::ostringstream out;
  out << "calibrating " << machine.name << " (" << machine.file << ")\n"
      << "data: " << data_dir << " (" << points.size() << " points, " << calibration_points << " in the calibration half)\n"
      << "split: " << fitting::split_rule_text() << "\n"
      << "objective (mean |log(pred/meas)|, calibration half): " << fixed_text(fit.start_objective, 4) << " at the start, "
      << fixed_text(fit.calibration_objective, 4) << " fitted (" << fit.sweeps << " sweeps)\n\n";
  out << figures_text(machine, fit) << errors_text(machine, fit, points);
  if (written.empty()) {
    out << "\n(not written: add --write to store the fitted figures in " << machine.file << ")\n";
  } else {
    for (const auto& w : written) out << "\nwrote " << w;
    out << "\n";
  }
  return out.str();
}

MachineFit fit_gpu_machine(const gpu::GpuMachine& machine, const MachineFitData& data) {
  std::vector<gpu::GpuMeasurement> points;
  for (const auto& p : data.points) points.push_back({measured_gpu_op(p.op), p.shape, p.time_s});
  const gpu::GpuFitResult fit = gpu::fit_gpu_model(points, machine);
  std::size_t calibration_points = 0;
  for (const auto& e : fit.errors) calibration_points += e.calibration.count;

  // Sources for --write: the machine's own, then each carry-over file's.
  const std::string source = fitted_source(machine.name, data.data_dir, calibration_points, points.size());
  std::vector<std::pair<std::string, std::string>> own_sources;
  for (const auto& f : gpu::calibration_figures())
    own_sources.emplace_back(f.key, std::string(f.key) == "zero_fill" ? zero_fill_source(machine.name) : source);
  MachineFit answer;
  if (data.write) answer.files = fitted_files(machine, fit, own_sources);
  std::vector<std::string> written;
  for (const auto& f : answer.files) written.push_back(f.path);
  answer.answer = fit_json(machine, data.data_dir, fit, written);
  answer.summary = fit_summary(machine, data.data_dir, fit, points, calibration_points, written);
  return answer;
}

}  // namespace

MachineFitter gpu_machine_fitter(const std::string& machine) {
  // Read and checked now, so a machine that cannot be fitted is refused before any data is read.
  const auto fitted = std::make_shared<const gpu::GpuMachine>(machine_to_fit(machine));
  MachineFitter fitter;
  for (const auto& [file, op] : measured_gpu_ops()) fitter.ops.push_back(file);
  fitter.shipped_data_dir = shipped_a100_data_dir();
  fitter.fit = [fitted](const MachineFitData& data) { return fit_gpu_machine(*fitted, data); };
  return fitter;
}

}  // namespace tilesim::backends
