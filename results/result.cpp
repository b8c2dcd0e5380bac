#include "results/result.hpp"

#include <stdexcept>

namespace tilesim {

std::string to_string(ResultKind kind) {
  switch (kind) {
    case ResultKind::simulated: return "simulated";
    case ResultKind::measured: return "measured";
    case ResultKind::modeled: return "modeled";
  }
  throw std::logic_error("to_string: unknown result kind");
}

OpResult OpResult::for_op(const Op& op) {
  OpResult row;
  row.op = op.name;
  row.op_kind = op.kind;
  row.shape = op.shape;
  row.dtype = op.dtype;
  row.flops = op.flops();
  row.min_bytes = op.min_bytes();
  return row;
}

nlohmann::json OpResult::to_json() const {
  nlohmann::json j;
  j["op"] = op;
  j["op_kind"] = phase ? std::string("phase") : to_string(op_kind);
  if (phase) j["phase"] = to_string(*phase);
  j["num_inputs"] = shape.num_inputs;
  j["num_features"] = shape.num_features;
  j["num_outputs"] = shape.num_outputs;
  j["dtype"] = to_string(dtype);
  j["time_s"] = time_s;
  j["cycles"] = cycles ? nlohmann::json(*cycles) : nlohmann::json(nullptr);
  j["flops"] = flops;
  j["min_bytes"] = min_bytes;
  j["arithmetic_intensity_flops_per_byte"] = min_bytes > 0 ? flops / static_cast<double>(min_bytes) : 0.0;
  j["bytes_by_level"] = bytes_by_level;
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j["exchange_bytes"] = opt(exchange_bytes);
  j["sync_cycles"] = opt(sync_cycles);
  j["compute_cycles"] = opt(compute_cycles);
  j["exchange_cycles"] = opt(exchange_cycles);
  j["peak_tile_bytes"] = opt(peak_tile_bytes);
  j["verified"] = verified ? nlohmann::json(*verified) : nlohmann::json(nullptr);
  j["verification"] = verification;
  if (!timing.empty()) j["timing"] = timing;
  if (!plan.empty()) j["plan"] = plan;
  return j;
}

nlohmann::json BackendResult::to_json() const {
  nlohmann::json j;
  j["backend"] = backend;
  j["kind"] = to_string(kind);
  j["machine"] = machine;
  j["time_s"] = time_s;
  j["cycles"] = cycles ? nlohmann::json(*cycles) : nlohmann::json(nullptr);
  j["ops"] = nlohmann::json::array();
  for (const auto& op : ops) j["ops"].push_back(op.to_json());
  j["host"] = host;
  return j;
}

}  // namespace tilesim
