// tilesim calibrate-model --ipu MACHINE [--data DIR] [--write] [--json]: fits the IPU model's uncertain
// figures (sync, fixed phase costs, effective exchange rate, per-region exchange cost, two codelet
// constants) to the calibration half of the measured Bow times, and reports the error on both halves.
// The model stays mechanistic: only the values of named machine-file figures change.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include <unistd.h>

#include "analysis/reference_data.hpp"
#include "apps/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "fitting/split.hpp"
#include "models/ipu/ipu_fit.hpp"
#include "workloads/validation_suite.hpp"

namespace fs = std::filesystem;

namespace tilesim::cli {

namespace {

struct Halves {
  std::vector<ipu::FitPoint> calibration, held_out;
};

Halves read_points(const std::string& data_dir) {
  Halves h;
  for (const std::string op : {"gather", "scatter_add"}) {
    const std::string path = (fs::path(data_dir) / (op + ".csv")).string();
    for (const auto& m : analysis::read_hydronet_csv(path, op)) {
      OpGraph g;
      const Op o = g.add_gather_scatter(op, op == "gather" ? OpKind::gather : OpKind::scatter_add, DType::float32, m.shape);
      ipu::FitPoint p{o.kind, m.shape, analysis::point_indices(o, analysis::point_index_seed(m.shape)), m.time_s};
      (fitting::in_calibration_split(m.shape) ? h.calibration : h.held_out).push_back(std::move(p));
    }
  }
  return h;
}

}  // namespace

int calibrate_ipu_command(const CalibrateArgs& args) {
  const ipu::IpuMachine machine = ipu::load_ipu_machine(args.ipu);
  const std::string data_dir =
      args.data_dir.empty() ? (fs::path(analysis::validation_data_dir()) / "hydronet-gnn" / "bow").string() : args.data_dir;
  // Sources name the shipped data by its place in the source tree, so they read the same in every clone.
  const std::string data_name = args.data_dir.empty() ? "validation/hydronet-gnn/bow/" : args.data_dir;
  const Halves points = read_points(data_dir);
  const std::string note = "by `tilesim calibrate-model --ipu " + args.ipu +
                           "` on the calibration half (fitting/split.hpp: log2 exponents of the three sizes sum to an "
                           "even number) of the measured Bow gather and scatter_add times in " + data_name +
                           " (hydronet-gnn, graphcore-research/hydronet-gnn @ a89c2e4), minimising the mean |log(predicted / measured)|";
  const bool terminal = ::isatty(2);
  const auto fit = ipu::fit_ipu_machine(machine, ipu::default_ipu_fit_parameters(), points.calibration, note,
                                        [&](int evaluations, double best) {
                                          if (terminal) std::cerr << "\rcalibrate-model: " << evaluations << " evaluations, mean |log error| " << best << std::flush;
                                        });
  if (terminal) std::cerr << "\n";
  const double held_before = ipu::mean_abs_log_error(machine, points.held_out);
  const double held_after = ipu::mean_abs_log_error(fit.machine, points.held_out);

  if (args.write) {
    // Rewrite only the fitted figures, keeping the file's own key order and everything else as written.
    // A derived file that inherited a figure now states it (its base keeps its own); files deriving
    // from this one inherit the new values.
    auto file = nlohmann::ordered_json::parse(std::ifstream(machine.file));
    for (const auto& p : ipu::default_ipu_fit_parameters()) {
      const MachineFigure& f = fit.machine.provenance.figure(p.section + "." + p.key);
      file[p.section][p.key] = nlohmann::json{{"value", f.value}, {"source", f.source}};
    }
    write_file_atomically(machine.file, file.dump(2) + "\n");
  }

  nlohmann::json j = {{"machine", machine.file},
                      {"data", data_dir},
                      {"calibration_points", points.calibration.size()},
                      {"held_out_points", points.held_out.size()},
                      {"mean_abs_log_error", {{"calibration", {{"before", fit.initial_error}, {"after", fit.final_error}}},
                                              {"held_out", {{"before", held_before}, {"after", held_after}}}}},
                      {"evaluations", fit.evaluations},
                      {"fitted", fit.values},
                      {"written", args.write}};
  if (args.json) {
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::cout << "IPU model fit for " << machine.chip.name << " on " << points.calibration.size()
            << " calibration points (" << fit.evaluations << " evaluations)\n";
  std::cout << std::fixed << std::setprecision(4) << "mean |log error|  calibration " << fit.initial_error << " -> "
            << fit.final_error << "   held-out " << held_before << " -> " << held_after << "\n";
  for (auto it = fit.values.begin(); it != fit.values.end(); ++it) {
    std::cout << "  " << std::left << std::setw(60) << it.key() << std::right << std::setprecision(3)
              << it.value()["before"].get<double>() << " -> " << it.value()["after"].get<double>() << "\n";
  }
  std::cout << (args.write ? "written to " + machine.file : "not written (add --write to store the fitted figures)") << "\n";
  std::cout << "run `tilesim validate` for the full error tables and plots\n";
  return 0;
}

}  // namespace tilesim::cli
