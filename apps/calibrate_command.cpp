// tilesim calibrate-model --gpu MACHINE | --ipu MACHINE [--data DIR] [--write] [--json]: a model's
// uncertain figures fitted to the calibration half of the measured hydronet times
// (runs/model_calibration.hpp: the GPU model's free figures on the A100 eager times, the IPU model's
// sync, phase, exchange and codelet figures on the Bow times). Prints the fitted values and the errors
// on both halves, and with --write stores the values (and their sources) in the machine file and, for
// a GPU, in every shipped machine file that carries its fit over; files deriving from either inherit them.
#include <iostream>
#include <memory>

#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/result_files.hpp"
#include "common/atomic_file.hpp"
#include "runs/model_calibration.hpp"

namespace tilesim::cli {

void write_machine_files(const runs::ModelCalibration& calibration) {
  for (const auto& f : calibration.files) write_file_atomically(f.path, f.text);
}

int calibrate_command(const CalibrateArgs& args) {
  runs::ModelCalibrationRequest request;
  request.gpu = args.gpu;
  request.ipu = args.ipu;
  request.data_dir = args.data_dir;
  request.write = args.write;
  const runs::ModelCalibration calibration = runs::calibrate_model(request);
  write_machine_files(calibration);
  if (args.json) std::cout << calibration.answer.dump(2) << std::endl;
  else std::cout << calibration.summary;
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
    return calibrate_command(o->calibrate);
  }});
}

}  // namespace tilesim::cli
