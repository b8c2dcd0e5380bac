// cpu-model:spr-cluster as a system: nodes of one described CPU node joined by a fabric
// (models/cpu/cluster); the all-reduce, pipeline transfers and halo exchange are closed forms (modeled).
#include <algorithm>

#include "backends/registry.hpp"
#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "models/cpu/cluster/cpu_cluster.hpp"
#include "models/cpu/cluster/halo_exchange.hpp"
#include "models/cpu/node/cpu_node_backend.hpp"
#include "models/system/allreduce.hpp"

namespace tilesim::backends {

namespace {

class CpuClusterView final : public SystemView {
 public:
  CpuClusterView(BackendSpec spec, std::optional<cpu_model::CpuCluster> cluster) : spec_(std::move(spec)), cluster_(std::move(cluster)) {
    // The node's figures (memory) from the backend the family makes for this name.
    const auto node = make_backend(spec_);
    memory_bytes_ = static_cast<const cpu_model::CpuNodeBackend&>(*node).node().memory_bytes;
    node_name_ = static_cast<const cpu_model::CpuNodeBackend&>(*node).node().name;
  }

  std::string system_name() const override { return cluster_ ? cluster_->name : node_name_; }
  std::int64_t devices() const override { return cluster_ ? cluster_->num_nodes : 1; }
  std::int64_t devices_per_machine() const override { return 1; }
  std::string device_word() const override { return "node"; }
  ResultKind compute_kind() const override { return ResultKind::modeled; }
  ResultKind link_kind() const override { return ResultKind::modeled; }
  std::unique_ptr<Backend> device_backend(std::int64_t) const override { return make_backend(spec_); }
  std::int64_t device_memory_bytes() const override { return memory_bytes_; }

  LinkTime allreduce(const std::vector<std::int64_t>& stage_bytes, std::int64_t replicas,
                     AllreduceAlgorithm algorithm) const override {
    LinkTime t;
    if (replicas <= 1 || stage_bytes.empty()) return t;
    // One rank per node: the ring and the hierarchical form are the same ring over the fabric.
    system::LinkHierarchy links;
    links.ranks_per_machine = 1;
    links.machines = replicas;
    links.between = {cluster_->fabric.bytes_per_s_per_node, cluster_->fabric.latency_s};
    links.inside = links.between;
    const double bytes = static_cast<double>(*std::max_element(stage_bytes.begin(), stage_bytes.end()));
    t.time_s = system::allreduce_s(algorithm, bytes, links);
    t.closed_form_s = t.time_s;
    t.detail = {{"algorithm", to_string(algorithm)},
                {"bytes_per_replica", bytes},
                {"nodes", replicas},
                {"fabric_bytes_per_s_per_node", links.between.bytes_per_s},
                {"fabric_latency_s", links.between.latency_s},
                {"how", "closed form (models/system/allreduce.hpp): a ring over the nodes on the fabric, one rank per node"}};
    return t;
  }

  PipelineTime pipeline(const PipelineWork& work, std::int64_t) const override {
    std::vector<double> transfer_s;
    for (std::int64_t bytes : work.boundary_bytes)
      transfer_s.push_back(static_cast<double>(bytes) / cluster_->fabric.bytes_per_s_per_node + cluster_->fabric.latency_s);
    return modeled_pipeline(work, transfer_s);
  }

  LinkTime halo_exchange(const std::vector<workloads::graphs::PartitionHalo>& parts, std::int64_t row_bytes) const override {
    LinkTime t;
    if (!cluster_) return t;  // one node: no partition has a halo
    t.time_s = cpu_model::halo_exchange_s(parts, row_bytes, cluster_->fabric);
    t.closed_form_s = t.time_s;
    t.detail = {{"row_bytes", row_bytes},
                {"how", "closed form (models/cpu/cluster/halo_exchange.hpp): the largest halo's rows at one node's fabric "
                        "bandwidth, plus one message latency"}};
    return t;
  }

  nlohmann::json provenance() const override {
    nlohmann::json j = {{"device", make_backend(spec_)->machine_provenance()}};
    if (cluster_) j["system"] = cluster_->provenance.to_json();
    return j;
  }

 private:
  BackendSpec spec_;
  std::optional<cpu_model::CpuCluster> cluster_;
  std::int64_t memory_bytes_ = 0;
  std::string node_name_;
};

}  // namespace

std::unique_ptr<SystemView> cpu_cluster_view(const BackendSpec& spec) {
  std::optional<cpu_model::CpuCluster> cluster;
  if (cpu_model::is_cpu_cluster_file(spec.machine)) cluster = cpu_model::load_cpu_cluster(spec.machine);
  return std::make_unique<CpuClusterView>(spec, std::move(cluster));
}

}  // namespace tilesim::backends
