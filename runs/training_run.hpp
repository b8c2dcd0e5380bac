#pragma once
// The steps of a training workload on one backend: the step's graph run once per step, the updated
// parameters and optimizer state of each step moved into the inputs of the next (the backend's own
// values, so each backend follows its own trajectory), the loss of every step read back, the step time
// split by phase (forward, loss, backward, optimizer) and every op of every step verified.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/registry.hpp"

#include "results/backend.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs {

struct TrainingRun {
  BackendResult last_step;                  // the last step's rows (the table and report's per-op rows)
  std::vector<std::optional<double>> loss;  // per step; nullopt where the backend computes no values
  std::vector<double> step_time_s;
  bool all_steps_verified = true;
  // The first step's outputs (every backend's first step reads the same inputs, so these are what the
  // per-op cross-backend checks compare); empty for a backend that computes none.
  TensorValues first_step_outputs;
  nlohmann::json summary;                   // report.json's "training" entry of the backend
};

// Runs `steps` steps of `instance` (a lowered training workload) on `backend`. `progress`: a line on
// stderr per step when the run is long enough to need one.
TrainingRun run_training_steps(Backend& backend, const workloads::Instance& instance, std::int64_t steps,
                               const RunOptions& options, bool progress);

// The seconds of a step's rows per phase of `graph` ({"forward": .., "loss": .., "backward": ..,
// "optimizer": ..}): a row with OpResult::phase set counts for that phase, any other row for its op's
// phase, matched by name.
nlohmann::json phase_times(const OpGraph& graph, const BackendResult& step);

// Whether two loss curves agree: each step's values within `relative_tolerance` of max(1, |loss|).
// Steps where either backend computed no loss are skipped. The first step's losses come from the same
// inputs, so they must agree; later steps start from each backend's own updates, whose rounding the
// training carries forward (and Adam amplifies: a gradient near zero moves its parameter by about lr
// whatever its rounding), so a later difference is reported, not an error.
struct LossAgreement {
  bool first_step_equal = true;
  bool every_step_equal = true;
  double max_abs_difference = 0;
  std::int64_t worst_step = 0;        // 1-based
  std::int64_t first_step_apart = 0;  // the first step outside the tolerance (0: none)
  std::int64_t compared_steps = 0;    // steps with a loss from both (0 beside a model, which computes none)
};
LossAgreement compare_losses(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b,
                             double relative_tolerance);

// The relative_tolerance of a model of `model_dtype`: 1e-4 for float32. A half model's forward pass rounds
// in its dtype at every op, each backend at its own points (accumulation order, a fused or an unfused
// call), so its first-step losses (float32, from the half predictions) agree to a few units of the dtype's
// roundoff u: 8u, 2^-8 (0.4%) for float16 and 2^-5 (3.1%) for bfloat16.
double loss_relative_tolerance(DType model_dtype);

// Every pair of backends' loss curves (curves[b] is specs[b]'s) compared `unit` by `unit` ("step" for a training run, "batch" for a
// loader's), as the report's "loss_agreement" entries (keys compared_<unit>s, first_<unit>_equal,
// every_<unit>_equal, first_<unit>_apart, worst_<unit>, max_abs_difference, tolerance). A pair with
// nothing compared (a modeled backend computes no losses) is listed with nulls and gets no note; a
// compared pair whose first losses differ clears `all_agree`; each compared pair appends a line to `notes`.
nlohmann::json loss_curve_agreements(const std::vector<const std::vector<std::optional<double>>*>& curves,
                                     const std::vector<backends::BackendSpec>& specs, double relative_tolerance, const std::string& unit,
                                     bool& all_agree, std::string& notes);

}  // namespace tilesim::runs
