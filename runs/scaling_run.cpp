#include "runs/scaling_run.hpp"

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <optional>
#include <sstream>

#include "analysis/stage_split.hpp"
#include "backends/backend_family.hpp"
#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "runs/gradient_allreduce.hpp"
#include "runs/report_header.hpp"
#include "runs/result_tables.hpp"
#include "runs/scaled_step.hpp"
#include "runs/scaling_execution.hpp"
#include "runs/scaling_steps.hpp"
#include "workloads/layers/model_spec.hpp"

namespace tilesim::runs {

namespace {

using workloads::parallel::ParallelSpec;
using analysis::boundary_bytes;
using analysis::stage_memory;
using analysis::stage_of_ops;
using analysis::stage_seconds;
using analysis::StageMemory;


// A step's kinds before anything ran: the system's links, whatever crosses them.
ScaledStep started(const backends::SystemView& view) {
  ScaledStep s;
  s.collective_kind = view.link_kind();
  s.bubble_kind = view.link_kind();
  return s;
}

double optimizer_seconds(const DeviceStep& step) {
  double s = 0;
  for (const auto& t : stage_seconds(step.graph, step.result, stage_of_ops(step.graph, {}), 1)) s += t.optimizer_s;
  return s;
}

// The memory of each stage's device: what the graph's tensors say (modeled), and for the simulated IPU
// the per-tile peak its step reached (the whole model on one IPU: a bound for each stage).
nlohmann::json memory_json(const std::vector<StageMemory>& memory, const std::vector<std::int64_t>& in_flight,
                           const backends::SystemView& view, const DeviceStep& step) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t s = 0; s < memory.size(); ++s) {
    const StageMemory& m = memory[s];
    const std::int64_t flight = s < in_flight.size() ? in_flight[s] : 1;
    const std::int64_t activations = m.activation_bytes_per_micro_batch * flight;
    const std::int64_t total = m.parameter_bytes + m.gradient_bytes + m.optimizer_state_bytes + activations;
    nlohmann::json e = {{"stage", s},
                        {"parameter_bytes", m.parameter_bytes},
                        {"gradient_bytes", m.gradient_bytes},
                        {"optimizer_state_bytes", m.optimizer_state_bytes},
                        {"activation_bytes_per_micro_batch", m.activation_bytes_per_micro_batch},
                        {"micro_batches_in_flight", flight},
                        {"activation_bytes_in_flight", activations},
                        {"total_bytes", total},
                        {"kind", "modeled (the op graph's tensors: float32 master parameters and gradients, optimizer state, the "
                                 "forward outputs the backward reads per micro-batch in flight)"}};
    if (view.device_memory_bytes() > 0) {
      e["device_memory_bytes"] = view.device_memory_bytes();
      e["share_of_device_memory"] = static_cast<double>(total) / static_cast<double>(view.device_memory_bytes());
    }
    if (step.result.host.contains("peak_tile_bytes_with_live_tensors"))
      e["peak_tile_bytes"] = {{"bytes", step.result.host["peak_tile_bytes_with_live_tensors"]},
                              {"at_op", step.result.host.value("peak_tile_bytes_at_op", std::string())},
                              {"kind", "simulated (the whole model's step on one IPU; a bound for a stage's)"}};
    out.push_back(e);
  }
  return out;
}

nlohmann::json throughput_json(const ScaledStep& s, double throughput) {
  nlohmann::json j = {{"unit", s.unit + "_per_s"},
                      {"value", throughput},
                      {"items_per_step", s.items_per_step},
                      {"counts", s.counts.empty() ? "the whole graph's work of one step" : s.counts}};
  if (s.epoch) j["epoch"] = {{"batches", s.epoch->batches}, {"items", s.epoch->items}};
  return j;
}

// The mean host inputs of the steps' micro-batches (a fixed-shape backend's are all one shape's).
std::int64_t mean_input_bytes(const std::vector<DeviceStep>& steps) {
  if (steps.empty()) return 0;
  std::int64_t bytes = 0;
  for (const DeviceStep& step : steps) bytes += step.host_input_bytes;
  return bytes / static_cast<std::int64_t>(steps.size());
}

