// The fitting layer: the error metrics against hand-computed values, the calibration split on the
// hydronet grid, and the coordinate-descent search of both schedules traced move by move on objectives
// small enough to follow by hand.
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "fitting/coordinate_descent.hpp"
#include "fitting/error_metrics.hpp"
#include "fitting/split.hpp"

using namespace tilesim;
using namespace tilesim::fitting;

// ---------------------------------------------------------------------------------------------------
// Error metrics

TEST_CASE("percentage error and quantiles", "[fitting][validation]") {
  CHECK(percentage_error(1.5, 1.0) == Approx(50.0));
  CHECK(percentage_error(0.5, 1.0) == Approx(-50.0));
  // Linear interpolation between order statistics (numpy's default).
  CHECK(quantile({3, 1, 2, 4}, 0.5) == Approx(2.5));
  CHECK(quantile({3, 1, 2, 4}, 0.9) == Approx(3.7));  // position 2.7: 3 + 0.7 * (4 - 3)
  CHECK(quantile({7}, 0.9) == 7);
  CHECK(std::isnan(quantile({}, 0.5)));
}

TEST_CASE("Pearson correlation", "[fitting][validation]") {
  CHECK(*pearson({1, 2, 3}, {2, 4, 6}) == Approx(1.0));
  CHECK(*pearson({1, 2, 3}, {3, 2, 1}) == Approx(-1.0));
  // dx = (-1, 0, 1), dy = (-1, 1, 0): sxy = 1, sxx = syy = 2, r = 0.5.
  CHECK(*pearson({1, 2, 3}, {1, 3, 2}) == Approx(0.5));
  CHECK_FALSE(pearson({1, 2, 3}, {5, 5, 5}).has_value());
  CHECK_FALSE(pearson({1}, {1}).has_value());
}

TEST_CASE("error summary against hand-computed values", "[fitting][validation]") {
  // Errors +10, -50, +100, 0 %: |e| sorted 0, 10, 50, 100.
  const std::vector<double> predicted = {1.1e-6, 0.5e-6, 2.0e-6, 3.0e-6};
  const std::vector<double> measured = {1.0e-6, 1.0e-6, 1.0e-6, 3.0e-6};
  const ErrorSummary s = summarize_errors(predicted, measured, 3);
  CHECK(s.count == 4);
  CHECK(s.median_ape_pct == Approx(30.0));  // (10 + 50) / 2
  CHECK(s.p90_ape_pct == Approx(85.0));     // position 2.7: 50 + 0.7 * 50
  CHECK(s.bias_pct == Approx(15.0));        // (10 - 50 + 100 + 0) / 4
  // log times: x = ln(1.1, 0.5, 2, 3), y = ln(1, 1, 1, 3) (the 1e-6 scale cancels); r worked by hand.
  REQUIRE(s.pearson_log_r.has_value());
  CHECK(*s.pearson_log_r == Approx(0.68474).epsilon(1e-4));
  CHECK(s.worst == std::vector<std::size_t>{2, 1, 0});

  const ErrorSummary empty = summarize_errors({}, {}, 10);
  CHECK(empty.count == 0);
  CHECK(std::isnan(empty.median_ape_pct));
  CHECK(empty.worst.empty());

  CHECK_THROWS_AS(summarize_errors({1.0}, {0.0}, 1), std::invalid_argument);
  CHECK_THROWS_AS(summarize_errors({1.0, 2.0}, {1.0}, 1), std::invalid_argument);
}

TEST_CASE("speedup summary against hand-computed values", "[fitting][validation]") {
  // speedup = baseline / target. Predicted: 10, 2, 0.5, 0.5; measured: 5, 2, 5, 2.
  const SpeedupSummary s = summarize_speedup({10, 10, 4, 1}, {10, 10, 10, 1}, {1, 5, 8, 2}, {2, 5, 2, 0.5});
  CHECK(s.count == 4);
  CHECK(s.correct_side_share == Approx(0.5));     // the last two are predicted slower, measured faster
  CHECK(s.median_abs_error_pct == Approx(82.5));  // |e| = 100, 0, 90, 75
  CHECK(s.p90_abs_error_pct == Approx(97.0));     // position 2.7 of 0, 75, 90, 100
  CHECK(s.bias_pct == Approx(-16.25));
  CHECK(s.median_measured_speedup == Approx(3.5));
  CHECK(s.median_predicted_speedup == Approx(1.25));

  // A speedup of exactly 1 is "not faster", the same side as anything below 1.
  CHECK(summarize_speedup({1}, {0.8}, {1}, {1}).correct_side_share == 1.0);
  CHECK(summarize_speedup({1}, {1.2}, {1}, {1}).correct_side_share == 0.0);
}

// ---------------------------------------------------------------------------------------------------
// The calibration split

TEST_CASE("the calibration split is a 297/297 checkerboard spanning every size", "[fitting][validation]") {
  std::size_t calibration = 0, held_out = 0;
  std::set<std::int64_t> cal_inputs, cal_features, cal_outputs, held_inputs, held_features, held_outputs;
  for (std::int64_t in = 16; in <= 4096; in *= 2)
    for (std::int64_t f = 16; f <= 512; f *= 2)
      for (std::int64_t out = 32; out <= 32768; out *= 2) {
        const OpShape shape{in, f, out};
        if (in_calibration_split(shape)) {
          ++calibration;
          cal_inputs.insert(in), cal_features.insert(f), cal_outputs.insert(out);
        } else {
          ++held_out;
          held_inputs.insert(in), held_features.insert(f), held_outputs.insert(out);
        }
        // Neighbours along any axis fall in the other half.
        CHECK(in_calibration_split({in * 2, f, out}) != in_calibration_split(shape));
      }
  CHECK(calibration == 297);
  CHECK(held_out == 297);
  CHECK(cal_inputs.size() == 9);
  CHECK(held_inputs.size() == 9);
  CHECK(cal_features.size() == 6);
  CHECK(held_features.size() == 6);
  CHECK(cal_outputs.size() == 11);
  CHECK(held_outputs.size() == 11);
}

