// A training step of each shipped training example (workloads/examples/*_train.json) on tilesim's CPU
// kernels beside the torch-cpu peer (libtorch autograd and torch::optim), in one process on the same
// data: the peer table's "train_step" rows (peer_table.hpp) give each example's speed-up and their
// median. Each iteration is one step, timed as `tilesim run` times it (BackendResult::time_s: the
// step's op and phase times, each the median of the timed calls after the warm-up ones, so neither
// verification nor cold first calls count), and the next iteration starts from that step's updated
// parameters, as a training run does. Run just these with
// --benchmark_filter=peer/train_step/.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "bench/peer_table.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "workloads/training/training_step.hpp"
#include "workloads/workload.hpp"
#ifdef TILESIM_HAVE_TORCH
#include "kernels/torch/torch_backend.hpp"
#endif

namespace {

using namespace tilesim;

const char* const kExamples[] = {"gcn_cora_train", "gat_cora_train", "sage_pubmed_train", "gin_molecules_train",
                                 "schnet_qm9_train", "rgcn_train"};

// Each example lowered and instantiated once per process; both backends start from these values.
const workloads::Instance& instance(const std::string& example) {
  static std::map<std::string, std::unique_ptr<workloads::Instance>> cache;
  auto& slot = cache[example];
  if (!slot) {
    const std::string path = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/" + example + ".json";
    slot = std::make_unique<workloads::Instance>(workloads::instantiate(workloads::load_workload(path)));
  }
  return *slot;
}

void train_step(benchmark::State& state, const std::string& name, const std::string& example, bool torch_peer) {
  const workloads::Instance& inst = instance(example);
  std::unique_ptr<Backend> backend;
#ifdef TILESIM_HAVE_TORCH
  if (torch_peer) backend = kernels::torch_peer::make_backend();
#endif
  if (!backend) {
    if (torch_peer) {
      state.SkipWithError("torch-cpu is not built (libtorch not found)");
      return;
    }
    backend = std::make_unique<kernels::cpu::CpuBackend>();
  }
  const RunOptions options;  // tilesim run's defaults: warm-up calls, then the median of the timed calls
  TensorValues values = inst.values;
  double step_bytes = 0;
  for (const Op& op : inst.graph.ops) step_bytes += static_cast<double>(op.min_bytes());
  tilesim::bench::register_bytes(name, step_bytes);
  for (auto _ : state) {
    const BackendResult result = backend->run(inst.graph, values, options);
    state.SetIterationTime(result.time_s);
    const TensorValues* outputs = backend->computed_outputs();
    if (outputs == nullptr) {
      state.SkipWithError("the backend computed no outputs");
      return;
    }
    workloads::training::advance_step(inst.training, *outputs, values);
  }
}

// Registered at start-up; each example's graph is built when its first benchmark runs.
const bool registered = [] {
  for (const char* example : kExamples) {
    for (const bool torch_peer : {false, true}) {
      const std::string name = std::string("peer/train_step/") + example + (torch_peer ? "/torch-cpu" : "/tilesim");
      benchmark::RegisterBenchmark(name.c_str(), [name, example, torch_peer](benchmark::State& s) { train_step(s, name, example, torch_peer); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(5)
          ->Repetitions(3);
    }
  }
  return true;
}();

}  // namespace
