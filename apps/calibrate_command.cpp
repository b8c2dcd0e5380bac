// tilesim calibrate-model --gpu MACHINE [--data DIR] [--write] [--json]: fits the GPU model's free
// figures to the calibration half of the measured A100 eager times, prints the fitted values and the
// errors on both halves, and with --write stores the values (and their sources) in the machine file
// and in every shipped machine file that carries its fit over; files deriving from either inherit them.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "analysis/reference_data.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "fitting/split.hpp"
#include "models/gpu/gpu_fit.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::cli {

namespace {

namespace fs = std::filesystem;

// The measured ops and the GpuOp each file holds, as the hydronet A100 folder names them.
const std::vector<std::pair<const char*, gpu::GpuOp>>& measured_ops() {
  static const std::vector<std::pair<const char*, gpu::GpuOp>> ops = {{"gather", gpu::GpuOp::gather},
                                                                      {"scatter_add", gpu::GpuOp::scatter_add},
                                                                      {"scatter_max", gpu::GpuOp::scatter_max},
                                                                      {"scatter_min", gpu::GpuOp::scatter_min}};
  return ops;
}

std::string default_data_dir() { return (fs::path(analysis::validation_data_dir()) / "hydronet-gnn" / "a100").string(); }

bool same_directory(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

// What the fitted figures' sources say they were fitted on.
std::string data_description(const std::string& data_dir) {
  if (same_directory(data_dir, default_data_dir())) {
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

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string general(double v) {
  std::ostringstream s;
  s << std::setprecision(4) << v;
  return s.str();
}

nlohmann::json summary_json(const fitting::ErrorSummary& e) {
  return {{"count", e.count}, {"median_ape_pct", e.median_ape_pct}, {"p90_ape_pct", e.p90_ape_pct}, {"bias_pct", e.bias_pct}};
}

// The GPU machine --gpu names, if it is one whose fitted figures are its own to fit.
gpu::GpuMachine machine_to_fit(const CalibrateArgs& args) {
  if (args.gpu.empty()) throw InputError("", "--gpu", "a GPU machine name or file to calibrate", "nothing");
  const gpu::GpuMachine machine = gpu::load_gpu_machine(args.gpu);
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

// --write: the fitted figures into the machine's file and into every shipped file that carries its fit
// over, each with its source; the files written.
std::vector<std::string> write_fitted_files(const gpu::GpuMachine& machine, const gpu::GpuFitResult& fit,
                                            const std::vector<std::pair<std::string, std::string>>& own_sources) {
  std::vector<std::string> written;
  write_file_atomically(machine.file, gpu::machine_text_with_calibration(machine.file, fit.calibration, own_sources));
  written.push_back(machine.file);
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
    write_file_atomically(other.file, gpu::machine_text_with_calibration(other.file, fit.calibration, sources));
    written.push_back(other.file);
  }
  return written;
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

// What the fit found, as the table the command prints: the figures, the errors per half, the worst
// held-out points and what was written.
void print_fit(const gpu::GpuMachine& machine, const std::string& data_dir, const gpu::GpuFitResult& fit,
               const std::vector<gpu::GpuMeasurement>& points, std::size_t calibration_points, const std::vector<std::string>& written) {
  gpu::GpuMachine fitted = machine;
  fitted.calibration = fit.calibration;
  const double sm_cycles = machine.sm_cycles_per_s();
  std::cout << "calibrating " << machine.name << " (" << machine.file << ")\n"
            << "data: " << data_dir << " (" << points.size() << " points, " << calibration_points
            << " in the calibration half)\n"
            << "split: " << fitting::split_rule_text() << "\n"
            << "objective (mean |log(pred/meas)|, calibration half): " << fixed(fit.start_objective, 4) << " at the start, "
            << fixed(fit.calibration_objective, 4) << " fitted (" << fit.sweeps << " sweeps)\n\n";
  std::cout << std::left << std::setw(38) << "fitted figure" << std::right << std::setw(12) << "value"
            << "  meaning\n";
  for (const auto& f : gpu::calibration_figures()) {
    const double v = fit.calibration.*(f.member);
    std::string meaning;
    const std::string key = f.key;
    if (std::string(f.section) == "eager_host_floor_s") {
      meaning = fixed(v * 1e6, 2) + " us per eager call" + (key == "zero_fill" ? " (= gather, not fitted)" : "");
    } else if (key == "launch_latency_s") {
      meaning = fixed(v * 1e6, 2) + " us per kernel";
    } else if (key == "dram_efficiency") {
      meaning = fixed(v * machine.hbm_bytes_per_s / 1e12, 3) + " TB/s achieved of " + fixed(machine.hbm_bytes_per_s / 1e12, 3);
    } else if (key == "l2_efficiency") {
      meaning = fixed(v * machine.l2_bytes_per_s / 1e12, 3) + " TB/s achieved of " + fixed(machine.l2_bytes_per_s / 1e12, 3);
    } else {
      meaning = general(v * sm_cycles) + " per second";
    }
    std::cout << std::left << std::setw(38) << (std::string(f.section) + "." + key) << std::right << std::setw(12)
              << general(v) << "  " << meaning << "\n";
  }
  std::cout << "\n"
            << std::left << std::setw(13) << "op" << std::setw(12) << "half" << std::right << std::setw(7) << "count"
            << std::setw(10) << "median%" << std::setw(9) << "p90%" << std::setw(9) << "bias%" << "\n";
  for (std::size_t i = 0; i < fit.ops.size(); ++i) {
    for (const auto& [half, e] : {std::pair<const char*, const fitting::ErrorSummary*>{"calibration", &fit.errors[i].calibration},
                                  {"held-out", &fit.errors[i].held_out}}) {
      std::cout << std::left << std::setw(13) << gpu::to_string(fit.ops[i]) << std::setw(12) << half << std::right
                << std::setw(7) << e->count << std::setw(10) << fixed(e->median_ape_pct, 2) << std::setw(9)
                << fixed(e->p90_ape_pct, 2) << std::setw(9) << fixed(e->bias_pct, 2) << "\n";
    }
  }
  std::cout << "\nworst held-out points (num_inputs x num_features x num_outputs: measured -> predicted):\n";
  for (std::size_t i = 0; i < fit.ops.size(); ++i) {
    const auto& e = fit.errors[i];
    std::cout << "  " << gpu::to_string(fit.ops[i]) << ":";
    for (std::size_t w = 0; w < std::min<std::size_t>(3, e.held_out.worst.size()); ++w) {
      const auto& p = points[e.held_out_points[e.held_out.worst[w]]];
      const double predicted = gpu::predict(p.op, p.shape, DType::float32, fitted, gpu::GpuMode::eager).time_s;
      std::cout << (w ? "," : "") << " " << p.shape.num_inputs << "x" << p.shape.num_features << "x" << p.shape.num_outputs
                << ": " << fixed(p.time_s * 1e6, 1) << " -> " << fixed(predicted * 1e6, 1) << " us ("
                << (predicted >= p.time_s ? "+" : "") << fixed(100 * (predicted - p.time_s) / p.time_s, 1) << "%)";
    }
    std::cout << "\n";
  }
  if (written.empty()) {
    std::cout << "\n(not written: add --write to store the fitted figures in " << machine.file << ")\n";
  } else {
    for (const auto& w : written) std::cout << "\nwrote " << w;
    std::cout << "\n";
  }
}

}  // namespace

int calibrate_command(const CalibrateArgs& args) {
  const gpu::GpuMachine machine = machine_to_fit(args);
  const std::string data_dir = args.data_dir.empty() ? default_data_dir() : args.data_dir;

  std::vector<gpu::GpuMeasurement> points;
  for (const auto& [file, op] : measured_ops()) {
    const std::string path = (fs::path(data_dir) / (std::string(file) + ".csv")).string();
    for (const auto& m : analysis::read_hydronet_csv(path, file)) points.push_back({op, m.shape, m.time_s});
  }

  const gpu::GpuFitResult fit = gpu::fit_gpu_model(points, machine);
  std::size_t calibration_points = 0;
  for (const auto& e : fit.errors) calibration_points += e.calibration.count;

  // Sources for --write: the machine's own, then each carry-over file's.
  const std::string source = fitted_source(machine.name, data_dir, calibration_points, points.size());
  std::vector<std::pair<std::string, std::string>> own_sources;
  for (const auto& f : gpu::calibration_figures()) {
    own_sources.emplace_back(f.key, std::string(f.key) == "zero_fill" ? zero_fill_source(machine.name) : source);
  }
  const std::vector<std::string> written = args.write ? write_fitted_files(machine, fit, own_sources) : std::vector<std::string>{};
  if (args.json)
    std::cout << fit_json(machine, data_dir, fit, written).dump(2) << std::endl;
  else
    print_fit(machine, data_dir, fit, points, calibration_points, written);
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_calibrate_model_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    CalibrateArgs calibrate;
  };
  const auto o = std::make_shared<Options>();
  CalibrateArgs& calibrate = o->calibrate;
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate-model",
      "Fit a model's free figures to the calibration half of the measured data (A100 for --gpu, Bow for --ipu)");
  auto* gpu_opt = calibrate_cmd->add_option("--gpu", calibrate.gpu, "GPU machine to fit (a100-40gb or a machine file)");
  auto* ipu_opt = calibrate_cmd->add_option("--ipu", calibrate.ipu, "IPU machine to fit (bow or a machine file)");
  gpu_opt->excludes(ipu_opt);
  calibrate_cmd->add_option("--data", calibrate.data_dir,
                            "Directory of the measured CSVs (default: validation/hydronet-gnn/a100 for --gpu, .../bow for --ipu)");
  calibrate_cmd->add_flag("--write", calibrate.write, "Store the fitted figures in the machine file (and the files carrying its fit over)");
  calibrate_cmd->add_flag("--json", calibrate.json, "Print JSON");
  commands.push_back({calibrate_cmd, [o] {
    return o->calibrate.ipu.empty() ? calibrate_command(o->calibrate) : calibrate_ipu_command(o->calibrate);
  }});
}

}  // namespace tilesim::cli