// ---------------------------------------------------------------------------------------------------
// Coordinate descent

namespace {

// An objective that records every point it is asked about, in order.
struct Recorder {
  std::vector<std::vector<double>> asked;
  ObjectiveFunction of(double (*f)(const std::vector<double>&)) {
    return [this, f](const std::vector<double>& x) {
      asked.push_back(x);
      return f(x);
    };
  }
};

double distance_to_5(const std::vector<double>& x) { return std::abs(x[0] - 5); }
double square_distance_to_3(const std::vector<double>& x) { return (x[0] - 3) * (x[0] - 3); }

// Integer values, multiplied or divided by the step.
double scaled_and_rounded(std::size_t, double value, int direction, double factor) {
  return std::round(direction > 0 ? value * factor : value / factor);
}

}  // namespace

TEST_CASE("shrinking steps: each direction while it helps, a tie keeps the value, the factor's root each pass",
          "[fitting][unit]") {
  DescentOptions o;
  o.schedule = StepSchedule::shrinking;
  o.initial_step = 2.0;
  o.max_passes = 2;
  Recorder r;
  const DescentResult d = coordinate_descent({1}, scaled_and_rounded, r.of(distance_to_5), o);
  // Pass 1 (x2): up to 2 and 4 (kept), 8 (worse); down to 2 (worse). Pass 2 (x1.41): up to 6, as close
  // as 4 (a tie: kept out); down to 3 (worse).
  const std::vector<std::vector<double>> asked = {{1}, {2}, {4}, {8}, {2}, {6}, {3}};
  CHECK(r.asked == asked);
  CHECK(d.values == std::vector<double>{4});
  CHECK(d.objective == 1);
  CHECK(d.start_objective == 4);
  CHECK(d.evaluations == 7);
  CHECK(d.passes == 2);
  CHECK(d.moves == std::vector<int>{2});
  CHECK_FALSE(d.converged);
}

TEST_CASE("adaptive steps: up before down at each move, steps grow and shrink per coordinate", "[fitting][unit]") {
  DescentOptions o;
  o.schedule = StepSchedule::adaptive;
  o.initial_step = 1;
  o.max_passes = 100;
  o.moves_per_visit = 4;
  o.step_growth = 2;
  o.max_step = 4;
  o.step_shrink = 0.5;
  o.min_step = 0.1;
  Recorder r;
  std::vector<std::pair<int, double>> progress;
  const MoveFunction add = [](std::size_t, double value, int direction, double step) { return value + direction * step; };
  const DescentResult d = coordinate_descent({0}, add, r.of(square_distance_to_3), o,
                                             [&](int evaluations, double best) { progress.emplace_back(evaluations, best); });
  // Pass 1: +1 and +2 kept (the step grows to 2, then 4); +4 and -4 worse, the step halves to 2. Then
  // each pass tries +-step around 3 and halves it: 2, 1, 0.5, 0.25, 0.125, and stops below 0.1.
  const std::vector<std::vector<double>> asked = {{0}, {1}, {3}, {7}, {-1}, {5}, {1}, {4}, {2}, {3.5}, {2.5},
                                                  {3.25}, {2.75}, {3.125}, {2.875}};
  CHECK(r.asked == asked);
  CHECK(d.values == std::vector<double>{3});
  CHECK(d.objective == 0);
  CHECK(d.evaluations == 15);
  CHECK(d.passes == 6);
  CHECK(d.converged);
  CHECK(d.moves == std::vector<int>{2});
  // Progress after every evaluation but the start's, with the best so far.
  REQUIRE(progress.size() == 14);
  CHECK(progress[0] == std::pair<int, double>{2, 4.0});
  CHECK(progress[1] == std::pair<int, double>{3, 0.0});
  CHECK(progress.back() == std::pair<int, double>{15, 0.0});
}

TEST_CASE("a move the caller refuses (at a bound) is not evaluated, and coordinates are visited in order",
          "[fitting][unit]") {
  DescentOptions o;
  o.schedule = StepSchedule::shrinking;
  o.initial_step = 2.0;
  o.max_passes = 1;
  // Coordinate 0 is capped at 4; coordinate 1 is free. The objective wants both at 8.
  const MoveFunction capped = [](std::size_t j, double value, int direction, double factor) {
    const double v = direction > 0 ? value * factor : value / factor;
    return j == 0 ? std::min(v, 4.0) : v;
  };
  Recorder r;
  const DescentResult d = coordinate_descent(
      {1, 1}, capped, r.of([](const std::vector<double>& x) { return std::abs(x[0] - 8) + std::abs(x[1] - 8); }), o);
  // Coordinate 0: 2, 4 kept; up again proposes 4 itself (not asked); down to 2 is worse. Then
  // coordinate 1: 2, 4, 8 kept, 16 worse; down to 4 worse.
  const std::vector<std::vector<double>> asked = {{1, 1}, {2, 1}, {4, 1}, {2, 1}, {4, 2}, {4, 4}, {4, 8}, {4, 16}, {4, 4}};
  CHECK(r.asked == asked);
  CHECK(d.values == std::vector<double>{4, 8});
  CHECK(d.moves == std::vector<int>{2, 3});
}
