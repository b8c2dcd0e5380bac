#pragma once
// Fitting the IPU model's uncertain figures to measured op times. The model stays mechanistic: the
// fit only chooses values for named machine-file figures (sync, fixed phase costs, effective exchange
// rate, ...); every time still comes from the planner, the codelet costs, the exchanges and the syncs.
// The search is fitting/coordinate_descent.hpp's shrinking schedule on the mean absolute log error,
// each figure multiplied or divided by a factor that shrinks pass by pass.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"

namespace tilesim::ipu {

struct FitPoint {
  OpKind kind = OpKind::gather;
  OpShape shape;
  std::vector<std::int32_t> indices;
  double measured_s = 0;
};

// A machine-file figure the fit may change: its JSON place, its bounds, and how to set it.
struct FitParameter {
  std::string section;  // "chip", "codelets" or "planner"
  std::string key;
  double min = 0, max = 0;
  bool integer = true;
};

// The figures `tilesim calibrate-model --ipu` fits by default.
std::vector<FitParameter> default_ipu_fit_parameters();

// Sets a figure's value in both the parsed machine and its provenance. Throws std::logic_error for
// a figure the model does not know.
void set_figure(IpuMachine& machine, const FitParameter& parameter, double value);
double get_figure(const IpuMachine& machine, const FitParameter& parameter);

// Mean |log(predicted / measured)| of the machine over the points (timing-only simulation).
double mean_abs_log_error(const IpuMachine& machine, const std::vector<FitPoint>& points);

struct FitResult {
  IpuMachine machine;                 // with the fitted values (and sources) in its provenance
  double initial_error = 0, final_error = 0;  // mean |log error| on the fitting points
  int evaluations = 0;
  nlohmann::json values;              // {"chip.sync_cycles": {"before": .., "after": ..}, ...}
};

// Fits `parameters` on `points` (which must be calibration points only). `progress` (optional) is
// called after each evaluation with the evaluation count and the best error so far. `note` goes into
// each fitted figure's source.
FitResult fit_ipu_machine(const IpuMachine& start, const std::vector<FitParameter>& parameters,
                          const std::vector<FitPoint>& points, const std::string& note,
                          const std::function<void(int, double)>& progress = {});

}  // namespace tilesim::ipu
