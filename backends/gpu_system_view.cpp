// gpu-model:dgx-a100 as a system: GPUs of one device file, NVLink through NVSwitch inside a node and the
// nodes' network between them (models/gpu/gpu_system.hpp); every link time is a closed form (modeled).
#include <algorithm>

#include "backends/registry.hpp"
#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_system.hpp"
#include "models/system/allreduce.hpp"

namespace tilesim::backends {

namespace {

class GpuSystemView final : public SystemView {
 public:
  GpuSystemView(BackendSpec spec, gpu::GpuSystem system) : spec_(std::move(spec)), system_(std::move(system)) {}

  std::string system_name() const override { return system_.name; }
  std::int64_t devices() const override { return system_.num_gpus; }
  std::int64_t devices_per_machine() const override { return system_.gpus_per_node; }
  std::string device_word() const override { return "GPU"; }
  ResultKind compute_kind() const override { return ResultKind::modeled; }
  ResultKind link_kind() const override { return ResultKind::modeled; }
  std::unique_ptr<Backend> device_backend(std::int64_t) const override { return make_backend(spec_); }
  std::int64_t device_memory_bytes() const override { return system_.device.memory_bytes; }

  LinkTime allreduce(const std::vector<std::int64_t>& stage_bytes, std::int64_t replicas,
                     AllreduceAlgorithm algorithm) const override {
    LinkTime t;
    if (replicas <= 1 || stage_bytes.empty()) return t;
    // Each stage's replicas sit S devices apart; a node holds gpus_per_node / S of them (at least one).
    const auto stages = static_cast<std::int64_t>(stage_bytes.size());
    const std::int64_t per_node = std::max<std::int64_t>(1, std::min<std::int64_t>(replicas, system_.gpus_per_node / stages));
    system::LinkHierarchy links;
    links.ranks_per_machine = per_node;
    links.machines = (replicas + per_node - 1) / per_node;
    links.inside = {system_.nvlink_bytes_per_s, system_.nvlink_step_latency_s};
    // Each GPU drives its own share of the node's adapters (DGX A100: one 200 Gb/s HDR adapter per GPU).
    links.between = {system_.network_bytes_per_s_per_node / system_.gpus_per_node, system_.network_step_latency_s};
    const double bytes = static_cast<double>(*std::max_element(stage_bytes.begin(), stage_bytes.end()));
    t.time_s = system::allreduce_s(algorithm, bytes, links);
    t.closed_form_s = t.time_s;
    t.kind = ResultKind::modeled;
    t.detail = {{"algorithm", to_string(algorithm)},
                {"bytes_per_replica", bytes},
                {"ranks_per_node", links.ranks_per_machine},
                {"nodes", links.machines},
                {"inside_bytes_per_s", links.inside.bytes_per_s},
                {"inside_step_latency_s", links.inside.latency_s},
                {"between_bytes_per_s_per_gpu", links.between.bytes_per_s},
                {"between_step_latency_s", links.between.latency_s},
                {"how", "closed form (models/system/allreduce.hpp) over NVLink inside a node and the network between nodes"}};
    return t;
  }

  PipelineTime pipeline(const PipelineWork& work, std::int64_t) const override {
    std::vector<double> transfer_s;
    for (std::size_t s = 0; s < work.boundary_bytes.size(); ++s) {
      // Stage s + 1 on the next GPU: NVLink inside a node, the network where it starts a new node.
      const bool crosses_node = (static_cast<std::int64_t>(s) + 1) % system_.gpus_per_node == 0;
      const double bw = crosses_node ? system_.network_bytes_per_s_per_node / system_.gpus_per_node : system_.nvlink_bytes_per_s;
      const double latency = crosses_node ? system_.network_step_latency_s : system_.nvlink_step_latency_s;
      transfer_s.push_back(static_cast<double>(work.boundary_bytes[s]) / bw + latency);
    }
    return modeled_pipeline(work, transfer_s);
  }

  LinkTime halo_exchange(const std::vector<workloads::graphs::PartitionHalo>&, std::int64_t) const override {
    throw InputError("", "parallel.partitions", "a CPU cluster backend (cpu-model:spr-cluster) for METIS partitions with halo exchange",
                     spec_.name());
  }

  nlohmann::json provenance() const override {
    return {{"system", system_.provenance.to_json()}, {"device", system_.device.provenance.to_json()}};
  }

 private:
  BackendSpec spec_;
  gpu::GpuSystem system_;
};

// One GPU (gpu-model:a100-40gb): a system of one, whose step crosses no link.
gpu::GpuSystem single_gpu(const std::string& machine) {
  gpu::GpuSystem s;
  s.device = gpu::load_gpu_machine(machine);
  s.name = s.device.name;
  s.description = s.device.description;
  s.file = s.device.file;
  // No links: a step that fits one GPU crosses none (allreduce and pipeline see one replica, one stage).
  return s;
}

}  // namespace

std::unique_ptr<SystemView> gpu_system_view(const BackendSpec& spec) {
  if (gpu::is_gpu_system_file(spec.machine)) return std::make_unique<GpuSystemView>(spec, gpu::load_gpu_system(spec.machine));
  return std::make_unique<GpuSystemView>(spec, single_gpu(spec.machine));
}

}  // namespace tilesim::backends
