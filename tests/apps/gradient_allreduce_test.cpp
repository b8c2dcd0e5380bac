// The gradient all-reduce of a replicated step (runs/gradient_allreduce.hpp): merged, one collective of
// every gradient; per tensor (PopART without merging), one collective per trained parameter, their times
// summed, on a modeled system (the DGX's closed forms) and a simulated one (a Bow Pod16's engine).
#include <catch2/catch.hpp>

#include "backends/registry.hpp"
#include "backends/system_view.hpp"
#include "runs/gradient_allreduce.hpp"

using namespace tilesim;

namespace {

// Two stages: the first with three gradients (two of one size), the second with one.
std::vector<analysis::StageMemory> two_stage_gradients() {
  std::vector<analysis::StageMemory> memory(2);
  memory[0].gradient_tensor_bytes = {40000, 400, 40000};
  memory[0].gradient_bytes = 80400;
  memory[1].gradient_tensor_bytes = {1 << 20};
  memory[1].gradient_bytes = 1 << 20;
  return memory;
}

void check_per_tensor_sums(const backends::SystemView& view, std::int64_t replicas) {
  const auto memory = two_stage_gradients();
  workloads::parallel::ParallelSpec spec;
  spec.replicas = replicas;
  spec.allreduce = AllreduceAlgorithm::hierarchical;
  const backends::LinkTime merged = runs::gradient_allreduce(view, memory, replicas, spec);
  CHECK(merged.detail["merged"] == true);
  CHECK(merged.detail["collectives"] == 1);
  CHECK(merged.time_s == Approx(view.allreduce({80400, 1 << 20}, replicas, spec.allreduce).time_s));

  spec.merge_allreduce = false;
  const backends::LinkTime per_tensor = runs::gradient_allreduce(view, memory, replicas, spec);
  CHECK(per_tensor.detail["merged"] == false);
  CHECK(per_tensor.detail["collectives"] == 3);  // the longest stage's tensor count
  // The k-th tensor of each stage at once: {40000, 1 MiB}, then {400, 0}, then {40000, 0}.
  const double expected = view.allreduce({40000, 1 << 20}, replicas, spec.allreduce).time_s +
                          view.allreduce({400, 0}, replicas, spec.allreduce).time_s +
                          view.allreduce({40000, 0}, replicas, spec.allreduce).time_s;
  CHECK(per_tensor.time_s == Approx(expected).epsilon(1e-12));
  CHECK(per_tensor.detail["sizes"].size() == 3);
  // Each collective pays the fixed steps again: splitting never saves time.
  CHECK(per_tensor.time_s > merged.time_s);
  CHECK(per_tensor.closed_form_s > merged.closed_form_s);
}

}  // namespace

TEST_CASE("gradient all-reduce: per tensor is the sum of one collective per tensor, on a modeled system", "[parallel][unit]") {
  const auto view = backends::system_view(backends::parse_backend_list("gpu-model:dgx-a100").front());
  check_per_tensor_sums(*view, 8);
}

TEST_CASE("gradient all-reduce: per tensor is the sum of one collective per tensor, simulated on a Bow Pod16", "[parallel][unit]") {
  const auto view = backends::system_view(backends::parse_backend_list("ipu:pod16").front());
  check_per_tensor_sums(*view, 8);
}
