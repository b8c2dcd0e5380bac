#pragma once
// Fitting the GPU model's free figures (GpuCalibration: host floors, launch latency, efficiencies,
// element and atomic rates) to measured eager times. Only points of the calibration half
// (fitting/split.hpp) enter the fit; errors are reported for both halves, the held-out one being the
// headline. The search is fitting/coordinate_descent.hpp's adaptive schedule on the logarithm of each
// figure, minimising the mean over ops of the mean |log(predicted / measured)| of that op's calibration
// points.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitting/error_metrics.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"

namespace tilesim::gpu {

struct GpuMeasurement {
  GpuOp op = GpuOp::gather;
  OpShape shape;
  double time_s = 0;  // measured eager time per call
};

struct GpuFitOptions {
  // Keys (as in calibration_figures()) of the figures to fit; empty: every fitted figure. The
  // zero-fill host floor is never fitted (no measurement calls torch.zeros alone); when the gather
  // floor is fitted, the zero-fill floor is set equal to it.
  std::vector<std::string> free;
  // Where the search starts; default: prior_calibration(machine).
  std::optional<GpuCalibration> start;
  int max_sweeps = 400;
  // Fitted values are rounded to this many significant digits (what a machine file stores) before
  // the errors are computed, so the reported errors are those of the written values.
  int significant_digits = 4;
};

struct GpuHalfErrors {
  fitting::ErrorSummary calibration;
  fitting::ErrorSummary held_out;
  // Positions in the input of each half's points, so ErrorSummary::worst can be mapped back.
  std::vector<std::size_t> calibration_points, held_out_points;
};

struct GpuFitResult {
  GpuCalibration calibration;              // the fitted figures (fixed ones as the start had them)
  std::vector<std::string> fitted;         // keys of the figures that were fitted
  double calibration_objective = 0;        // the minimised objective, at the rounded values
  double start_objective = 0;
  int sweeps = 0;
  std::vector<GpuOp> ops;                  // ops present in the data, in GpuOp order
  std::vector<GpuHalfErrors> errors;       // per op of `ops`
};

// The search's starting point: published anchors for the A100 (hydronet floors, NVIDIA's launch
// latency, index_select at 1e11 elements/s) converted to this machine's units.
GpuCalibration prior_calibration(const GpuMachine& machine);

// Fits `machine`'s calibration to the calibration half of `points`. Throws tilesim::InputError when a
// measured time is not positive, no point of the calibration half remains or a requested key is unknown.
GpuFitResult fit_gpu_model(const std::vector<GpuMeasurement>& points, const GpuMachine& machine,
                           const GpuFitOptions& options = {});

// The objective on given points (all of them; the caller selects the half): mean over ops of the mean
// |log(predicted / measured)|, eager mode.
double fit_objective(const std::vector<GpuMeasurement>& points, const GpuMachine& machine);

// Errors of `machine` as it stands on both halves of `points`, per op (eager mode).
std::vector<GpuHalfErrors> half_errors(const std::vector<GpuMeasurement>& points, const GpuMachine& machine,
                                       std::vector<GpuOp>& ops_out);

// The machine file at `path` with the fitted figures' values replaced by `calibration` and their
// sources by `source_for(section, key)`; key order and every other figure are kept. Returns the new
// text (2-space JSON), after checking it parses as a machine file.
std::string machine_text_with_calibration(
    const std::string& path, const GpuCalibration& calibration,
    const std::vector<std::pair<std::string, std::string>>& sources_by_key);

}  // namespace tilesim::gpu
