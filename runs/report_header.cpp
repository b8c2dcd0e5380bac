#include "runs/report_header.hpp"

#include "common/tool_identity.hpp"
#include "common/wall_clock.hpp"

namespace tilesim::runs {

nlohmann::json report_header(const RunRequest& request) {
  nlohmann::json report;
  report["tool"] = tool_identity();
  report["created_utc"] = utc_now();
  report["workload"] = workloads::to_json(request.workload);
  report["options"] = {{"backends", request.backends_text}, {"timing_only", request.timing_only},
                       {"warmup", request.warmup}, {"repeats", request.repeats}};
  return report;
}

}  // namespace tilesim::runs
