// `tilesim fit`: the largest batch of a mini-batch workload whose
// inference step and whose training step fit the simulated IPU's tile memory, found by search over the
// planner's memory accounting (each op's plan plus the tensors live across it, planning/step_memory.hpp)
// without running anything. The knob searched is the loader's batch size: batch_size (neighbour
// sampling, padded graphs), clusters_per_batch (Cluster-GCN) or, for packed graphs, the fixed size
// (num_nodes, with num_edges and num_graphs scaled in proportion).
#include "runs/batch_fit.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "backends/registry.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "workloads/loaders/batch_lowering.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/loaders/loader_knob.hpp"

namespace tilesim::runs {

namespace {

namespace loaders = workloads::loaders;
using Kind = loaders::LoaderSpec::Kind;

// The largest value of the knob that means anything (every seed node, every part, ...).
std::int64_t knob_max(const loaders::LoaderSpec& spec, const loaders::BatchSource& source) {
  switch (spec.kind) {
    case Kind::neighbor: return std::max<std::int64_t>(1, source.full_graph_nodes());
    case Kind::cluster: return spec.num_parts;
    case Kind::graphs:
      return spec.packing == loaders::LoaderSpec::Packing::pad ? spec.dataset->num_graphs : std::numeric_limits<std::int32_t>::max();
  }
  throw std::logic_error("knob_max: unknown loader kind");
}

struct Trial {
  bool fits = false;
  std::string why;                 // the planner's exit-3 message when it does not
  std::int64_t peak_tile_bytes = 0;
  std::string peak_op;
  loaders::FixedSize shape;
};

}  // namespace

BatchFit fit_batch_size(const BatchFitRequest& request) {
  const backends::StepMemoryFitter& fit_step = request.fit_step;
  const workloads::Workload& workload = request.workload;
  if (!workload.model || !workload.model->loader)
    throw InputError(request.workload_file, "loader", "a workload with a \"loader\" (fit searches its batch size)", "none");
  if (request.progress) std::cerr << "tilesim: building the loader's graph ..." << std::endl;
  const loaders::BatchSource base(workload);
  const loaders::BatchKnob knob = loaders::batch_knob(*workload.model->loader);
  const std::int64_t max_value = knob_max(*workload.model->loader, base);

  // One candidate: the loader with the knob at `value`, its first batches made, padded to their largest
  // (or to the loader's fixed size), lowered without values and planned.
  auto trial = [&](std::int64_t value, bool training) {
    workloads::Workload w = workload;
    *w.model->loader = loaders::with_batch_knob(*workload.model->loader, value);
    if (!training) w.model->train.reset();
    const loaders::BatchSource source(base, w);
    std::vector<loaders::Batch> batches;
    for (std::int64_t k = 0; k < std::min<std::int64_t>(request.sample_batches, source.batches_per_epoch()); ++k) batches.push_back(source.make(k));
    Trial t;
    const loaders::PaddedShape shape = loaders::padded_shape(source, batches);
    t.shape = shape.size;
    try {
      // The batch with the most edges decides (padding makes every batch this shape).
      const auto largest = std::max_element(batches.begin(), batches.end(), [](const loaders::Batch& a, const loaders::Batch& b) {
        return a.graph.num_edges() < b.graph.num_edges();
      });
      const auto lowered = loaders::lower_batch(w, source, largest - batches.begin(), *largest, shape, false);
      const backends::StepMemoryFit memory = fit_step(lowered.instance.graph);
      t.fits = true;
      t.peak_tile_bytes = memory.peak_tile_bytes;
      t.peak_op = lowered.instance.graph.ops.empty() ? "" : lowered.instance.graph.ops[memory.peak_op].name;
    } catch (const PlanError& e) {
      t.why = e.what();
    } catch (const InputError& e) {
      t.why = e.what();  // a batch beyond the loader's fixed size
    }
    return t;
  };

  BatchFit answer;
  nlohmann::json& result = answer.report;
  result["workload"] = workload.name;
  result["backend"] = request.backend;
  result["knob"] = knob.name;
  result["workload_value"] = knob.value;
  result["sample_batches"] = request.sample_batches;
  result["method"] = "doubling from the workload's value, then bisection; each candidate's fixed shape is the largest of its first "
                     "batches (plus one padding node and graph) or the loader's fixed size, planned with every tensor live across "
                     "each op (the step's memory) on the busiest tile; nothing is run";
  std::ostringstream text;  // answer.summary
  text << "tilesim fit: " << workload.name << " on " << request.backend << ", searching " << knob.name << " (workload: "
       << knob.value << ")\n";
  for (const bool training : {false, true}) {
    if (training && !workload.model->train) continue;
    const std::string step = training ? "training" : "inference";
    if (request.progress) std::cerr << "tilesim: fitting the " << step << " step ..." << std::endl;
    std::optional<std::int64_t> fit, fail;
    Trial fit_trial, fail_trial;
    auto probe = [&](std::int64_t v) {
      Trial t = trial(v, training);
      if (t.fits) {
        fit = v;
        fit_trial = t;
      } else {
        fail = v;
        fail_trial = t;
      }
      return t.fits;
    };
    // Doubling (or halving) from the workload's value until the boundary is bracketed, then bisection.
    std::int64_t v = std::clamp<std::int64_t>(knob.value, 1, max_value);
    if (probe(v)) {
      while (!fail && *fit < max_value) probe(std::min(max_value, *fit * 2));
    } else {
      while (!fit && *fail > 1) probe(std::max<std::int64_t>(1, *fail / 2));
    }
    while (fit && fail && *fail - *fit > 1) probe(*fit + (*fail - *fit) / 2);
    nlohmann::json j;
    j["largest_fitting"] = fit ? nlohmann::json(*fit) : nlohmann::json(nullptr);
    text << "  " << std::left << std::setw(10) << step << std::right;
    if (fit) {
      j["peak_tile_bytes"] = fit_trial.peak_tile_bytes;
      j["peak_at_op"] = fit_trial.peak_op;
      j["fixed_shape"] = {{"num_nodes", fit_trial.shape.num_nodes}, {"num_edges", fit_trial.shape.num_edges},
                          {"num_graphs", fit_trial.shape.num_graphs}};
      text << knob.name << " = " << *fit << (*fit == max_value ? " (every one there is)" : "") << ": peak "
           << fit_trial.peak_tile_bytes / 1024 << " KiB of a tile at op " << fit_trial.peak_op << " (shape "
           << fit_trial.shape.num_nodes << " nodes, " << fit_trial.shape.num_edges << " edges)\n";
    } else {
      text << "nothing fits, not even " << knob.name << " = 1\n";
    }
    if (fail) {
      j["smallest_failing"] = *fail;
      j["why_it_does_not_fit"] = fail_trial.why;
      text << "            " << knob.name << " = " << *fail << " does not fit: " << fail_trial.why << "\n";
    }
    result[step] = j;
  }
  answer.summary = text.str();
  return answer;
}

BatchFitRequest fit_request_for(const std::string& backend, std::int64_t sample_batches) {
  const auto spec = backends::parse_backend_list(backend);
  if (spec.size() != 1)
    throw InputError("", "--backend", "one simulated IPU backend (ipu:MACHINE): fit searches its planner's memory accounting", backend);
  limits::checked_option("--sample-batches", sample_batches, 1, limits::max_steps);
  BatchFitRequest request;
  request.backend = spec.front().name();
  // The family's own accounting (BackendFamily::step_memory_fitter); a family without one refuses here.
  request.fit_step = spec.front().descriptor->step_memory_fitter(spec.front());
  request.sample_batches = sample_batches;
  return request;
}

}  // namespace tilesim::runs
