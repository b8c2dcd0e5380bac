// cpu-model: a described CPU node (models/cpu/node), priced op by op by a roofline plus a per-op
// overhead; or a CPU cluster file (models/cpu/cluster), which alone runs as one of its nodes: the
// whole step on one node, what a scale-out run (a workload's "parallel" section) divides and adds the
// fabric's exchanges to.
#include <iomanip>
#include <sstream>

#include "backends/families.hpp"
#include "backends/machine_ceilings.hpp"
#include "backends/modeled_family.hpp"
#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "common/machine_files.hpp"
#include "models/cpu/cluster/cpu_cluster.hpp"
#include "models/cpu/cpu_machine.hpp"
#include "models/cpu/node/cpu_node_backend.hpp"

namespace tilesim::backends {

namespace {

constexpr const char* kDefaultNode = "spr-2s";
const std::string kPrefix = "cpu-model:";

FamilyInfo cpu_model_info() {
  FamilyInfo i;
  i.family = "cpu-model";
  i.grammar = "cpu-model[:MACHINE]";
  i.kind = ResultKind::modeled;
  i.summary = "an analytic roofline-plus-overhead model of a described CPU node (vendor figures, not measured here), "
              "or of one node of a CPU cluster";
  i.help = "cpu-model:MACHINE (spr-2s, spr-cluster or a machine file)";
  i.accepted = "cpu-model, cpu-model:MACHINE (spr-2s, spr-cluster or a machine file path)";
  i.reads_input_values = false;
  // Every op kind, training kinds included, is priced from its own FLOPs and bytes; no values, so a
  // training run's losses are null.
  i.runs_training_steps = true;
  i.unchecked_verified = "modeled";
  i.roofline_machine_family = "cpu-model";
  i.roofline_machine_form = "cpu-model:NAME_OR_FILE";
  return i;
}

// The node a machine names: itself, or a cluster's node.
struct ResolvedNode {
  cpu_model::CpuNode node;
  std::string cluster;  // the cluster's name, "" for a node file
};

ResolvedNode resolve_node(const std::string& machine) {
  if (!cpu_model::is_cpu_cluster_file(machine)) return {cpu_model::load_cpu_node(machine), ""};
  const cpu_model::CpuCluster cluster = cpu_model::load_cpu_cluster(machine);
  ResolvedNode r{cpu_model::load_cpu_node(cluster.node_backend.substr(kPrefix.size())), cluster.name};
  r.node.provenance.append(cluster.provenance);
  return r;
}


class CpuModelFamily final : public ModeledFamily {
 public:
  CpuModelFamily() : ModeledFamily(cpu_model_info(), kDefaultNode) {}

  MachineChoice machine_choice() const override {
    MachineChoice m = named_machine_choice();
    // Only the described nodes and clusters: the same folder may hold files `tilesim calibrate` wrote.
    for (const std::string& stem : json_file_stems(cpu_model::cpu_machine_dir())) {
      try {
        (void)resolve_node(stem);
        m.shipped.push_back(stem);
      } catch (const InputError&) {
      }
    }
    return m;
  }

  std::unique_ptr<Backend> make(const BackendSpec& spec) const override {
    ResolvedNode r = resolve_node(spec.machine);
    return std::make_unique<cpu_model::CpuNodeBackend>(std::move(r.node), spec.name(), r.cluster);
  }

  std::string machine_name(const Backend& backend) const override {
    return static_cast<const cpu_model::CpuNodeBackend&>(backend).machine_name();
  }

  std::string row_mode(const BackendSpec&, const TimingSettings&) const override { return "roofline"; }

  std::string plan_text(const BackendSpec& spec, const TimingSettings&) const override {
    return "modeled, roofline plus per-op overhead" +
           std::string(cpu_model::is_cpu_cluster_file(spec.machine) ? ", one node of the cluster" : "");
  }

  // "cpu-model:spr-2s" -> "SPR-2S CPU model"; a machine file by its stem.
  std::optional<std::string> display_label(const std::string& name, const std::string&, const std::string&) const override {
    const std::string machine = name.size() > kPrefix.size() ? name.substr(kPrefix.size()) : default_machine();
    return upper_case(machine_stem(machine)) + " CPU model";
  }