nlohmann::json link_json(const backends::LinkTime& t) {
  nlohmann::json j = {{"time_s", t.time_s}, {"kind", to_string(t.kind)}, {"closed_form_s", t.closed_form_s}, {"detail", t.detail}};
  if (t.closed_form_s > 0) j["time_over_closed_form"] = t.time_s / t.closed_form_s;
  return j;
}

// Replicas (data parallelism, with gradient accumulation): R x A batches, replica r taking batches
// a R + r; each replica's A micro-steps, one optimizer update, one all-reduce.
ScaledStep scale_replicas(const workloads::Workload& w, const backends::SystemView& view, Backend& device, const DeviceOptions& options) {
  const ParallelSpec& p = *w.parallel;
  const std::int64_t R = p.replicas, A = p.gradient_accumulation;
  ScaledStep out = started(view);
  DeviceRuns runs;
  if (w.model->loader) {
    runs = run_loader_batches(w, device, R * A, options);
  } else {
    DeviceStep one = run_whole_step(w, device, options);
    runs.unit = w.model->train && w.model->train->task == workloads::training::TrainSpec::Task::graph ? "graphs" : "nodes";
    runs.steps.assign(static_cast<std::size_t>(R * A), one);
    runs.how = "the whole graph; every replica takes its own copy of the same shape (one step stands for each)";
  }
  std::vector<double> replica_s(static_cast<std::size_t>(R), 0.0);
  for (std::int64_t k = 0; k < R * A; ++k) {
    const DeviceStep& step = runs.steps[static_cast<std::size_t>(k)];
    const double optimizer = optimizer_seconds(step);
    const bool last_micro_step = k / R == A - 1;
    // A micro-step's forward, loss and backward; the optimizer once, after the last.
    replica_s[static_cast<std::size_t>(k % R)] += step.result.time_s - optimizer + (last_micro_step ? optimizer : 0.0);
    out.items_per_step += step.items;
    out.verified = out.verified && step.verified;
  }
  out.compute_s = *std::max_element(replica_s.begin(), replica_s.end());
  out.unit = runs.unit;
  out.how = runs.how;
  out.counts = "the " + std::to_string(R * A) + " batch" + (R * A == 1 ? "" : "es") + " of one step";
  out.epoch = runs.epoch;
  if (runs.epoch && runs.epoch->batches > 0) {
    // A step takes R x A batches of the epoch, whichever they are: over the epoch it carries the mean
    // batch's items R x A times (the first batches can hold more or fewer than the mean).
    out.items_per_step = runs.epoch->items_per_batch() * static_cast<double>(R * A);
    out.counts = "the mean batch of " + runs.epoch->counts() + ", times the " + std::to_string(R * A) + " batch" +
                 (R * A == 1 ? "" : "es") + " of one step; the step that ran took the first " + std::to_string(R * A);
  }
  out.micro_batches_per_step = A;
  out.input_bytes_per_micro_batch = mean_input_bytes(runs.steps);
  out.one_device_micro_batches = static_cast<double>(R * A);
  out.one_device_accumulation = A;
  out.one_device_input_bytes = out.input_bytes_per_micro_batch;
  out.one_device_s = std::accumulate(replica_s.begin(), replica_s.end(), 0.0);
  out.one_device_items = out.items_per_step;
  out.one_device_what = "one " + view.device_word() + " running every replica's batches one after the other" +
                        (A > 1 ? " (the same " + std::to_string(A) + " micro-steps per update)" : std::string()) + ", no all-reduce";
  const DeviceStep& first = runs.steps.front();
  const auto memory = stage_memory(first.graph, first.training, stage_of_ops(first.graph, {}), 1);
  out.memory = memory_json(memory, {1}, view, first);
  if (w.model->train && R > 1) {
    const backends::LinkTime t = gradient_allreduce(view, memory, R, p);
    out.collective_s = t.time_s;
    out.collective_kind = t.kind;
    out.allreduce = link_json(t);
  }
  out.allreduce["bytes_per_replica"] = memory.front().gradient_bytes;
  out.allreduce["per_step"] = w.model->train ? (R > 1 ? std::string(p.merge_allreduce ? "one" : "one per gradient tensor") + ", after the replicas' " +
                                                            std::to_string(A) + " micro-step" + (A == 1 ? "" : "s")
                                                      : std::string("none: one replica"))
                                             : std::string("none: inference trains no parameters");
  out.device_steps.push_back(first);
  return out;
}

