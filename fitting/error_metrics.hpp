#pragma once
// Error metrics of predicted against measured times, as the validation report states them.
// Percentage error of one point: 100 * (predicted - measured) / measured, so +50 means the model is
// 1.5x slow and -50 means it is 2x fast. Percentiles interpolate linearly between order statistics
// (numpy's default, Hyndman-Fan type 7), so the median of an even count is the mean of the middle two.
#include <cstddef>
#include <optional>
#include <vector>

namespace tilesim::fitting {

// 100 * (predicted - measured) / measured. measured must be positive.
double percentage_error(double predicted, double measured);

// The q-th quantile (q in [0, 1]) by linear interpolation; values need not be sorted. Empty -> NaN.
double quantile(std::vector<double> values, double q);

// Pearson correlation coefficient; nullopt when fewer than two points or either side is constant.
std::optional<double> pearson(const std::vector<double>& xs, const std::vector<double>& ys);

struct ErrorSummary {
  std::size_t count = 0;
  double median_ape_pct = 0;              // median absolute percentage error
  double p90_ape_pct = 0;                 // 90th percentile of the absolute percentage error
  double bias_pct = 0;                    // mean signed percentage error (> 0: the model is slow)
  std::optional<double> pearson_log_r;    // correlation of log(predicted) with log(measured)
  std::vector<std::size_t> worst;         // indices of the largest absolute errors, largest first
};

// predicted_s and measured_s pair up by position; every time must be positive (the caller's data is
// checked, so a violation is a bug and throws std::invalid_argument). Ties among the worst points
// keep input order. An empty input gives count 0 and NaN figures.
ErrorSummary summarize_errors(const std::vector<double>& predicted_s, const std::vector<double>& measured_s,
                              std::size_t worst_count);

// The speedup surface: speedup = baseline time / target time (e.g. A100 / Bow), predicted from the two
// models' times and measured from the two measurements, point by point.
struct SpeedupSummary {
  std::size_t count = 0;
  // Share of points (0..1) where predicted and measured speedup are on the same side of 1x
  // (a speedup of exactly 1 counts as the target not being faster).
  double correct_side_share = 0;
  double median_abs_error_pct = 0;  // of the predicted speedup against the measured one
  double p90_abs_error_pct = 0;
  double bias_pct = 0;              // mean signed percentage error of the speedup
  double median_measured_speedup = 0;
  double median_predicted_speedup = 0;
};

SpeedupSummary summarize_speedup(const std::vector<double>& baseline_predicted_s,
                                 const std::vector<double>& baseline_measured_s,
                                 const std::vector<double>& target_predicted_s,
                                 const std::vector<double>& target_measured_s);

}  // namespace tilesim::fitting
