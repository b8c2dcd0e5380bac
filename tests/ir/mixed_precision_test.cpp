// Half-precision training in mixed precision: the cast op (ir/op_graph.hpp) against its reference (the
// scaled input rounded once into the output dtype, exactly) on the CPU kernels, the CUDA bodies
// (host-emulated) and the GPU model; a half model's training step as lowered (float32 master weights
// and their casts, the float32 loss, the scaled loss gradient and the unscaled casts back); the train
// section's "loss_scale" and its errors; and a few float16 and bfloat16 steps on the CPU kernels,
// verified, their losses falling beside the float32 run's.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/reference/reference.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/kernel_bodies.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/cast_cases.hpp"
#include "tests/support/cpu_op_cases.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;
using json = nlohmann::json;
using Catch::Matchers::Contains;
namespace cuda = tilesim::kernels::cuda;

namespace {

// What a correct cast stores: the exact product (a float32 value for these scales) rounded once.
std::vector<float> expected_cast(const tilesim_test::OpCase& c) {
  const Op& op = c.op();
  std::vector<float> out;
  for (float x : c.values.f32(op.input)) out.push_back(round_to(op.dtype, static_cast<float>(static_cast<double>(op.cast_scale()) * x)));
  return out;
}

bool same_values(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

const DType kValueDTypes[] = {DType::float32, DType::float16, DType::bfloat16};

json half_gcn(const std::string& dtype, json train) {
  return {{"name", "mixed"},
          {"seed", 5},
          {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 60}, {"num_edges", 300}}},
          {"num_features", 12},
          {"dtype", dtype},
          {"model", json::array({{{"layer", "gcn"}, {"name", "conv1"}, {"out", 16}, {"activation", "relu"}},
                                 {{"layer", "gcn"}, {"name", "conv2"}, {"out", 4}}})},
          {"train", train}};
}

json mixed_node_train(json extra = json::object()) {
  json t = {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}};
  for (auto it = extra.begin(); it != extra.end(); ++it) t[it.key()] = it.value();
  return t;
}

std::string mixed_error_of(const json& doc) {
  return tilesim_test::required_input_error_of([&] { workloads::parse_workload(doc, "w.json"); });
}

const Op* producer_of(const OpGraph& g, TensorId t) {
  for (const Op& op : g.ops)
    if (op.output == t) return &op;
  return nullptr;
}

// The CPU backend's losses over `steps` steps of a workload, every op of every step verified.
std::vector<double> cpu_losses(const json& doc, int steps) {
  const workloads::Instance s = workloads::instantiate(workloads::parse_workload(doc, "w.json"));
  kernels::cpu::CpuBackend cpu;
  TensorValues values = s.values;
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    const BackendResult r = cpu.run(s.graph, values, tilesim_test::single_call());
    for (const OpResult& row : r.ops) {
      INFO("step " << step + 1 << " op " << row.op << ": " << row.verification);
      CHECK(row.verified.value_or(false));
    }
    losses.push_back(cpu.outputs().f32(s.training.loss).at(0));
    workloads::training::advance_step(s.training, cpu.outputs(), values);
  }
  return losses;
}

}  // namespace

