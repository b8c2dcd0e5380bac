#pragma once
// The report of a published suite (layers, whole models): per entry the published figure, tilesim's
// prediction in the same unit with its label (simulated / modeled, and the GPU model's mode), the
// error, the source; or, for an entry tilesim cannot yet run, the missing feature. Pure: the validate
// command runs the workloads and hands the predictions here.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/published_suite.hpp"

namespace tilesim::analysis {

struct PublishedPrediction {
  double value = 0;           // in the published unit
  double report_value = 0;    // the report quantity it came from (seconds, or graphs per second)
  std::string kind;           // "simulated", "modeled (eager mode)", "modeled (kernel mode)"
  std::string report_path;    // the run's report.json
};

// One prediction per entry, in entry order (nullopt for a not-comparable entry). Throws
// std::invalid_argument when the counts differ or a comparable entry has no prediction.
nlohmann::json build_published_report(const PublishedSuite& suite, const std::vector<std::optional<PublishedPrediction>>& predictions);

// A modeled prediction names its backend's mode, as the registry parsed it from the backend name
// ("modeled (eager mode)", "modeled (kernel mode)", "modeled (eager-nograd mode)"); a simulated or
// measured one is the report's kind alone.
std::string prediction_label(const std::string& report_kind, const std::string& mode);

}  // namespace tilesim::analysis
