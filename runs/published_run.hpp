#pragma once
// The published suites' predictions: each comparable entry's workload run through `tilesim run`'s own
// machinery (runs/run.hpp, so training steps and loaders run exactly as `tilesim run` runs them) on the
// entry's backend, timing-only, and the report quantity converted into the published unit.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/published_suite.hpp"

namespace tilesim::runs {

// Runs every comparable entry of `suite` (reports under <out_dir>/runs/<suite>/<entry id>/report.json)
// and returns the suite's report (analysis/published_report.hpp). A run that fails names its entry.
nlohmann::json run_published_suite(const analysis::PublishedSuite& suite, const std::string& out_dir);

// Makes (and drops) every comparable entry's backend of `suites`, before anything runs: a backend claims
// what its machine needs of the process on construction (the simulated IPU's engine is elaborated once,
// at its first run, for the most tiles claimed by then), so a validation that runs Bow points first can
// still run a Pod16 entry afterwards. A backend that cannot be made names its entry.
void make_published_backends(const std::vector<analysis::PublishedSuite>& suites);

}  // namespace tilesim::runs
