// The measured data of a model's fit, read and handed to the model's fitter (runs/model_calibration.hpp).
#include "runs/model_calibration.hpp"

#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "analysis/reference_data.hpp"
#include "common/error.hpp"

namespace tilesim::runs {

ModelCalibration calibrate_model(const ModelCalibrationRequest& request) {
  // The command line refuses both options while parsing; a caller in the process is told the same.
  if (!request.gpu.empty() && !request.ipu.empty())
    throw InputError("", "--ipu", "either --gpu or --ipu (one machine is fitted at a time)", "both");
  // Neither: --gpu is what is missing, as the command has always said.
  if (request.gpu.empty() && request.ipu.empty()) throw InputError("", "--gpu", "a GPU machine name or file to calibrate", "nothing");
  // The machine first: one that cannot be fitted is refused before any data is read.
  const backends::MachineFitter fitter =
      request.ipu.empty() ? backends::gpu_machine_fitter(request.gpu) : backends::ipu_machine_fitter(request.ipu);

  backends::MachineFitData data;
  data.data_dir = request.data_dir.empty() ? fitter.shipped_data_dir : request.data_dir;
  data.data_option = request.data_dir;
  data.write = request.write;
  for (const std::string& op : fitter.ops) {
    const std::string path = (std::filesystem::path(data.data_dir) / (op + ".csv")).string();
    for (const auto& m : analysis::read_hydronet_csv(path, op)) data.points.push_back({op, m.shape, m.time_s});
  }
  // A long search redraws one line on a terminal; a log gets none of it.
  bool drawn = false;
  if (::isatty(2)) {
    data.progress = [&drawn](int evaluations, double best) {
      drawn = true;
      std::cerr << "\rcalibrate-model: " << evaluations << " evaluations, mean |log error| " << best << std::flush;
    };
  }
  backends::MachineFit fit = fitter.fit(data);
  if (drawn) std::cerr << "\n";
  return {std::move(fit.answer), std::move(fit.summary), std::move(fit.files)};
}

}  // namespace tilesim::runs