TEST_CASE("cast: the op keeps its input's shape and dtype from the graph, and counts bytes at each side's dtype",
          "[mixed_precision][ir][unit]") {
  OpGraph g;
  const TensorId bias = g.add_tensor({"bias", {7}, DType::float32});
  Op op = tilesim_test::make_op("bias.cast", OpKind::cast, {1, 7, 0});
  op.dtype = DType::float16;
  op.input = bias;
  const TensorId out = g.add_op(op);
  const Op& cast = g.ops.back();
  CHECK(g.tensor(out).shape == std::vector<std::int64_t>{7});
  CHECK(g.tensor(out).dtype == DType::float16);
  CHECK(cast.input_dtype == DType::float32);
  CHECK(cast.scalar == 1.0f);  // 0, an Op's default, means 1
  CHECK(to_string(cast.kind) == "cast");
  CHECK(op_kind_from_string("cast") == OpKind::cast);
  CHECK_FALSE(is_training_kind(OpKind::cast));
  CHECK(cast.min_bytes_read() == 7 * 4);
  CHECK(cast.min_bytes_written() == 7 * 2);
  CHECK(cast.flops() == 0);  // a conversion
  Op scaled = op;
  scaled.name = "scaled";
  scaled.input = out;
  scaled.dtype = DType::float32;
  scaled.scalar = 0x1p-10f;
  g.add_op(scaled);
  CHECK(g.ops.back().input_dtype == DType::float16);
  CHECK(g.ops.back().flops() == 7);  // one multiply per element
  CHECK(g.ops.back().min_bytes() == 7 * 2 + 7 * 4);

  Op wrong = op;
  wrong.name = "wrong";
  wrong.shape = {7, 1, 0};
  CHECK_THROWS_WITH(g.add_op(wrong), Contains("op 'wrong' (cast): input 'bias' is [7]"));
  Op to_int = op;
  to_int.name = "to_int";
  to_int.dtype = DType::int32;
  CHECK_THROWS_WITH(g.add_op(to_int), Contains("casts to int32, which is not a value dtype"));
  Op infinite = op;
  infinite.name = "infinite";
  infinite.scalar = INFINITY;
  CHECK_THROWS_WITH(g.add_op(infinite), Contains("is not finite"));
}

TEST_CASE("cast: the reference is the scaled input rounded once, exactly, a truncated, unrounded or unscaled cast fails",
          "[mixed_precision][reference][unit]") {
  for (const DType to : {DType::float16, DType::bfloat16}) {
    INFO(to_string(to));
    const tilesim_test::OpCase c = tilesim_test::cast_case(DType::float32, to, 1024.0f, 4, 25);
    const std::vector<float> good = expected_cast(c);
    const reference::Verification ok = reference::verify(c.op(), c.values, good);
    INFO(ok.detail);
    CHECK(ok.ok);
    CHECK_THAT(ok.detail, Contains("float32 -> " + to_string(to) + " times 1024, each element"));  // 3.3e38 * 1024 overflows float32
    const tilesim_test::OpCase plain = tilesim_test::cast_case(DType::float32, to, 1.0f, 4, 25);
    const reference::Verification exact = reference::verify(plain.op(), plain.values, expected_cast(plain));
    CHECK(exact.ok);
    CHECK_THAT(exact.detail, Contains("float32 -> " + to_string(to) + ", each element exactly the float32 product rounded once to " + to_string(to)));
    CHECK(same_values(reference::compute(c.op(), c.values), good));

    // Rounded toward zero instead of to nearest: a value of the dtype, one unit off where it differs.
    std::vector<float> truncated = good;
    std::size_t differ = 0;
    const std::vector<float>& x = c.values.f32(c.op().input);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double exact = 1024.0 * x[i];
      const float rounded = good[i];
      if (!std::isfinite(rounded) || static_cast<double>(rounded) == exact || differ == 3) continue;
      if (std::fabs(static_cast<double>(rounded)) > std::fabs(exact)) {
        truncated[i] = std::nextafter(rounded, 0.0f);
        while (!representable(to, truncated[i])) truncated[i] = std::nextafter(truncated[i], 0.0f);
        ++differ;
      }
    }
    REQUIRE(differ > 0);
    CHECK_FALSE(reference::verify(c.op(), c.values, truncated).ok);
    // The float32 product never stored in the dtype.
    std::vector<float> unrounded;
    for (float v : x) unrounded.push_back(1024.0f * v);
    const reference::Verification raw = reference::verify(c.op(), c.values, unrounded);
    CHECK_FALSE(raw.ok);
    CHECK_THAT(raw.detail, Contains("not a " + to_string(to) + " value"));
    // Not scaled.
    std::vector<float> unscaled;
    for (float v : x) unscaled.push_back(round_to(to, v));
    CHECK_FALSE(reference::verify(c.op(), c.values, unscaled).ok);
  }
  // Back to float32 with the inverse scale: exact, and a flushed subnormal fails.
  const tilesim_test::OpCase back = tilesim_test::cast_case(DType::float16, DType::float32, 0x1p-10f, 4, 25);
  std::vector<float> good = expected_cast(back);
  CHECK(reference::verify(back.op(), back.values, good).ok);
  bool flushed = false;
  for (float& v : good)
    if (v != 0 && std::fabs(v) < 0x1p-30f && !flushed) {
      v = 0.0f;
      flushed = true;
    }
  REQUIRE(flushed);
  CHECK_FALSE(reference::verify(back.op(), back.values, good).ok);
  // A scale whose product is not a float32 value: within one float32 rounding plus the store's.
  const tilesim_test::OpCase odd = tilesim_test::cast_case(DType::float32, DType::bfloat16, 3.0f, 2, 10);
  const reference::Verification v = reference::verify(odd.op(), odd.values, expected_cast(odd));
  INFO(v.detail);
  CHECK(v.ok);
}

