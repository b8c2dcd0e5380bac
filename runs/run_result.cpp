#include "runs/run_result.hpp"

#include "common/error.hpp"

namespace tilesim::runs {

int RunResult::exit_code() const {
  if (!all_verified) return static_cast<int>(ExitCode::internal_error);
  if (!refused.empty()) return static_cast<int>(ExitCode::does_not_fit);
  return 0;
}

std::string files_text(const RunResult& result, const std::string& report_where, const std::string& trace_path) {
  std::string text = "report: " + report_where + "\n";
  if (!trace_path.empty()) text += "trace: " + trace_path + (result.traced_backends > 1 ? " (one file per IPU machine)" : "") + "\n";
  return text;
}

std::string refusal_text(const RunResult& result, const std::string& report_where) {
  std::string text;
  for (const RefusedBackend& r : result.refused)
    text += "tilesim: error: " + r.backend + " refused the workload (the other backends ran; report: " + report_where + "): " + r.message + "\n";
  return text;
}

}  // namespace tilesim::runs
