#pragma once
// A model's uncertain machine figures fitted to measured single ops, as a library: what `tilesim
// calibrate-model` and the Python module's tilesim.calibrate_model compute. The measured hydronet CSVs
// are read here; the fit itself is the model's, reached through backends/machine_fit.hpp. The result
// holds the answer and the fitted machine files' new texts: the caller writes them (with write) and
// prints; only the IPU search's progress goes to standard error, on a terminal.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/machine_fit.hpp"

namespace tilesim::runs {

struct ModelCalibrationRequest {
  std::string gpu;       // a GPU machine name or file to fit, or
  std::string ipu;       // an IPU machine name or file (one of the two)
  std::string data_dir;  // the measured CSVs; "": the shipped hydronet folder of the machine's kind
  bool write = false;    // the result carries the fitted machine files to write
};

struct ModelCalibration {
  nlohmann::json answer;   // `tilesim calibrate-model --json`'s answer
  std::string summary;     // the lines it prints otherwise
  // With write: each fitted machine file's new text, in writing order; the answer's "written" already
  // says so (the GPU's lists these paths, the IPU's is true).
  std::vector<backends::MachineFileText> files;
};

// Throws InputError when neither or both machines are given, for a machine that cannot be fitted
// (backends/machine_fit.hpp), or for missing or bad measured data.
ModelCalibration calibrate_model(const ModelCalibrationRequest& request);

}  // namespace tilesim::runs