TEST_CASE("cast: the CPU kernels convert between every pair of value dtypes, scaled or not, bit for bit as the reference",
          "[mixed_precision][cpu][unit]") {
  kernels::cpu::CpuBackend cpu;
  for (const DType from : kValueDTypes)
    for (const DType to : kValueDTypes)
      for (const float scale : {1.0f, 1024.0f, 0x1p-10f})
        for (const std::int64_t rows : {std::int64_t{3}, std::int64_t{9000}}) {  // the tail alone, and threaded chunks
          INFO(to_string(from) << " -> " << to_string(to) << " x " << scale << ", " << rows << " rows");
          const tilesim_test::OpCase c = tilesim_test::cast_case(from, to, scale, rows, 13);
          const BackendResult r = cpu.run(c.graph, c.values, tilesim_test::single_call());
          INFO(r.ops.at(0).verification);
          CHECK(r.ops.at(0).verified == true);
          CHECK(same_values(cpu.outputs().f32(c.op().output), expected_cast(c)));
          CHECK(cpu.outputs().dtype(c.op().output) == to);
        }
}

TEST_CASE("cast: the CUDA cast body (host-emulated) converts between every pair of storages as the reference",
          "[mixed_precision][kernels][cuda][unit]") {
  const auto check_pair = [](auto in_storage, auto out_storage, DType from, DType to) {
    using In = decltype(in_storage);
    using Out = decltype(out_storage);
    for (const float scale : {1.0f, 1024.0f, 0x1p-10f}) {
      INFO(to_string(from) << " -> " << to_string(to) << " x " << scale);
      const tilesim_test::OpCase c = tilesim_test::cast_case(from, to, scale, 7, 11);
      const std::vector<typename In::type> in = cuda::stored<In>(c.values.f32(c.op().input));
      for (const cuda::LaunchShape grid : {cuda::launch_shape(77), cuda::launch_shape(77, 32, 1)}) {
        std::vector<typename Out::type> out(77, Out::store(std::numeric_limits<float>::quiet_NaN()));
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::cast_body<In, Out>(t, in.data(), scale, 77, out.data()); });
        const std::vector<float> got = cuda::widened<Out>(out);
        const reference::Verification v = reference::verify(c.op(), c.values, got);
        INFO(v.detail);
        CHECK(v.ok);
        CHECK(same_values(got, expected_cast(c)));
      }
    }
  };
  const auto from_each = [&](auto in_storage, DType from) {
    check_pair(in_storage, cuda::Float32Storage{}, from, DType::float32);
    check_pair(in_storage, cuda::Float16Storage{}, from, DType::float16);
    check_pair(in_storage, cuda::BFloat16Storage{}, from, DType::bfloat16);
  };
  from_each(cuda::Float32Storage{}, DType::float32);
  from_each(cuda::Float16Storage{}, DType::float16);
  from_each(cuda::BFloat16Storage{}, DType::bfloat16);
}

