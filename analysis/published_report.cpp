#include "analysis/published_report.hpp"

#include <stdexcept>

#include "fitting/error_metrics.hpp"

namespace tilesim::analysis {

std::string prediction_label(const std::string& report_kind, const std::string& mode) {
  return report_kind == "modeled" && !mode.empty() ? "modeled (" + mode + " mode)" : report_kind;
}

nlohmann::json build_published_report(const PublishedSuite& suite, const std::vector<std::optional<PublishedPrediction>>& predictions) {
  if (predictions.size() != suite.entries.size()) throw std::invalid_argument("one prediction slot per entry");
  nlohmann::json entries = nlohmann::json::array();
  std::vector<double> predicted, published;
  std::size_t compared = 0;
  for (std::size_t i = 0; i < suite.entries.size(); ++i) {
    const PublishedEntry& e = suite.entries[i];
    nlohmann::json j;
    j["id"] = e.id;
    j["source"] = {{"citation", e.source.citation}, {"url", e.source.url}, {"location", e.source.location}};
    j["config"] = {{"dataset", e.config.dataset}, {"model", e.config.model},         {"hidden", e.config.hidden},
                   {"layers", e.config.layers},   {"batch", e.config.batch},         {"precision", e.config.precision},
                   {"chips", e.config.chips},     {"mode", e.config.mode},           {"framework", e.config.framework},
                   {"hardware", e.config.hardware}};
    j["published"] = {{"value", e.published.value}, {"unit", e.published.unit}, {"quantity", e.published.quantity}};
    if (e.prediction) {
      if (!predictions[i]) throw std::invalid_argument("entry " + e.id + " is comparable but has no prediction");
      const PublishedPrediction& p = *predictions[i];
      const PredictionRecipe& r = *e.prediction;
      j["status"] = "compared";
      j["prediction"] = {{"value", p.value},
                         {"unit", e.published.unit},
                         {"kind", p.kind},
                         {"backend", r.backend},
                         {"workload", r.workload},
                         {"report_quantity", r.quantity},
                         {"report_value", p.report_value},
                         {"scale", r.scale},
                         {"conversion", r.conversion},
                         {"deviations", r.deviations},
                         {"report", p.report_path}};
      j["error_pct"] = fitting::percentage_error(p.value, e.published.value);
      predicted.push_back(p.value);
      published.push_back(e.published.value);
      ++compared;
    } else {
      j["status"] = "not yet comparable";
      j["missing"] = e.not_comparable->missing;
      j["issues"] = e.not_comparable->issues;
    }
    entries.push_back(std::move(j));
  }
  nlohmann::json summary = {{"entries", suite.entries.size()}, {"compared", compared}, {"not_yet_comparable", suite.entries.size() - compared}};
  if (compared > 0) {
    const fitting::ErrorSummary s = fitting::summarize_errors(predicted, published, 0);
    summary["median_ape_pct"] = s.median_ape_pct;
    summary["p90_ape_pct"] = s.p90_ape_pct;
  } else {
    summary["median_ape_pct"] = nullptr;
    summary["p90_ape_pct"] = nullptr;
  }
  return {{"suite", suite.name},
          {"file", suite.file},
          {"about", suite.about},
          {"error_definition", "error_pct = 100 * (predicted - published) / published, each prediction converted to the published unit first"},
          {"entries", std::move(entries)},
          {"summary", std::move(summary)}};
}

}  // namespace tilesim::analysis