// A pipeline of S stages over M micro-batches (each replica's alike), with its all-reduce per stage.
ScaledStep scale_pipeline(const workloads::Workload& w, const backends::SystemView& view, Backend& device, const DeviceOptions& options,
                          std::int64_t used_devices) {
  const ParallelSpec& p = *w.parallel;
  const auto& pipe = *p.pipeline;
  const std::size_t S = pipe.stages.size();
  const std::int64_t M = pipe.micro_batches;
  const bool training = w.model->train.has_value();
  ScaledStep out = started(view);
  const DeviceRuns runs = run_micro_batches(w, device, M, options);
  std::vector<double> forward(S, 0.0), backward(S, 0.0), optimizer(S, 0.0);
  std::vector<std::int64_t> boundary(S - 1, 0);
  double items = 0;
  for (const DeviceStep& step : runs.steps) {
    const auto of = stage_of_ops(step.graph, pipe.stages);
    const auto seconds = stage_seconds(step.graph, step.result, of, S);
    for (std::size_t s = 0; s < S; ++s) {
      forward[s] += seconds[s].forward_s / static_cast<double>(M);
      backward[s] += seconds[s].backward_s / static_cast<double>(M);
      optimizer[s] = std::max(optimizer[s], seconds[s].optimizer_s);
    }
    const auto bytes = boundary_bytes(step.graph, of, S);
    for (std::size_t b = 0; b + 1 < S; ++b) boundary[b] = std::max(boundary[b], bytes[b]);
    items += step.items;
    out.verified = out.verified && step.verified;
  }
  backends::PipelineWork work;
  work.forward_s = forward;
  if (training) work.backward_s = backward;
  work.boundary_bytes = boundary;
  work.micro_batches = M;
  work.schedule = pipe.schedule;
  const backends::PipelineTime t = view.pipeline(work, used_devices);
  const double optimizer_s = *std::max_element(optimizer.begin(), optimizer.end());
  out.compute_s = t.busiest_stage_s + optimizer_s;
  out.bubble_s = t.bubble_s;
  out.bubble_kind = t.kind;
  out.items_per_step = items * static_cast<double>(p.replicas);
  out.unit = runs.unit;
  out.how = runs.how + "; each stage's share of a micro-batch's rows is the rows of its layers' ops (the loss on the last stage)";
  out.micro_batches_per_step = M;
  out.input_bytes_per_micro_batch = mean_input_bytes(runs.steps);
  out.pipeline = {{"stages", S},
                  {"micro_batches", M},
                  {"schedule", to_string(pipe.schedule)},
                  {"stage_forward_s", forward},
                  {"stage_backward_s", training ? nlohmann::json(backward) : nlohmann::json::array()},
                  {"stage_optimizer_s", optimizer},
                  {"boundary_bytes", boundary},
                  {"makespan_s", t.makespan_s},
                  {"busiest_stage_s", t.busiest_stage_s},
                  {"stage_busy_s", t.stage_busy_s},
                  {"bubble_s", t.bubble_s},
                  {"bubble_share", t.bubble_share},
                  {"equal_stage_bubble_share", static_cast<double>(S - 1) / static_cast<double>(M + static_cast<std::int64_t>(S) - 1)},
                  {"peak_in_flight", t.peak_in_flight},
                  {"kind", to_string(t.kind)},
                  {"closed_form_s", t.closed_form_s},
                  {"closed_form", t.closed_form},
                  {"detail", t.detail}};
  if (t.closed_form_s > 0) out.pipeline["time_over_closed_form"] = t.makespan_s / t.closed_form_s;
  const DeviceStep& first = runs.steps.front();
  const auto memory = stage_memory(first.graph, first.training, stage_of_ops(first.graph, pipe.stages), S);
  out.memory = memory_json(memory, t.peak_in_flight, view, first);
  if (training && p.replicas > 1) {
    const backends::LinkTime a = gradient_allreduce(view, memory, p.replicas, p);
    out.collective_s = a.time_s;
    out.collective_kind = a.kind;
    out.allreduce = link_json(a);
  }
  // One device: the workload without its section, the whole graph in one step.
  if (M == 1) {
    out.one_device_s = first.result.time_s;
    out.one_device_items = first.items;
    out.one_device_input_bytes = first.host_input_bytes;
  } else {
    try {
      const DeviceStep whole = run_whole_step(w, device, options);
      out.one_device_s = whole.result.time_s;
      out.one_device_items = whole.items;
      out.one_device_input_bytes = whole.host_input_bytes;
      out.verified = out.verified && whole.verified;
    } catch (const PlanError& e) {
      out.one_device_what = std::string("not known: the whole graph does not fit one ") + view.device_word() + " (" + e.what() + ")";
    }
  }
  if (out.one_device_what.empty()) out.one_device_what = "one " + view.device_word() + " running the whole graph in one step";
  out.device_steps.push_back(first);
  return out;
}