TEST_CASE("cast: the GPU model charges one elementwise pass, the input read at its dtype's bytes and the output written at the op's",
          "[mixed_precision][gpu][formula]") {
  const gpu::GpuMachine m = gpu::load_gpu_machine("a100-40gb");
  for (const auto& [from, to] : std::vector<std::pair<DType, DType>>{{DType::float32, DType::float16}, {DType::bfloat16, DType::float32}}) {
    Op op = tilesim_test::make_op("c", OpKind::cast, {1 << 20, 64, 0});
    op.input_dtype = from;
    op.dtype = to;
    op.scalar = 1.0f;
    const gpu::GpuPrediction p = gpu::predict_op(op, m, gpu::GpuMode::kernel);
    REQUIRE(p.kernels.size() == 1);
    const double bytes = (1 << 20) * 64.0 * 6.0;  // 4 bytes in and 2 out, or 2 in and 4 out
    CHECK(p.kernels[0].l2_bytes == Approx(bytes));
    CHECK(p.footprint_bytes == Approx(bytes));
    CHECK(p.flops == 0);
    // Far beyond L2, so DRAM-bound: at least the bytes over the machine's HBM bandwidth.
    CHECK(p.kernel_s >= bytes / m.hbm_bytes_per_s);
    CHECK(p.kernel_s < 1.5 * bytes / m.hbm_bytes_per_s + 1e-4);
    const gpu::GpuPrediction eager = gpu::predict_op(op, m, gpu::GpuMode::eager);
    CHECK(eager.time_s >= p.kernel_s);
  }
}

TEST_CASE("train: a half model's step keeps float32 master weights, casts them, computes its loss in float32 and scales its gradient",
          "[mixed_precision][training][workload][unit]") {
  for (const auto& [dtype, scale] : std::vector<std::pair<DType, double>>{{DType::float16, 1024.0}, {DType::bfloat16, 1.0}}) {
    INFO(to_string(dtype));
    const workloads::Workload w = workloads::parse_workload(half_gcn(to_string(dtype), mixed_node_train()), "w.json");
    REQUIRE(w.model->train->loss_scale == scale);  // the dtype's default
    const json echo = workloads::to_json(w);
    CHECK(echo["dtype"] == to_string(dtype));
    CHECK(echo["train"]["loss_scale"] == scale);
    CHECK(echo["train"]["master_weight_dtype"] == "float32");
    json given = echo;  // the echo, without its source_file, is valid input with the same meaning
    given.erase("source_file");
    json again = workloads::to_json(workloads::parse_workload(given, "w.json"));
    again.erase("source_file");
    CHECK(again == given);

    const workloads::Instance s = workloads::instantiate(w);
    const OpGraph& g = s.graph;
    REQUIRE(s.training.active());
    CHECK(s.training.loss_scale == scale);
    REQUIRE(s.training.parameters.size() == 4);
    for (const auto& slot : s.training.parameters) {
      const TensorInfo& master = g.tensor(slot.param);
      INFO(master.name);
      CHECK(master.dtype == DType::float32);
      CHECK(s.values.dtype(slot.param) == DType::float32);
      // Read by its one cast to the model dtype, in its layer.
      int readers = 0;
      for (const Op& op : g.ops) {
        if (op.input != slot.param && op.weight != slot.param && op.bias != slot.param) continue;
        ++readers;
        if (op.kind == OpKind::optimizer_step) continue;
        CHECK(op.kind == OpKind::cast);
        CHECK(op.name == master.name + ".cast");
        CHECK(op.dtype == dtype);
        CHECK(op.phase == OpPhase::forward);
      }
      CHECK(readers == 2);  // the cast and the update
      // Its gradient: the half gradient cast back to float32 and unscaled.
      const Op* back = producer_of(g, slot.grad);
      REQUIRE(back != nullptr);
      CHECK(back->kind == OpKind::cast);
      CHECK(back->input_dtype == dtype);
      CHECK(back->dtype == DType::float32);
      CHECK(back->scalar == static_cast<float>(1.0 / scale));
      CHECK(back->phase == OpPhase::backward);
      CHECK(g.tensor(slot.state).dtype == DType::float32);
      CHECK(g.tensor(slot.update).dtype == DType::float32);
    }
    CHECK(g.tensor(s.training.step).dtype == DType::float32);
    std::map<std::string, const Op*> by_name;
    for (const Op& op : g.ops) by_name[op.name] = &op;
    REQUIRE(by_name.count("loss.input_cast"));
    REQUIRE(by_name.count("loss.grad.scaled_cast"));
    const Op& in = *by_name["loss.input_cast"];
    CHECK((in.input_dtype == dtype && in.dtype == DType::float32 && in.phase == OpPhase::loss));
    const Op& loss = *by_name["loss"];
    CHECK(loss.dtype == DType::float32);
    CHECK(loss.input == in.output);
    const Op& scaled = *by_name["loss.grad.scaled_cast"];
    CHECK((scaled.input == by_name["loss.grad"]->output && scaled.dtype == dtype && scaled.scalar == static_cast<float>(scale)));
    // Everything else of the forward and backward passes computes in the model's dtype.
    for (const Op& op : g.ops) {
      if (op.kind == OpKind::cast || op.phase == OpPhase::loss || op.phase == OpPhase::optimizer) continue;
      INFO(op.name);
      CHECK(op.dtype == dtype);
    }
    for (const Op& op : g.ops)
      if (op.phase == OpPhase::optimizer) CHECK(op.dtype == DType::float32);
  }
  // The master weights hold the values a float32 model starts from (the same streams).
  const workloads::Instance f32 = workloads::instantiate(workloads::parse_workload(half_gcn("float32", mixed_node_train()), "w.json"));
  const workloads::Instance f16 = workloads::instantiate(workloads::parse_workload(half_gcn("float16", mixed_node_train()), "w.json"));
  for (std::size_t i = 0; i < f32.training.parameters.size(); ++i)
    CHECK(f16.values.f32(f16.training.parameters[i].param) == f32.values.f32(f32.training.parameters[i].param));
  for (const Op& op : f32.graph.ops) CHECK(op.kind != OpKind::cast);  // a float32 step has no casts
}

