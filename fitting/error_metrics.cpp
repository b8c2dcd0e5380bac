#include "fitting/error_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tilesim::fitting {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

void check_positive(const std::vector<double>& values, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!(values[i] > 0) || !std::isfinite(values[i]))
      throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(values[i]) +
                                  " is not a positive finite time");
}

void check_same_size(std::size_t a, std::size_t b) {
  if (a != b)
    throw std::invalid_argument("predicted and measured times differ in count: " + std::to_string(a) + " vs " +
                                std::to_string(b));
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return nan;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

double percentage_error(double predicted, double measured) { return 100.0 * (predicted - measured) / measured; }

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return nan;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

std::optional<double> pearson(const std::vector<double>& xs, const std::vector<double>& ys) {
  check_same_size(xs.size(), ys.size());
  if (xs.size() < 2) return std::nullopt;
  const double mx = mean(xs), my = mean(ys);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) * (xs[i] - mx);
    syy += (ys[i] - my) * (ys[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

ErrorSummary summarize_errors(const std::vector<double>& predicted_s, const std::vector<double>& measured_s,
                              std::size_t worst_count) {
  check_same_size(predicted_s.size(), measured_s.size());
  check_positive(predicted_s, "predicted_s");
  check_positive(measured_s, "measured_s");
  ErrorSummary s;
  s.count = predicted_s.size();
  std::vector<double> signed_pct(s.count), abs_pct(s.count), log_pred(s.count), log_meas(s.count);
  for (std::size_t i = 0; i < s.count; ++i) {
    signed_pct[i] = percentage_error(predicted_s[i], measured_s[i]);
    abs_pct[i] = std::abs(signed_pct[i]);
    log_pred[i] = std::log(predicted_s[i]);
    log_meas[i] = std::log(measured_s[i]);
  }
  s.median_ape_pct = quantile(abs_pct, 0.5);
  s.p90_ape_pct = quantile(abs_pct, 0.9);
  s.bias_pct = mean(signed_pct);
  s.pearson_log_r = pearson(log_pred, log_meas);

  std::vector<std::size_t> order(s.count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return abs_pct[a] > abs_pct[b]; });
  order.resize(std::min(worst_count, order.size()));
  s.worst = std::move(order);
  return s;
}

SpeedupSummary summarize_speedup(const std::vector<double>& baseline_predicted_s,
                                 const std::vector<double>& baseline_measured_s,
                                 const std::vector<double>& target_predicted_s,
                                 const std::vector<double>& target_measured_s) {
  check_same_size(baseline_predicted_s.size(), baseline_measured_s.size());
  check_same_size(baseline_predicted_s.size(), target_predicted_s.size());
  check_same_size(baseline_predicted_s.size(), target_measured_s.size());
  check_positive(baseline_predicted_s, "baseline_predicted_s");
  check_positive(baseline_measured_s, "baseline_measured_s");
  check_positive(target_predicted_s, "target_predicted_s");
  check_positive(target_measured_s, "target_measured_s");

  SpeedupSummary s;
  s.count = baseline_predicted_s.size();
  if (s.count == 0) {
    s.correct_side_share = s.median_abs_error_pct = s.p90_abs_error_pct = s.bias_pct = nan;
    s.median_measured_speedup = s.median_predicted_speedup = nan;
    return s;
  }
  std::vector<double> predicted(s.count), measured(s.count), signed_pct(s.count), abs_pct(s.count);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < s.count; ++i) {
    predicted[i] = baseline_predicted_s[i] / target_predicted_s[i];
    measured[i] = baseline_measured_s[i] / target_measured_s[i];
    if ((predicted[i] > 1) == (measured[i] > 1)) ++correct;
    signed_pct[i] = percentage_error(predicted[i], measured[i]);
    abs_pct[i] = std::abs(signed_pct[i]);
  }
  s.correct_side_share = static_cast<double>(correct) / static_cast<double>(s.count);
  s.median_abs_error_pct = quantile(abs_pct, 0.5);
  s.p90_abs_error_pct = quantile(abs_pct, 0.9);
  s.bias_pct = mean(signed_pct);
  s.median_measured_speedup = quantile(measured, 0.5);
  s.median_predicted_speedup = quantile(predicted, 0.5);
  return s;
}

}  // namespace tilesim::fitting
