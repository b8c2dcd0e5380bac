#pragma once
// A backend as a system of several devices, for a workload's "parallel" section (runs/scaling_run): how
// many devices (IPUs, GPUs, CPU nodes) the named machine has, the backend that runs one device's share of
// a step (one replica's step, or one pipeline stage's share), and what crossing the links between devices
// costs: the all-reduce of the gradients, a pipeline's schedule with its transfers, a halo exchange.
//   ipu:pod16, ipu:pod64, ipu:bow-2000  simulated: collectives and pipelines run on the engine over the
//                                      modelled IPU-Links and gateway links (models/ipu/system), each
//                                      with its closed form beside it
//   gpu-model:dgx-a100                 modeled: the closed forms of models/system over NVLink and the
//                                      nodes' network (models/gpu/gpu_system.hpp)
//   cpu-model:spr-cluster              modeled: the closed forms over the cluster's fabric, and the halo
//                                      exchange of METIS partitions (models/cpu/cluster)
// A single device (ipu:bow, gpu-model:a100-40gb, cpu-model:spr-2s) is a system of one.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend_spec.hpp"
#include "ir/parallelism.hpp"
#include "results/backend.hpp"
#include "workloads/graphs/halo.hpp"

namespace tilesim::backends {

// A time that crossed the links: what the report uses (simulated or modeled), with the closed form beside.
struct LinkTime {
  double time_s = 0;
  ResultKind kind = ResultKind::modeled;
  double closed_form_s = 0;  // the closed form of the same algorithm on the same links (modeled)
  nlohmann::json detail = nlohmann::json::object();  // links, algorithm, engine stats
};

// What a pipeline's stages do per micro-batch (measured on one device by the caller).
struct PipelineWork {
  std::vector<double> forward_s;               // per stage, one micro-batch
  std::vector<double> backward_s;              // per stage; empty for inference
  std::vector<std::int64_t> boundary_bytes;    // S - 1: activations from stage s to s + 1 (gradients as many back)
  std::int64_t micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::gpipe;
};

struct PipelineTime {
  double makespan_s = 0;
  double busiest_stage_s = 0;   // the busiest stage's own compute over the step
  double bubble_s = 0;          // makespan_s - busiest_stage_s
  double bubble_share = 0;      // bubble_s / makespan_s
  std::vector<double> stage_busy_s;
  std::vector<std::int64_t> peak_in_flight;  // per stage: micro-batches whose activations it holds at once
  ResultKind kind = ResultKind::modeled;
  double closed_form_s = 0;     // the closed form beside it (modeled)
  std::string closed_form;      // which one, in words
  nlohmann::json detail = nlohmann::json::object();
};

class SystemView {
 public:
  virtual ~SystemView() = default;
  virtual std::string system_name() const = 0;  // the machine's name ("pod16", "dgx-a100")
  virtual std::int64_t devices() const = 0;     // IPUs, GPUs or nodes in all
  virtual std::int64_t devices_per_machine() const = 0;  // a Bow-2000's 4 IPUs, a DGX node's 8 GPUs, 1 CPU node
  virtual std::string device_word() const = 0;  // "IPU", "GPU", "node"
  // The kind of the per-device compute (the device backend's) and of the link times.
  virtual ResultKind compute_kind() const = 0;
  virtual ResultKind link_kind() const = 0;
  // The backend that runs one device's share; `used_devices`: how many of the system's devices the step
  // occupies (the IPU simulator's engine is sized for them before anything runs).
  virtual std::unique_ptr<Backend> device_backend(std::int64_t used_devices) const = 0;
  // Memory of one device in bytes (a GPU's HBM, an IPU's tiles' SRAM, a node's DRAM; 0: not known).
  virtual std::int64_t device_memory_bytes() const = 0;
  // The all-reduce (sum) of the gradients of `replicas` replicas of `stage_bytes.size()` stages each, the
  // replicas' stages on devices r S + s. Each stage's gradients are summed among its replicas; the stages
  // do so at once over their own devices' links.
  virtual LinkTime allreduce(const std::vector<std::int64_t>& stage_bytes, std::int64_t replicas,
                             AllreduceAlgorithm algorithm) const = 0;
  // A pipelined step of `work` over devices 0 .. S - 1 (one replica's; every replica's pipeline alike).
  virtual PipelineTime pipeline(const PipelineWork& work, std::int64_t used_devices) const = 0;
  // One layer's halo exchange among `parts` (one per device), rows of `row_bytes`. Throws InputError for a
  // system that does not model it.
  virtual LinkTime halo_exchange(const std::vector<workloads::graphs::PartitionHalo>& parts, std::int64_t row_bytes) const = 0;
  // The system's figures with their sources (its machine file and the device's), for the report.
  virtual nlohmann::json provenance() const = 0;
};

// The system a backend names. Throws InputError for a family without systems (cpu, torch-cpu, cuda),
// naming the backends that have them.
std::unique_ptr<SystemView> system_view(const BackendSpec& spec);

// Each family's system, one file each, which its BackendFamily::system_view returns.
std::unique_ptr<SystemView> ipu_system_view(const BackendSpec& spec);    // ipu_system_view.cpp
std::unique_ptr<SystemView> gpu_system_view(const BackendSpec& spec);    // gpu_system_view.cpp
std::unique_ptr<SystemView> cpu_cluster_view(const BackendSpec& spec);   // cpu_cluster_view.cpp

// The pipeline schedule's event simulation (models/system/pipeline_schedule.hpp) with each boundary's
// transfer taking `transfer_s[s]`: what the modeled systems use.
PipelineTime modeled_pipeline(const PipelineWork& work, const std::vector<double>& transfer_s);

}  // namespace tilesim::backends