TEST_CASE("train: \"loss_scale\" is a power of two from 1 to 2^24, and 1 or absent for a float32 model", "[mixed_precision][training][workload][unit]") {
  const std::string power = "expected a power of two from 1 to 16777216 (2^0 to 2^24: the static loss scale, exact in float32)";
  CHECK_THAT(mixed_error_of(half_gcn("float16", mixed_node_train({{"loss_scale", 1000}}))), Contains("w.json: train.loss_scale: " + power + ", found 1000"));
  for (const json& bad : {json(0), json(-4), json(0.5), json(33554432), json("1024"), json(nullptr), json(INFINITY)}) {
    INFO(bad.dump());
    CHECK_THAT(mixed_error_of(half_gcn("float16", mixed_node_train({{"loss_scale", bad}}))), Contains("w.json: train.loss_scale: " + power));
  }
  CHECK(workloads::parse_workload(half_gcn("float16", mixed_node_train({{"loss_scale", 65536}})), "w.json").model->train->loss_scale == 65536.0);
  CHECK(workloads::parse_workload(half_gcn("bfloat16", mixed_node_train({{"loss_scale", 8}})), "w.json").model->train->loss_scale == 8.0);
  CHECK(workloads::parse_workload(half_gcn("float16", mixed_node_train({{"loss_scale", 1.0}})), "w.json").model->train->loss_scale == 1.0);
  CHECK_THAT(mixed_error_of(half_gcn("float32", mixed_node_train({{"loss_scale", 1024}}))),
             Contains("w.json: train.loss_scale: expected 1 or no \"loss_scale\" for a float32 model") && Contains("found 1024"));
  CHECK(workloads::parse_workload(half_gcn("float32", mixed_node_train({{"loss_scale", 1}})), "w.json").model->train->loss_scale == 1.0);
  CHECK(workloads::parse_workload(half_gcn("float32", mixed_node_train()), "w.json").model->train->loss_scale == 1.0);
  CHECK_THAT(mixed_error_of(half_gcn("float16", mixed_node_train({{"master_weight_dtype", "float16"}}))),
             Contains("w.json: train.master_weight_dtype: expected \"float32\"") && Contains("found \"float16\""));
  CHECK_NOTHROW(workloads::parse_workload(half_gcn("float16", mixed_node_train({{"master_weight_dtype", "float32"}})), "w.json"));
}