// METIS partitions, one per node (DistGNN): the largest partition's step, each layer's halo exchange
// (forward, and backward for the layers whose input gradient is needed), the all-reduce among the nodes.
ScaledStep scale_partitions(const workloads::Workload& w, const backends::SystemView& view, Backend& device, const DeviceOptions& options) {
  const ParallelSpec& p = *w.parallel;
  const std::int64_t P = p.partitions;
  const bool training = w.model->train.has_value();
  const std::int64_t value_bytes = dtype_bytes(w.model->dtype);
  ScaledStep out = started(view);
  if (w.model->loader) {
    // Each node samples its own batches from the graph; a sampled node is remote with the share of the
    // graph's edges the partitions cut, and before each layer its rows are exchanged with its owner (and
    // in a training step the gradients of those rows go back, for every layer but the first), as for the
    // whole graph below.
    const auto parts = workloads::graphs::metis_halo(workloads::graphs::build(w.model->graph, w.seed), static_cast<std::int32_t>(P), w.seed);
    std::int64_t cut = 0, all = 0;
    for (const auto& part : parts) {
      cut += part.cut_edges;
      all += part.cut_edges + part.local_edges;
    }
    const double remote_share = all > 0 ? static_cast<double>(cut) / static_cast<double>(all) : 0.0;
    const std::int64_t R = p.replicas * P, A = p.gradient_accumulation;
    const DeviceRuns runs = run_loader_batches(w, device, R * A, options);
    std::vector<double> worker_s(static_cast<std::size_t>(R), 0.0);
    nlohmann::json layers = nlohmann::json::array();
    for (std::int64_t a = 0; a < A; ++a) {
      std::vector<workloads::graphs::PartitionHalo> remote(static_cast<std::size_t>(R));
      for (std::int64_t r = 0; r < R; ++r) {
        const DeviceStep& step = runs.steps[static_cast<std::size_t>(a * R + r)];
        const double opt = optimizer_seconds(step);
        worker_s[static_cast<std::size_t>(r)] += step.result.time_s - opt + (a == A - 1 ? opt : 0.0);
        out.items_per_step += step.items;
        out.verified = out.verified && step.verified;
        // The seeds are the node's own; the sampled neighbours are remote with the cut share.
        const double sampled = static_cast<double>(step.nodes) - (runs.unit == "seed_nodes" ? step.items : 0.0);
        remote[static_cast<std::size_t>(r)].halo_nodes = static_cast<std::int64_t>(sampled * remote_share + 0.5);
      }
      std::int64_t in = w.model->num_features;
      for (std::size_t l = 0; l < w.model->layers.size(); ++l) {
        const backends::LinkTime h = view.halo_exchange(remote, in * value_bytes);
        const int times = training && l > 0 ? 2 : 1;
        out.halo_s += times * h.time_s;
        if (a == 0) layers.push_back({{"layer", w.model->layers[l].name}, {"row_bytes", in * value_bytes}, {"exchanges", times}, {"time_s", h.time_s}});
        out.halo = link_json(h);
        in = workloads::layers::output_width(w.model->layers[l], in);
      }
    }
    out.halo["layers"] = layers;
    out.halo["time_s"] = out.halo_s;
    out.halo["per_step"] = std::to_string(A) + " micro-step" + (A == 1 ? "" : "s") + ", each exchanging every layer's remote rows";
    out.halo["remote_share"] = remote_share;
    out.compute_s = *std::max_element(worker_s.begin(), worker_s.end());
    out.unit = runs.unit;
    out.how = runs.how + "; each of the " + std::to_string(R) + " nodes takes its own batch";
    out.micro_batches_per_step = A;
    out.input_bytes_per_micro_batch = mean_input_bytes(runs.steps);
    out.one_device_micro_batches = static_cast<double>(R * A);
    out.one_device_accumulation = A;
    out.one_device_input_bytes = out.input_bytes_per_micro_batch;
    out.one_device_s = std::accumulate(worker_s.begin(), worker_s.end(), 0.0);
    out.one_device_items = out.items_per_step;
    out.one_device_what = "one node running every node's batches one after the other, no exchange";
    out.device_steps.push_back(runs.steps.front());
  } else {
    PartitionRuns runs = run_largest_partition(w, device, P, options);
    const DeviceStep& step = runs.runs.steps.front();
    out.compute_s = step.result.time_s;
    out.verified = step.verified;
    out.items_per_step = static_cast<double>(runs.graph_nodes * p.replicas);
    out.unit = "nodes";
    out.how = runs.runs.how;
    out.input_bytes_per_micro_batch = step.host_input_bytes;
    // Each layer's input rows of the halo, forward; backward the gradients of those rows go back to their
    // owners for every layer but the first (no gradient of the input features is needed).
    std::int64_t in = w.model->num_features;
    nlohmann::json layers = nlohmann::json::array();
    for (std::size_t l = 0; l < w.model->layers.size(); ++l) {
      const backends::LinkTime h = view.halo_exchange(runs.parts, in * value_bytes);
      const int times = training && l > 0 ? 2 : 1;
      out.halo_s += times * h.time_s;
      layers.push_back({{"layer", w.model->layers[l].name}, {"row_bytes", in * value_bytes}, {"exchanges", times}, {"time_s", h.time_s}});
      out.halo = link_json(h);
      in = workloads::layers::output_width(w.model->layers[l], in);
    }
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& part : runs.parts)
      parts.push_back({{"owned_nodes", part.owned_nodes}, {"halo_nodes", part.halo_nodes}, {"local_edges", part.local_edges}, {"cut_edges", part.cut_edges}});
    out.halo["layers"] = layers;
    out.halo["partitions"] = parts;
    out.halo["time_s"] = out.halo_s;
    try {
      const DeviceStep whole = run_whole_step(w, device, options);
      out.one_device_s = whole.result.time_s;
      out.one_device_items = whole.items;
      out.one_device_input_bytes = whole.host_input_bytes;
      out.one_device_what = "one node running the whole graph in one step";
    } catch (const PlanError& e) {
      out.one_device_what = std::string("not known: the whole graph does not fit one node (") + e.what() + ")";
    }
    out.device_steps.push_back(step);
  }
  const DeviceStep& first = out.device_steps.front();
  const auto memory = stage_memory(first.graph, first.training, stage_of_ops(first.graph, {}), 1);
  out.memory = memory_json(memory, {1}, view, first);
  const std::int64_t ranks = p.replicas * P;
  if (training && ranks > 1) {
    const backends::LinkTime a = gradient_allreduce(view, memory, ranks, p);
    out.collective_s = a.time_s;
    out.collective_kind = a.kind;
    out.allreduce = link_json(a);
  }
  return out;
}

