#pragma once
// The largest batch of a mini-batch workload whose inference step and whose training step fit a
// backend's memory (the simulated IPU's tiles), found by search over the family's own accounting
// (BackendFamily::step_memory_fitter) without running anything: what `tilesim fit` answers.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/backend_family.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs {

struct BatchFitRequest {
  workloads::Workload workload;   // with a "loader"
  std::string workload_file;      // names it in messages
  std::string backend;            // its name in the answer
  backends::StepMemoryFitter fit_step;  // the backend family's memory accounting (BackendFamily::step_memory_fitter)
  std::int64_t sample_batches = 4;  // batches made per candidate; the largest decides its fixed shape
  bool progress = true;           // a line on standard error per step searched
};

struct BatchFit {
  nlohmann::json report;   // `tilesim fit --json`'s answer
  std::string summary;     // the lines it prints otherwise
};

// Throws InputError for a workload without a loader.
BatchFit fit_batch_size(const BatchFitRequest& request);

// A request on `backend` (one backend name whose family has a memory fitter: ipu:MACHINE) making
// `sample_batches` batches per candidate, checked as `tilesim fit` checks --backend and
// --sample-batches (InputError naming them). The caller adds the workload and says whether to show
// progress: the command reads the file after these checks, the Python module parses its document.
BatchFitRequest fit_request_for(const std::string& backend, std::int64_t sample_batches);

}  // namespace tilesim::runs