TEST_CASE("train: float16 and bfloat16 steps on the CPU kernels are verified, and their losses fall beside the float32 run's",
          "[mixed_precision][training][cpu][unit]") {
  const std::vector<double> f32 = cpu_losses(half_gcn("float32", mixed_node_train()), 4);
  const std::vector<double> f16 = cpu_losses(half_gcn("float16", mixed_node_train()), 4);
  const std::vector<double> bf16 = cpu_losses(half_gcn("bfloat16", mixed_node_train()), 4);
  for (std::size_t k = 0; k < f32.size(); ++k) {
    INFO("step " << k + 1 << ": float32 " << f32[k] << ", float16 " << f16[k] << ", bfloat16 " << bf16[k]);
    CHECK(std::fabs(f16[k] - f32[k]) <= 0.01 * f32[k]);
    CHECK(std::fabs(bf16[k] - f32[k]) <= 0.05 * f32[k]);
  }
  CHECK(f16.back() < f16.front());
  CHECK(bf16.back() < bf16.front());
  // A graph task with mse and a mean pool (SchNet's filters and cutoff in bfloat16, float16 with its
  // default scale) runs verified too.
  json schnet = {{"name", "s"},
                 {"seed", 2},
                 {"graph", {{"generator", "molecules"}, {"num_graphs", 3}, {"min_nodes", 3}, {"max_nodes", 5}}},
                 {"num_features", 8},
                 {"model", json::array({{{"layer", "schnet"}, {"name", "i1"}, {"filters", 8}, {"num_gaussians", 6}, {"cutoff", 4.0}},
                                        {{"layer", "gin"}, {"name", "g2"}, {"out", 3}}})},
                 {"train", {{"task", "graph"}, {"loss", "mse"}, {"pool", "mean"}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}}}}}};
  for (const char* dtype : {"float16", "bfloat16"}) {
    schnet["dtype"] = dtype;
    INFO(dtype);
    const std::vector<double> losses = cpu_losses(schnet, 3);
    CHECK(losses.back() < losses.front());
  }
}

TEST_CASE("train: the shipped half training examples run verified on cpu, torch-cpu and the GPU model, float16 on torch-cpu exits 2",
          "[mixed_precision][training][cli][slow]") {
  const tilesim_test::fs::path dir = tilesim_test::scratch("mixed_precision_examples");
  struct Example {
    const char* file;
    const char* backends;
  };
  // torch-cpu only where it has the dtype's CPU kernels (libtorch 1.13: no float16 mm); a built-in
  // backend list always runs cpu and the GPU model.
  for (const Example& e : {Example{"gcn_cora_train_fp16.json", "cpu,gpu-model:a100-40gb"},
                           Example{"schnet_qm9_train_bf16.json", "cpu,torch-cpu,gpu-model:a100-40gb"}}) {
    INFO(e.file);
    const auto r = tilesim_test::run_tilesim(std::string("run workloads/examples/half/") + e.file + " --backends " + e.backends +
                                                 " --steps 3 --repeats 1 --warmup 0 --json --out '" + (dir / e.file).string() + "'",
                                             dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json report = json::parse(r.out);
    CHECK(report["workload"]["train"]["master_weight_dtype"] == "float32");
    for (const auto& backend : report["results"]) {
      INFO(backend["backend"]);
      if (backend["kind"] == "modeled") {
        CHECK(backend["training"]["median_step_time_s"].get<double>() > 0);
        continue;
      }
      CHECK(backend["training"]["all_steps_verified"] == true);
      const auto& loss = backend["training"]["loss"];
      REQUIRE(loss.size() == 3);
      CHECK(loss[2].get<double>() < loss[0].get<double>());
    }
  }
  const auto refused = tilesim_test::run_tilesim("run workloads/examples/half/gcn_cora_train_fp16.json --backends torch-cpu --steps 1 --out '" +
                                                     (dir / "fp16_torch").string() + "'",
                                                 dir);
  if (refused.err.find("not built") == std::string::npos) {  // a build without libtorch says so instead
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("a float16 training step): libtorch") && Contains("has no float16 CPU kernel"));
  }
}
