// ipu:pod16, ipu:pod64, ipu:bow-2000 as systems: each replica's (or stage's) step simulated on one IPU of
// the system (ipu::ipu_subsystem), the all-reduce and the pipeline simulated on the engine over the IPUs
// the step uses, with their closed forms beside (models/ipu/system/system_collectives.hpp).
#include <algorithm>
#include <numeric>

#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/system/system_collectives.hpp"

namespace tilesim::backends {

namespace {

class IpuSystemView final : public SystemView {
 public:
  IpuSystemView(BackendSpec spec, ipu::IpuMachine machine) : spec_(std::move(spec)), machine_(std::move(machine)) {}

  std::string system_name() const override { return machine_.chip.name; }
  std::int64_t devices() const override { return machine_.system.num_ipus; }
  std::int64_t devices_per_machine() const override {
    return machine_.system.ipus_per_machine > 0 ? machine_.system.ipus_per_machine : machine_.system.num_ipus;
  }
  std::string device_word() const override { return "IPU"; }
  ResultKind compute_kind() const override { return ResultKind::simulated; }
  ResultKind link_kind() const override { return ResultKind::simulated; }

  std::unique_ptr<Backend> device_backend(std::int64_t used_devices) const override {
    // The engine is elaborated once per process, at its first use: size it for the collectives over
    // every IPU the step uses before the first replica's step runs on one of them.
    ipu::reserve_engine_tiles(static_cast<std::int32_t>(tiles_per_ipu() * std::max<std::int64_t>(used_devices, 1)));
    return std::make_unique<ipu::IpuBackend>(ipu::ipu_subsystem(machine_, 1), spec_.name(),
                                             spec_.mode == "static" ? ipu::IndexMode::static_ : ipu::IndexMode::dynamic);
  }

  std::int64_t device_memory_bytes() const override { return tiles_per_ipu() * machine_.chip.sram_bytes_per_tile; }

  LinkTime allreduce(const std::vector<std::int64_t>& stage_bytes, std::int64_t replicas, AllreduceAlgorithm algorithm) const override {
    LinkTime t;
    t.kind = ResultKind::simulated;
    if (replicas <= 1 || stage_bytes.empty()) return t;
    // A replica's gradients are spread over its stages' IPUs; the replicas sit on the system's first IPUs.
    const auto stages = static_cast<std::int32_t>(stage_bytes.size());
    const std::int64_t bytes = std::accumulate(stage_bytes.begin(), stage_bytes.end(), std::int64_t{0});
    const ipu::IpuMachine used = ipu::ipu_subsystem(machine_, static_cast<std::int32_t>(replicas) * stages);
    const ipu::CollectiveTiming c = ipu::simulate_allreduce(used, bytes, static_cast<std::int32_t>(replicas), algorithm);
    t.time_s = c.time_s;
    t.closed_form_s = c.closed_form_s;
    t.detail = {{"algorithm", to_string(algorithm)},
                {"bytes_per_replica", bytes},
                {"ipus", used.system.num_ipus},
                {"cycles", c.cycles},
                {"engine", {{"supersteps", c.stats.supersteps},
                            {"exchange_cycles", c.stats.exchange_cycles},
                            {"sync_cycles", c.stats.sync_cycles},
                            {"compute_cycles", c.stats.compute_cycles},
                            {"exchange_bytes_received", c.stats.exchange_bytes_received},
                            {"wall_s", c.stats.wall_s}}},
                {"how", "simulated on the engine: ring supersteps over the IPU-Links and gateway links "
                        "(models/ipu/system/system_collectives.hpp); closed_form_s is the same algorithm's closed form"}};
    return t;
  }

  PipelineTime pipeline(const PipelineWork& work, std::int64_t used_devices) const override {
    // An inference pipeline (no backward times) runs its forwards alone.
    const ipu::IpuMachine used = ipu::ipu_subsystem(machine_, static_cast<std::int32_t>(used_devices));
    const ipu::PipelineTiming p =
        ipu::simulate_pipeline(used, 0, work.forward_s, work.backward_s, work.boundary_bytes, work.micro_batches, work.schedule);
    PipelineTime t;
    t.makespan_s = p.time_s;
    t.bubble_s = p.bubble_s;
    t.busiest_stage_s = p.time_s - p.bubble_s;
    t.bubble_share = p.time_s > 0 ? p.bubble_s / p.time_s : 0;
    t.stage_busy_s = p.stage_busy_s;
    t.peak_in_flight = p.peak_in_flight;
    t.kind = ResultKind::simulated;
    t.closed_form_s = p.closed_form_s;
    t.closed_form = "(M + S - 1) pipeline cycles each way, each the slowest stage plus a sync and its transfer "
                    "(models/ipu/system/collective_closed_forms.hpp; exact for equal stages under gpipe)";
    t.detail = {{"ipus", used.system.num_ipus},
                {"cycles", p.stats.total_cycles},
                {"engine", {{"supersteps", p.stats.supersteps},
                            {"exchange_cycles", p.stats.exchange_cycles},
                            {"sync_cycles", p.stats.sync_cycles},
                            {"wall_s", p.stats.wall_s}}},
                {"how", "simulated on the engine: the stages in lockstep, each pipeline cycle a compute phase on every busy "
                        "stage and an exchange of activations (and gradients) between neighbouring IPUs"}};
    return t;
  }

  LinkTime halo_exchange(const std::vector<workloads::graphs::PartitionHalo>&, std::int64_t) const override {
    throw InputError("", "parallel.partitions", "a CPU cluster backend (cpu-model:spr-cluster) for METIS partitions with halo exchange",
                     spec_.name());
  }

  nlohmann::json provenance() const override { return {{"system", machine_.provenance.to_json()}}; }

 private:
  std::int64_t tiles_per_ipu() const {
    return machine_.chip.tiles_per_chip > 0 ? machine_.chip.tiles_per_chip : machine_.chip.num_tiles;
  }

  BackendSpec spec_;
  ipu::IpuMachine machine_;
};

}  // namespace

std::unique_ptr<SystemView> ipu_system_view(const BackendSpec& spec) {
  return std::make_unique<IpuSystemView>(spec, ipu::load_ipu_machine(spec.machine));
}

}  // namespace tilesim::backends
