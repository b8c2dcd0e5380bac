#include "fitting/coordinate_descent.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tilesim::fitting {

namespace {

// The search's state (the best point so far and its objective) and the one step both schedules take.
class Descent {
 public:
  Descent(const std::vector<double>& start, const MoveFunction& move, const ObjectiveFunction& objective,
          const DescentOptions& options, const ProgressFunction& progress)
      : move_(move), objective_(objective), options_(options), progress_(progress) {
    result_.values = start;
    result_.moves.assign(start.size(), 0);
    result_.objective = objective_(result_.values);
    result_.start_objective = result_.objective;
    result_.evaluations = 1;
  }

  // Moves coordinate j one step in `direction` when that lowers the objective; says whether it did.
  bool try_move(std::size_t j, int direction, double step) {
    const double current = result_.values[j];
    const double proposed = move_(j, current, direction, step);
    if (proposed == current) return false;
    std::vector<double> candidate = result_.values;
    candidate[j] = proposed;
    const double value = objective_(candidate);
    ++result_.evaluations;
    if (progress_) progress_(result_.evaluations, std::min(result_.objective, value));
    if (!improves(value)) return false;
    result_.values = std::move(candidate);
    result_.objective = value;
    ++result_.moves[j];
    return true;
  }

  void run_adaptive() {
    const std::size_t n = result_.values.size();
    std::vector<double> step(n, options_.initial_step);
    int pass = 0;
    for (; pass < options_.max_passes; ++pass) {
      for (std::size_t j = 0; j < n; ++j) {
        for (int moves = 0; moves < options_.moves_per_visit; ++moves) {
          if (!(try_move(j, +1, step[j]) || try_move(j, -1, step[j]))) {
            step[j] *= options_.step_shrink;
            break;
          }
          step[j] = std::min(step[j] * options_.step_growth, options_.max_step);
        }
      }
      if (n == 0 || *std::max_element(step.begin(), step.end()) < options_.min_step) {
        result_.converged = true;
        ++pass;
        break;
      }
    }
    result_.passes = pass;
  }

  void run_shrinking() {
    double step = options_.initial_step;
    for (int pass = 0; pass < options_.max_passes; ++pass, step = std::sqrt(step)) {
      for (std::size_t j = 0; j < result_.values.size(); ++j) {
        for (const int direction : {+1, -1}) {
          while (try_move(j, direction, step)) {
          }
        }
      }
      result_.passes = pass + 1;
    }
  }

  DescentResult result() && { return std::move(result_); }

 private:
  // Whether a candidate beats the best by more than the tolerance. Each schedule states the test as its
  // fit always has: the two forms differ only when the candidate lies within one rounding of
  // best - tolerance, and keeping them is what reproduces the shipped fitted figures bit for bit.
  bool improves(double candidate) const {
    if (options_.schedule == StepSchedule::adaptive) return candidate < result_.objective - options_.tolerance;
    return !(candidate + options_.tolerance >= result_.objective);
  }

  const MoveFunction& move_;
  const ObjectiveFunction& objective_;
  const DescentOptions& options_;
  const ProgressFunction& progress_;
  DescentResult result_;
};

}  // namespace

DescentResult coordinate_descent(const std::vector<double>& start, const MoveFunction& move,
                                 const ObjectiveFunction& objective, const DescentOptions& options,
                                 const ProgressFunction& progress) {
  Descent descent(start, move, objective, options, progress);
  if (options.schedule == StepSchedule::adaptive) descent.run_adaptive();
  else descent.run_shrinking();
  return std::move(descent).result();
}

}  // namespace tilesim::fitting
