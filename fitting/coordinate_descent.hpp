#pragma once
// The search every model fit uses: coordinate descent. Each coordinate (a figure being fitted) in turn
// is moved while a move lowers the objective. Deterministic: coordinates are visited in order, "up" is
// tried before "down", and a move is kept only when it lowers the objective by more than a tolerance,
// so a tie keeps the current value.
//
// What a step means (a factor, a distance in log space), the bounds and the rounding of a value are
// the caller's, in its `move` function; the search decides only which moves to try and when to stop,
// by one of two step schedules:
//   adaptive   each coordinate keeps its own step. A visit makes up to `moves_per_visit` moves, trying
//              up then down at each; a kept move grows the step (x step_growth, at most max_step); when
//              neither direction helps, the step shrinks (x step_shrink) and the visit ends. The search
//              stops when every step is below min_step, or after max_passes.
//   shrinking  one step for every coordinate. A visit moves up while that helps, then down while that
//              helps; after each pass over the coordinates the step becomes its square root (a factor of
//              2 becomes 1.41, 1.19, ...). The search stops after max_passes.
// The GPU model's fit (models/gpu/gpu_fit.cpp) uses the first, the IPU model's (models/ipu/ipu_fit.cpp)
// the second: each keeps the schedule its shipped fitted figures came from.
#include <cstddef>
#include <functional>
#include <vector>

namespace tilesim::fitting {

enum class StepSchedule { adaptive, shrinking };

struct DescentOptions {
  StepSchedule schedule = StepSchedule::adaptive;
  double initial_step = 0.5;
  int max_passes = 400;
  double tolerance = 1e-12;  // a move is kept when it lowers the objective by more than this
  // The adaptive schedule only.
  int moves_per_visit = 4;
  double step_growth = 1.5;
  double max_step = 2.0;
  double step_shrink = 0.5;
  double min_step = 1e-5;
};

// The value a move of one step in `direction` (+1 up, -1 down) proposes for coordinate `coordinate`,
// now at `value`. Returning `value` itself means no move is possible (at a bound, or rounding back to
// it): the move is not evaluated.
using MoveFunction = std::function<double(std::size_t coordinate, double value, int direction, double step)>;
// The objective at a point (one value per coordinate); lower is better.
using ObjectiveFunction = std::function<double(const std::vector<double>& values)>;
// Called after each evaluation but the first, with the evaluation count and the best objective so far
// (this evaluation's included).
using ProgressFunction = std::function<void(int evaluations, double best)>;

struct DescentResult {
  std::vector<double> values;    // the best point found
  double objective = 0;          // at `values`
  double start_objective = 0;
  int evaluations = 0;           // of the objective, the start's included
  int passes = 0;                // passes over the coordinates made
  bool converged = false;        // adaptive: stopped because every step fell below min_step
  std::vector<int> moves;        // kept moves per coordinate
};

DescentResult coordinate_descent(const std::vector<double>& start, const MoveFunction& move,
                                 const ObjectiveFunction& objective, const DescentOptions& options,
                                 const ProgressFunction& progress = {});

}  // namespace tilesim::fitting
