#include "models/cpu/node/cpu_node.hpp"

#include <filesystem>

#include "common/error.hpp"
#include "common/machine_files.hpp"
#include "common/machine_inheritance.hpp"
#include "common/machine_overrides.hpp"
#include "common/strict_json.hpp"
#include "models/cpu/cpu_machine.hpp"

namespace tilesim::cpu_model {

namespace {

// A multiply-add counts as two FLOPs, as everywhere in tilesim (ir/op_graph.hpp): a definition, not a
// machine figure.
constexpr double kFlopsPerFma = 2.0;

CpuNode parse_resolved(const MachineDocument& resolved);

void check_base(const nlohmann::json& document, const std::string& file) {
  parse_resolved(MachineDocument{document, {file}, {}});
}

CpuNode parse_resolved(const MachineDocument& resolved) {
  constexpr std::int64_t kMaxCount = std::int64_t{1} << 50;
  const std::string& file = resolved.files.front();
  ObjectReader root(resolved.document, file, "");
  CpuNode n;
  n.file = file;
  n.provenance = MachineProvenance(resolved.files, resolved.stated_in);
  n.name = root.string("name");
  n.description = root.string("description");
  root.string_or("notes", "");

  FigureReader node(root.object("node"), n.provenance);
  n.sockets = node.integer("sockets", 1, 64);
  n.cores_per_socket = node.integer("cores_per_socket", 1, 1 << 16);
  n.base_clock_hz = node.number("base_clock_hz", 1e6, 1e11);
  n.memory_bytes = node.integer("memory_bytes", 1, kMaxCount);
  node.finish();

  FigureReader memory(root.object("memory"), n.provenance);
  n.channels_per_socket = memory.integer("channels_per_socket", 1, 1 << 10);
  n.transfers_per_s = memory.number("transfers_per_s", 1e6, 1e12);
  n.bytes_per_transfer = memory.integer("bytes_per_transfer", 1, 1 << 10);
  // No memory sustains more than its wire rate; a fraction of 0 would make every byte free of time.
  n.stream_fraction = memory.number("stream_fraction", 1e-3, 1.0);
  memory.finish();

  FigureReader vector(root.object("vector"), n.provenance);
  n.fma_units_per_core = vector.integer("fma_units_per_core", 1, 64);
  n.fp32_lanes_per_fma = vector.integer("fp32_lanes_per_fma", 1, 1 << 10);
  n.fp16_lanes_per_fma = vector.integer("fp16_lanes_per_fma", 1, 1 << 10);
  vector.finish();

  FigureReader matrix(root.object("matrix"), n.provenance);
  n.amx_bf16_flops_per_cycle_per_core = matrix.number("amx_bf16_flops_per_cycle_per_core", 1.0, 1e6);
  matrix.finish();

  FigureReader software(root.object("software"), n.provenance);
  n.per_op_overhead_s = software.number("per_op_overhead_s", 0.0, 1.0);
  software.finish();

  root.finish();
  return n;
}

}  // namespace

double CpuNode::peak_dram_bytes_per_s() const {
  return static_cast<double>(sockets * channels_per_socket * bytes_per_transfer) * transfers_per_s;
}

double CpuNode::stream_bytes_per_s() const { return peak_dram_bytes_per_s() * stream_fraction; }

double CpuNode::fp32_vector_flops_per_s() const {
  return static_cast<double>(cores() * fma_units_per_core * fp32_lanes_per_fma) * kFlopsPerFma * base_clock_hz;
}

double CpuNode::fp16_vector_flops_per_s() const {
  return static_cast<double>(cores() * fma_units_per_core * fp16_lanes_per_fma) * kFlopsPerFma * base_clock_hz;
}

double CpuNode::bf16_amx_flops_per_s() const {
  return static_cast<double>(cores()) * amx_bf16_flops_per_cycle_per_core * base_clock_hz;
}

nlohmann::json CpuNode::derived_json() const {
  return {{"cores", {{"value", cores()}, {"formula", "node.sockets x node.cores_per_socket"}}},
          {"peak_dram_bytes_per_s",
           {{"value", peak_dram_bytes_per_s()},
            {"formula", "node.sockets x memory.channels_per_socket x memory.bytes_per_transfer x memory.transfers_per_s"}}},
          {"stream_bytes_per_s", {{"value", stream_bytes_per_s()}, {"formula", "peak_dram_bytes_per_s x memory.stream_fraction"}}},
          {"fp32_vector_flops_per_s",
           {{"value", fp32_vector_flops_per_s()},
            {"formula", "cores x vector.fma_units_per_core x vector.fp32_lanes_per_fma x 2 x node.base_clock_hz"}}},
          {"fp16_vector_flops_per_s",
           {{"value", fp16_vector_flops_per_s()},
            {"formula", "cores x vector.fma_units_per_core x vector.fp16_lanes_per_fma x 2 x node.base_clock_hz"}}},
          {"bf16_amx_flops_per_s",
           {{"value", bf16_amx_flops_per_s()},
            {"formula", "cores x matrix.amx_bf16_flops_per_cycle_per_core x node.base_clock_hz"}}}};
}

CpuNode parse_cpu_node(const nlohmann::json& document, const std::string& file) {
  return parse_resolved(resolve_machine_document(document, file, cpu_machine_dir(), "CPU", check_base));
}

CpuNode load_cpu_node(const std::string& name_or_path) {
  // A what-if node (common/machine_overrides.hpp): its base, then its figures.
  const auto what_if = split_machine_overrides(name_or_path, "CPU");
  const std::string base = what_if ? what_if->base : name_or_path;
  std::string path = base;
  if (!names_a_file(base)) {
    path = (std::filesystem::path(cpu_machine_dir()) / (base + ".json")).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw InputError("unknown CPU node \"" + base + "\": expected a machine file in " + cpu_machine_dir() +
                       " (e.g. spr-2s) or a path to one (*.json)");
  }
  MachineDocument document = read_machine_document(path, cpu_machine_dir(), "CPU", check_base);
  if (what_if) document = apply_machine_overrides(std::move(document), *what_if, "CPU");
  return parse_resolved(document);
}

}  // namespace tilesim::cpu_model
