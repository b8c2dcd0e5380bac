#pragma once
// `tilesim calibrate-model`: a model's uncertain machine figures fitted to the calibration half of
// measured single ops (the hydronet grids), through the model's own fit (models/gpu/gpu_fit.hpp,
// models/ipu/ipu_fit.hpp). Here, beside the families, because the run pipeline that reads the data
// (runs/model_calibration.hpp) reaches the models only through this layer. A fitter answers with the
// JSON, the lines to print and, when asked to write, each fitted machine file's new text; it writes
// no file and prints nothing.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim::backends {

// One measured point of a hydronet CSV.
struct MeasuredSingleOp {
  std::string op;  // "gather", "scatter_add", "scatter_max", "scatter_min"
  OpShape shape;
  double time_s = 0;
};

struct MachineFitData {
  std::vector<MeasuredSingleOp> points;  // every point of the fitter's ops, read in its order
  std::string data_dir;      // where they were read (the answer names it)
  std::string data_option;   // --data as the user gave it; "" for the shipped measurements
  bool write = false;        // the answer carries the fitted machine files' new texts
  // Called after each evaluation of a search that reports progress (the IPU's), with the evaluations
  // so far and the best mean |log error|; may be empty.
  std::function<void(int evaluations, double best)> progress;
};

// A machine file's new text, for the caller to write at `path`.
struct MachineFileText {
  std::string path;
  std::string text;
};

struct MachineFit {
  nlohmann::json answer;               // `tilesim calibrate-model --json`'s answer
  std::string summary;                 // the lines it prints otherwise
  std::vector<MachineFileText> files;  // with `write`: the files to write, in order (the answer names them)
};

struct MachineFitter {
  std::vector<std::string> ops;   // the measured ops it fits on, in reading order ("gather.csv", ...)
  std::string shipped_data_dir;   // the shipped measurements of the fitted machine's kind
  std::function<MachineFit(const MachineFitData&)> fit;
};

// The fitter of a GPU machine (a name or a file). Throws InputError for a machine that cannot be read
// or whose fitted figures are not its own to fit (carried over from another GPU, or inherited from its
// base): those follow the machine they come from.
MachineFitter gpu_machine_fitter(const std::string& machine);

// The fitter of an IPU machine (a name or a file). Throws InputError for a machine that cannot be read.
MachineFitter ipu_machine_fitter(const std::string& machine);

}  // namespace tilesim::backends
