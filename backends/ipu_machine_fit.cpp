// The IPU model's fit for `tilesim calibrate-model --ipu MACHINE` (backends/machine_fit.hpp): the
// uncertain figures (sync, fixed phase costs, effective exchange rate, per-region exchange cost, two
// codelet constants) fitted to the calibration half of the measured Bow times, the error on both
// halves, and, when asked to write, the machine file's new text. The model stays mechanistic: only
// the values of named machine-file figures change.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <sstream>

#include "backends/machine_fit.hpp"
#include "common/error.hpp"
#include "fitting/split.hpp"
#include "models/ipu/ipu_fit.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::backends {

namespace {

namespace fs = std::filesystem;

struct FitHalves {
  std::vector<ipu::FitPoint> calibration, held_out;
};

// Each point with the indices the suite draws for it (the same the simulated validation runs on),
// into its half.
FitHalves fit_halves(const std::vector<MeasuredSingleOp>& points) {
  FitHalves h;
  for (const auto& m : points) {
    OpKind kind = OpKind::gather;
    if (m.op == "scatter_add") kind = OpKind::scatter_add;
    else if (m.op != "gather") throw InputError("", "", "an op the IPU model is fitted on (gather, scatter_add)", "\"" + m.op + "\"");
    OpGraph g;
    const Op o = g.add_gather_scatter(m.op, kind, DType::float32, m.shape);
    ipu::FitPoint p{o.kind, m.shape, analysis::point_indices(o, analysis::point_index_seed(m.shape)), m.time_s};
    (fitting::in_calibration_split(m.shape) ? h.calibration : h.held_out).push_back(std::move(p));
  }
  return h;
}

// The machine file with only the fitted figures rewritten, keeping its own key order and everything
// else as written. A derived file that inherited a figure now states it (its base keeps its own);
// files deriving from this one inherit the new values.
std::string fitted_file_text(const ipu::IpuMachine& machine, const ipu::FitResult& fit) {
  auto file = nlohmann::ordered_json::parse(std::ifstream(machine.file));
  for (const auto& p : ipu::default_ipu_fit_parameters()) {
    const MachineFigure& f = fit.machine.provenance.figure(p.section + "." + p.key);
    file[p.section][p.key] = nlohmann::json{{"value", f.value}, {"source", f.source}};
  }
  return file.dump(2) + "\n";
}

MachineFit fit_ipu(const ipu::IpuMachine& machine, const std::string& machine_option, const MachineFitData& data) {
  // Sources name the shipped data by its place in the source tree, so they read the same in every clone.
  const std::string data_name = data.data_option.empty() ? "validation/hydronet-gnn/bow/" : data.data_option;
  const FitHalves points = fit_halves(data.points);
  const std::string note = "by `tilesim calibrate-model --ipu " + machine_option +
                           "` on the calibration half (fitting/split.hpp: log2 exponents of the three sizes sum to an "
                           "even number) of the measured Bow gather and scatter_add times in " + data_name +
                           " (hydronet-gnn, graphcore-research/hydronet-gnn @ a89c2e4), minimising the mean |log(predicted / measured)|";
  const auto fit = ipu::fit_ipu_machine(machine, ipu::default_ipu_fit_parameters(), points.calibration, note, data.progress);
  const double held_before = ipu::mean_abs_log_error(machine, points.held_out);
  const double held_after = ipu::mean_abs_log_error(fit.machine, points.held_out);

  MachineFit answer;
  if (data.write) answer.files.push_back({machine.file, fitted_file_text(machine, fit)});
  answer.answer = {{"machine", machine.file},
                   {"data", data.data_dir},
                   {"calibration_points", points.calibration.size()},
                   {"held_out_points", points.held_out.size()},
                   {"mean_abs_log_error", {{"calibration", {{"before", fit.initial_error}, {"after", fit.final_error}}},
                                           {"held_out", {{"before", held_before}, {"after", held_after}}}}},
                   {"evaluations", fit.evaluations},
                   {"fitted", fit.values},
                   {"written", data.write}};
  std::ostringstream out;
  out << "IPU model fit for " << machine.chip.name << " on " << points.calibration.size() << " calibration points ("
      << fit.evaluations << " evaluations)\n";
  out << std::fixed << std::setprecision(4) << "mean |log error|  calibration " << fit.initial_error << " -> " << fit.final_error
      << "   held-out " << held_before << " -> " << held_after << "\n";
  for (auto it = fit.values.begin(); it != fit.values.end(); ++it) {
    out << "  " << std::left << std::setw(60) << it.key() << std::right << std::setprecision(3) << it.value()["before"].get<double>()
        << " -> " << it.value()["after"].get<double>() << "\n";
  }
  out << (data.write ? "written to " + machine.file : "not written (add --write to store the fitted figures)") << "\n";
  out << "run `tilesim validate` for the full error tables and plots\n";
  answer.summary = out.str();
  return answer;
}

}  // namespace

MachineFitter ipu_machine_fitter(const std::string& machine) {
  const auto loaded = std::make_shared<const ipu::IpuMachine>(ipu::load_ipu_machine(machine));
  MachineFitter fitter;
  fitter.ops = {"gather", "scatter_add"};
  fitter.shipped_data_dir = (fs::path(analysis::validation_data_dir()) / "hydronet-gnn" / "bow").string();
  fitter.fit = [loaded, machine](const MachineFitData& data) { return fit_ipu(*loaded, machine, data); };
  return fitter;
}

}  // namespace tilesim::backends