  RooflineMachine ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) const override {
    const ResolvedNode r = resolve_node(machine.empty() ? spec.machine : machine);
    const cpu_model::CpuNode& n = r.node;
    RooflineMachine m;
    m.backend = backend;
    m.title = display_label(backend, "modeled", "").value() + " (modeled)";
    m.files = n.provenance.files();
    const std::string from = "derived from " + n.file + ": ";
    m.ceilings.push_back(bandwidth("dram", "DRAM (STREAM fraction)", n.stream_bytes_per_s(),
                                 from + "sockets x channels_per_socket x bytes_per_transfer x transfers_per_s x stream_fraction"));
    m.ceilings.push_back(compute("float32", "fp32 (AVX-512)", n.fp32_vector_flops_per_s(),
                                 from + "cores x fma_units_per_core x fp32_lanes_per_fma x 2 x base_clock_hz"));
    m.ceilings.push_back(compute("float16", "fp16 (AVX-512-FP16)", n.fp16_vector_flops_per_s(),
                                 from + "cores x fma_units_per_core x fp16_lanes_per_fma x 2 x base_clock_hz"));
    m.ceilings.push_back(compute("bfloat16", "bf16 matmul (AMX)", n.bf16_amx_flops_per_s(),
                                 from + "cores x amx_bf16_flops_per_cycle_per_core x base_clock_hz"));
    if (!r.cluster.empty()) m.notes.push_back("cluster " + r.cluster + ": the ceilings of one of its " + n.name + " nodes");
    return m;
  }

  std::unique_ptr<SystemView> system_view(const BackendSpec& spec) const override { return cpu_cluster_view(spec); }

  // `tilesim machines`: each shipped node with its derived peaks; a cluster with its node and fabric.
  nlohmann::json machine_summaries() const override {
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& name : machine_choice().shipped) {
      const ResolvedNode r = resolve_node(name);
      const cpu_model::CpuNode& n = r.node;
      nlohmann::json s = {{"name", name},
                          {"kind", "cpu-model"},
                          {"backend", kPrefix + name},
                          {"file", n.provenance.files().front()},
                          {"node", n.name},
                          {"cores", n.cores()},
                          {"base_clock_hz", n.base_clock_hz},
                          {"memory_bytes", n.memory_bytes},
                          {"peak_dram_bytes_per_s", n.peak_dram_bytes_per_s()},
                          {"stream_bytes_per_s", n.stream_bytes_per_s()},
                          {"fp32_flops_per_s", n.fp32_vector_flops_per_s()},
                          {"bf16_amx_flops_per_s", n.bf16_amx_flops_per_s()}};
      if (!r.cluster.empty()) {
        const cpu_model::CpuCluster c = cpu_model::load_cpu_cluster(name);
        s["description"] = c.description;
        s["file"] = c.file;
        s["num_nodes"] = c.num_nodes;
        s["fabric_bytes_per_s_per_node"] = c.fabric.bytes_per_s_per_node;
        s["fabric_latency_s"] = c.fabric.latency_s;
      } else {
        s["description"] = n.description;
      }
      list.push_back(s);
    }
    return list;
  }

  std::string machine_table(const nlohmann::json& summaries) const override {
    if (summaries.empty()) return "";
    std::ostringstream out;
    out << "\n" << std::left << std::setw(22) << "backend" << std::right << std::setw(6) << "cores" << std::setw(10) << "clock"
        << std::setw(11) << "DRAM" << std::setw(11) << "STREAM" << std::setw(12) << "FP32" << std::setw(12) << "BF16 AMX"
        << "  nodes\n";
    out << std::fixed;
    for (const auto& s : summaries) {
      out << std::left << std::setw(22) << s["backend"].get<std::string>() << std::right << std::setw(6) << s["cores"].get<std::int64_t>()
          << std::setw(5) << std::setprecision(2) << s["base_clock_hz"].get<double>() / 1e9 << " GHz" << std::setw(6)
          << std::setprecision(0) << s["peak_dram_bytes_per_s"].get<double>() / 1e9 << " GB/s" << std::setw(6)
          << s["stream_bytes_per_s"].get<double>() / 1e9 << " GB/s" << std::setw(7) << std::setprecision(1)
          << s["fp32_flops_per_s"].get<double>() / 1e12 << " TF/s" << std::setw(7) << std::setprecision(0)
          << s["bf16_amx_flops_per_s"].get<double>() / 1e12 << " TF/s  ";
      if (s.contains("num_nodes"))
        out << s["num_nodes"].get<std::int64_t>() << " x " << s["node"].get<std::string>() << ", fabric "
            << std::setprecision(1) << s["fabric_bytes_per_s_per_node"].get<double>() / 1e9 << " GB/s per node, "
            << std::setprecision(1) << s["fabric_latency_s"].get<double>() * 1e6 << " us";
      else
        out << "1";
      out << "\n";
    }
    out << "(modeled from vendor figures and stated assumptions; a cluster alone runs as one of its nodes)\n";
    return out.str();
  }
};

}  // namespace

const BackendFamily& cpu_model_family() {
  static const CpuModelFamily family;
  return family;
}

}  // namespace tilesim::backends