std::string kind_text(ResultKind k) { return to_string(k); }

// The lines under the table for one backend: how its device step was run, the all-reduce against its
// closed form, a pipeline's bubble, what one device means, memory per device.
void write_step_notes(std::ostream& notes, const std::string& name, const ScaledStep& s) {
  notes << name << ": " << s.how << "\n";
  if (s.allreduce.contains("closed_form_s") && s.allreduce["kind"] == "simulated")
    notes << "  all-reduce " << format_time(s.collective_s) << " simulated, closed form " << format_time(s.allreduce["closed_form_s"].get<double>())
          << "\n";
  if (!s.pipeline.is_null())
    notes << "  pipeline: bubble share " << std::fixed << std::setprecision(3) << s.pipeline["bubble_share"].get<double>()
          << " (equal stages: " << s.pipeline["equal_stage_bubble_share"].get<double>() << "), makespan "
          << format_time(s.pipeline["makespan_s"].get<double>()) << " " << s.pipeline["kind"].get<std::string>() << ", closed form "
          << format_time(s.pipeline["closed_form_s"].get<double>()) << std::defaultfloat << "\n";
  notes << "  one device: " << s.one_device_what << "\n";
  notes << "  memory per device (modeled):";
  for (const nlohmann::json& m : s.memory) {
    const std::size_t stage = m["stage"].get<std::size_t>();
    notes << (stage > 0 ? ";" : "") << (s.memory.size() > 1 ? " stage " + std::to_string(stage) : std::string()) << " "
          << si_text(static_cast<double>(m["total_bytes"].get<std::int64_t>()), "B") << " (parameters "
          << si_text(static_cast<double>(m["parameter_bytes"].get<std::int64_t>()), "B") << ", optimizer state "
          << si_text(static_cast<double>(m["optimizer_state_bytes"].get<std::int64_t>()), "B") << ", activations "
          << si_text(static_cast<double>(m["activation_bytes_in_flight"].get<std::int64_t>()), "B") << ")";
    if (m.contains("peak_tile_bytes") && &m == &s.memory.back())
      notes << "; peak tile " << si_text(static_cast<double>(m["peak_tile_bytes"]["bytes"].get<std::int64_t>()), "B") << " (simulated)";
  }
  notes << "\n";
}

}  // namespace

