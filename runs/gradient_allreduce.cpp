#include "runs/gradient_allreduce.hpp"

#include <algorithm>
#include <map>

namespace tilesim::runs {

backends::LinkTime gradient_allreduce(const backends::SystemView& view, const std::vector<analysis::StageMemory>& memory,
                                      std::int64_t ranks, const workloads::parallel::ParallelSpec& spec) {
  if (spec.merge_allreduce) {
    std::vector<std::int64_t> stage_bytes;
    for (const auto& m : memory) stage_bytes.push_back(m.gradient_bytes);
    backends::LinkTime t = view.allreduce(stage_bytes, ranks, spec.allreduce);
    t.detail["collectives"] = 1;
    t.detail["merged"] = true;
    return t;
  }
  std::size_t collectives = 0;
  for (const auto& m : memory) collectives = std::max(collectives, m.gradient_tensor_bytes.size());
  // Each collective's bytes per stage, counted: a model's tensors repeat a few shapes (every block's weights).
  std::map<std::vector<std::int64_t>, std::int64_t> count;
  for (std::size_t k = 0; k < collectives; ++k) {
    std::vector<std::int64_t> stage_bytes;
    for (const auto& m : memory) stage_bytes.push_back(k < m.gradient_tensor_bytes.size() ? m.gradient_tensor_bytes[k] : 0);
    ++count[stage_bytes];
  }
  backends::LinkTime total;
  total.kind = view.link_kind();
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& [stage_bytes, n] : count) {
    const backends::LinkTime one = view.allreduce(stage_bytes, ranks, spec.allreduce);
    total.time_s += static_cast<double>(n) * one.time_s;
    total.closed_form_s += static_cast<double>(n) * one.closed_form_s;
    total.kind = one.kind;
    sizes.push_back({{"bytes_per_stage", stage_bytes}, {"collectives", n}, {"time_s", one.time_s}, {"closed_form_s", one.closed_form_s}});
  }
  total.detail = {{"algorithm", to_string(spec.allreduce)},
                  {"merged", false},
                  {"collectives", collectives},
                  {"sizes", sizes},
                  {"how", "one all-reduce per trained parameter tensor, one after another (PopART without "
                          "replicatedCollectivesSettings.mergeAllReduceCollectives); each size timed once as the merged "
                          "all-reduce is, times its count"}};
  return total;
}

}  // namespace tilesim::runs
