#include "analysis/published_report.hpp"

#include <map>
#include <stdexcept>

#include "fitting/error_metrics.hpp"

namespace tilesim::analysis {

namespace {

// The family part of a backend name ("gpu-model:v100-16gb:eager" -> "gpu-model"): the suite's errors
// are summarised per family, since a GPU model and the simulated IPU err for different reasons.
std::string family_of(const std::string& backend) { return backend.substr(0, backend.find(':')); }

struct ComparedFigures {
  std::vector<double> predicted, published;
};

nlohmann::json error_summary(const ComparedFigures& f) {
  nlohmann::json j = {{"compared", f.predicted.size()}};
  if (f.predicted.empty()) {
    j["median_ape_pct"] = nullptr;
    j["p90_ape_pct"] = nullptr;
    return j;
  }
  const fitting::ErrorSummary s = fitting::summarize_errors(f.predicted, f.published, 0);
  j["median_ape_pct"] = s.median_ape_pct;
  j["p90_ape_pct"] = s.p90_ape_pct;
  return j;
}

}  // namespace

std::string prediction_label(const std::string& report_kind, const std::string& mode) {
  return report_kind == "modeled" && !mode.empty() ? "modeled (" + mode + " mode)" : report_kind;
}

nlohmann::json build_published_report(const PublishedSuite& suite, const std::vector<std::optional<PublishedPrediction>>& predictions) {
  if (predictions.size() != suite.entries.size()) throw std::invalid_argument("one prediction slot per entry");
  nlohmann::json entries = nlohmann::json::array();
  ComparedFigures all;
  std::map<std::string, ComparedFigures> by_family;
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
      for (ComparedFigures* f : {&all, &by_family[family_of(r.backend)]}) {
        f->predicted.push_back(p.value);
        f->published.push_back(e.published.value);
      }
    } else {
      j["status"] = "not yet comparable";
      j["missing"] = e.not_comparable->missing;
      j["issues"] = e.not_comparable->issues;
    }
    entries.push_back(std::move(j));
  }
  const std::size_t compared = all.predicted.size();
  nlohmann::json summary = error_summary(all);
  summary["entries"] = suite.entries.size();
  summary["not_yet_comparable"] = suite.entries.size() - compared;
  summary["by_family"] = nlohmann::json::object();
  for (const auto& [family, figures] : by_family) summary["by_family"][family] = error_summary(figures);
  return {{"suite", suite.name},
          {"file", suite.file},
          {"about", suite.about},
          {"error_definition", "error_pct = 100 * (predicted - published) / published, each prediction converted to the published unit first"},
          {"entries", std::move(entries)},
          {"summary", std::move(summary)}};
}

}  // namespace tilesim::analysis