RunResult run_scaling(const RunRequest& request) {
  const workloads::Workload& workload = request.workload;
  const ParallelSpec& p = *workload.parallel;
  const std::int64_t used = p.devices();

  nlohmann::json scaling = nlohmann::json::array();
  nlohmann::json results = nlohmann::json::array();
  std::vector<BackendResult> device_results;
  std::ostringstream table, notes;
  bool all_verified = true;
  for (const backends::BackendSpec& spec : request.backends) {
    const auto view = backends::system_view(spec);
    if (used > view->devices())
      throw InputError(workload.source_file, "parallel",
                       "at most " + std::to_string(view->devices()) + " devices (replicas x stages x partitions) on " + spec.name() + " (" +
                           std::to_string(view->devices()) + " " + view->device_word() + (view->devices() == 1 ? "" : "s") +
                           "; a system with more, or fewer replicas)",
                       std::to_string(used) + " (" + workloads::parallel::to_string(p) + ")");
    if (request.progress) std::cerr << "tilesim: running " << spec.name() << ": " << workloads::parallel::to_string(p) << " ..." << std::endl;
    DeviceOptions options;
    options.run.timing_only = request.timing_only;
    options.run.warmup = request.warmup;
    options.run.repeats = request.repeats;
    options.fixed_shapes = spec.descriptor->info().fixed_shapes;
    options.shapes_only = !spec.descriptor->info().reads_input_values;
    const auto device = view->device_backend(used);

    ScaledStep s = p.pipeline      ? scale_pipeline(workload, *view, *device, options, used)
                   : p.partitions > 1 ? scale_partitions(workload, *view, *device, options)
                                      : scale_replicas(workload, *view, *device, options);
    all_verified = all_verified && s.verified;
    const double step_s = s.compute_s + s.collective_s + s.bubble_s + s.halo_s;
    const std::optional<PricedEpochs> priced = priced_epochs(spec, workload, s, step_s, used);
    const ScalingRates rates = scaling_rates(s, step_s, used, priced);
    const double throughput = rates.throughput;
    const std::optional<double>& one_throughput = rates.one_device;
    const std::optional<double>& efficiency = rates.efficiency;
    const ResultKind compute_kind = view->compute_kind();
    nlohmann::json step = {{"time_s", step_s},
                           {"compute_s", s.compute_s},
                           {"collective_s", s.collective_s},
                           {"bubble_s", s.bubble_s},
                           {"halo_exchange_s", s.halo_s},
                           {"kinds", {{"compute", kind_text(compute_kind)},
                                      {"collective", kind_text(s.collective_kind)},
                                      {"bubble", kind_text(s.bubble_kind)},
                                      {"halo_exchange", "modeled"}}},
                           {"what", "compute: the busiest device's own work (with the optimizer update); collective: the "
                                    "gradients' all-reduce after it; bubble: a pipeline's idle fill, drain and transfers; halo "
                                    "exchange: the partitions' feature rows between layers. They add up to the step"}};
    nlohmann::json entry = {{"backend", spec.name()},
                            {"system", view->system_name()},
                            {"device", view->device_word()},
                            {"devices_in_system", view->devices()},
                            {"devices_used", used},
                            {"parallel", workloads::parallel::to_json(p)},
                            {"parallel_text", workloads::parallel::to_string(p)},
                            {"device_step", s.how},
                            {"step", step},
                            {"throughput", throughput_json(s, throughput)},
                            {"one_device", {{"what", s.one_device_what},
                                            {"step_time_s", s.one_device_s ? nlohmann::json(*s.one_device_s) : nlohmann::json(nullptr)},
                                            {"throughput", one_throughput ? nlohmann::json(*one_throughput) : nlohmann::json(nullptr)},
                                            {"kind", kind_text(compute_kind)}}},
                            {"scaling_efficiency", efficiency ? nlohmann::json(*efficiency) : nlohmann::json(nullptr)},
                            {"scaling_efficiency_what", "throughput of the devices used / (devices used x one device's throughput)"},
                            {"memory_per_device", s.memory},
                            {"all_steps_verified", s.verified},
                            {"system_provenance", view->provenance()}};
    if (priced) add_execution_fields(entry, *priced, rates);
    if (!s.allreduce.is_null()) entry["allreduce"] = s.allreduce;
    if (!s.pipeline.is_null()) entry["pipeline"] = s.pipeline;
    if (!s.halo.is_null()) entry["halo_exchange"] = s.halo;
    scaling.push_back(entry);
    nlohmann::json device_result = s.device_steps.front().result.to_json();
    device_result["scaling_role"] = "one device's step: " + s.how;
    results.push_back(device_result);
    device_results.push_back(s.device_steps.front().result);

    // The summary line, each time with its kind's initial (s simulated, m modeled).
    const auto tagged = [](double t, ResultKind k, bool present) {
      return present ? format_time(t) + " " + std::string(1, to_string(k)[0]) : std::string("-");
    };
    std::ostringstream eff;
    if (efficiency) eff << std::fixed << std::setprecision(3) << *efficiency;
    else eff << "-";
    table << std::left << std::setw(24) << spec.name() << std::right << std::setw(8)
          << std::to_string(used) + "/" + std::to_string(view->devices()) << std::setw(14) << format_time(step_s) << std::setw(15)
          << tagged(s.compute_s, compute_kind, true) << std::setw(15) << tagged(s.collective_s, s.collective_kind, !s.allreduce.is_null() && s.collective_s > 0)
          << std::setw(15) << tagged(s.bubble_s, s.bubble_kind, p.pipeline.has_value()) << std::setw(15)
          << tagged(s.halo_s, ResultKind::modeled, p.partitions > 1) << std::setw(19) << si_text(throughput, "") << std::setw(11) << eff.str()
          << "\n";
    write_step_notes(notes, spec.name(), s);
    if (priced) write_execution_note(notes, *priced);
  }

  RunResult result;
  result.report = report_header(request);
  result.report["results"] = results;
  result.report["scaling"] = scaling;
  std::ostringstream summary;
  summary << "scaling: " << workloads::parallel::to_string(p) << ", " << used << " device" << (used == 1 ? "" : "s") << "\n"
          << std::left << std::setw(24) << "backend" << std::right << std::setw(8) << "devices" << std::setw(14) << "step"
          << std::setw(15) << "compute" << std::setw(15) << "all-reduce" << std::setw(15) << "bubble" << std::setw(15) << "halo"
          << std::setw(19) << scaling.front()["throughput"]["unit"].get<std::string>() << std::setw(11) << "efficiency" << "\n"
          << table.str() << "(s: simulated, m: modeled; efficiency: throughput / (devices x one device's))\n"
          << notes.str();
  result.summary = summary.str();
  result.results = std::move(device_results);
  result.all_verified = all_verified;
  return result;
}

}  // namespace tilesim::runs
