#pragma once
// What a run produced, for every caller alike: report.json's content, the printed summary, each
// backend's rows, the backends that refused the workload, and whether every output was verified and
// every pair of backends agreed. Callers write the report and print the summary; nothing here does.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result.hpp"

namespace tilesim::runs {

// A backend the workload does not fit: its name, what it is and why it refused (PlanError's message).
struct RefusedBackend {
  std::string backend;
  ResultKind kind;
  std::string machine;
  std::string message;
};

struct RunResult {
  nlohmann::json report;        // report.json's content
  std::string summary;          // the printed summary, up to the lines that name the files written
  // Per backend that ran, its per-op rows: a training run's last step, a loader's last batch, a
  // parallel run's one device's step.
  std::vector<BackendResult> results;
  std::vector<RefusedBackend> refused;
  bool all_verified = true;     // every output checked passed and every pair of backends agreed
  std::size_t traced_backends = 0;  // backends that wrote a trace (one file each when several)

  // 0; 1 when an output was not verified or two backends differ (a defect of tilesim, which outranks
  // a refusal); 3 when a backend refused the workload and the others ran.
  int exit_code() const;
};

// The summary's closing lines: where the report went (`report_where`: its path, or why it was not
// kept) and the trace, when one was asked for (`trace_path`).
std::string files_text(const RunResult& result, const std::string& report_where, const std::string& trace_path);

// One line per refusal, as standard error gives it ("tilesim: error: ipu:bow refused the workload (the
// other backends ran; report: PATH): why").
std::string refusal_text(const RunResult& result, const std::string& report_where);

}  // namespace tilesim::runs
