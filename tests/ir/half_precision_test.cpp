// Half precision (float16, bfloat16) through the op graph: the dtype's rounding against the
// reference's independent search of the formats, tensor values stored rounded, the reference's bounds
// (a correct half output passes; an unrounded or wrong one fails), the CPU backend on every op kind of
// a training step in both dtypes, and workloads that ask for a half dtype.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"
#include "ir/half_float.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference.hpp"
#include "ir/reference/reference_ops.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "tests/support/cpu_op_cases.hpp"
#include "tests/support/dtype_cases.hpp"
#include "tests/support/op_backward_cases.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/sweep_spec.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;
using namespace tilesim_test;
namespace reference = tilesim::reference;

namespace {

RunOptions quick_half() {
  RunOptions o;
  o.warmup = 0;
  o.repeats = 2;
  return o;
}

}  // namespace

TEST_CASE("half dtypes: rounding agrees with the reference's search of each format", "[dtype][half][unit]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-30, 20);
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, 1e-8f, 3.0e-5f, 6.1e-5f, 3.3895e38f, INFINITY, -INFINITY};
  for (int i = 0; i < 4000; ++i) xs.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  for (float x : xs) {
    INFO("x = " << x);
    CHECK(float_bits(round_to(DType::float16, x)) == float_bits(static_cast<float>(reference::float16_value(reference::nearest_float16(x)))));
    CHECK(float_bits(round_to(DType::bfloat16, x)) == float_bits(static_cast<float>(reference::bfloat16_value(reference::nearest_bfloat16(x)))));
    CHECK(round_to(DType::float32, x) == x);
    CHECK(representable(DType::float16, round_to(DType::float16, x)));
    CHECK(representable(DType::bfloat16, round_to(DType::bfloat16, x)));
  }
  CHECK_FALSE(representable(DType::float16, 1.0f + 0x1p-12f));
  CHECK_FALSE(representable(DType::bfloat16, 1.0f + 0x1p-9f));
  CHECK(representable(DType::bfloat16, 1.0f + 0x1p-7f));
  CHECK(dtype_bytes(DType::float16) == 2);
  CHECK(dtype_bytes(DType::bfloat16) == 2);
  CHECK(unit_roundoff(DType::float16) == 0x1p-11);
  CHECK(unit_roundoff(DType::bfloat16) == 0x1p-8);
  CHECK(dtype_from_string("bfloat16") == DType::bfloat16);
  CHECK(to_string(DType::float16) == "float16");
}

TEST_CASE("half dtypes: tensor values are stored rounded into the dtype", "[dtype][half][unit]") {
  TensorValues v;
  v.set_f32(0, {1.0f + 0x1p-12f, 3.14159f}, DType::float16);
  CHECK(v.dtype(0) == DType::float16);
  CHECK(v.f32(0)[0] == 1.0f);
  CHECK(v.f32(0)[1] == round_to(DType::float16, 3.14159f));
  CHECK(v.f32(0)[1] != 3.14159f);
  v.set_f32(1, {1.0f + 0x1p-12f});
  CHECK(v.f32(1)[0] == 1.0f + 0x1p-12f);
  CHECK_THROWS(v.set_f32(2, {1.0f}, DType::int32));
}

TEST_CASE("half dtypes: the reference accepts a correctly rounded output and rejects an unrounded or wrong one",
          "[dtype][half][reference][unit]") {
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    OpCase c = matmul_case(8, 64, 5, true, 3);
    convert_to_dtype(c.graph, c.values, dtype);
    const Op& op = c.op();
    REQUIRE(op.dtype == dtype);
    CHECK(op.min_bytes() == (8 * 64 + 64 * 5 + 5 + 8 * 5) * 2);
    // The exact product rounded once into the dtype: correct.
    const reference::OpExpectation e = reference::expect(op, resolve_operands(op, c.values));
    std::vector<float> good(e.value.size()), unrounded(e.value.size());
    for (std::size_t i = 0; i < good.size(); ++i) {
      unrounded[i] = static_cast<float>(e.value[i]);
      good[i] = round_to(dtype, unrounded[i]);
    }
    const reference::Verification ok = reference::verify(op, c.values, good);
    INFO(ok.detail);
    CHECK(ok.ok);
    CHECK_THAT(ok.detail, Catch::Contains("plus one rounding to " + to_string(dtype)));
    // float32 results never stored in the dtype: caught, though closer to the exact value.
    bool any_unrepresentable = false;
    for (float x : unrounded) any_unrepresentable = any_unrepresentable || !representable(dtype, x);
    REQUIRE(any_unrepresentable);
    const reference::Verification raw = reference::verify(op, c.values, unrounded);
    CHECK_FALSE(raw.ok);
    CHECK_THAT(raw.detail, Catch::Contains("not a " + to_string(dtype) + " value"));
    // One element off by a few units of the dtype: caught.
    std::vector<float> wrong = good;
    wrong[3] = round_to(dtype, wrong[3] + 8 * static_cast<float>(unit_roundoff(dtype)) * std::max(1.0f, std::fabs(wrong[3])));
    CHECK_FALSE(reference::verify(op, c.values, wrong).ok);
  }
}

TEST_CASE("half dtypes: partial sums rounded in the dtype fail the float32-accumulation bound and pass the in-dtype one",
          "[dtype][half][reference][unit]") {
  // libtorch 1.13's gemm on a CPU without AVX-512 keeps a bfloat16 mm's partial sums in bfloat16: such
  // an output lies outside the bound of float32 accumulators, and within the bound that allows the
  // dtype's roundoff per addition (reference::DotAccumulation::in_dtype), which still catches a wrong one.
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    INFO(to_string(dtype));
    const std::int64_t m = 16, k = 64, n = 8;
    OpCase c = matmul_case(m, k, n, true, 11);
    convert_to_dtype(c.graph, c.values, dtype);
    const Op& op = c.op();
    const Operands o = resolve_operands(op, c.values);
    std::vector<float> in_dtype(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float sum = (*o.bias)[static_cast<std::size_t>(j)];
        for (std::int64_t p = 0; p < k; ++p)
          sum = round_to(dtype, sum + (*o.input)[static_cast<std::size_t>(i * k + p)] * (*o.weight)[static_cast<std::size_t>(p * n + j)]);
        in_dtype[static_cast<std::size_t>(i * n + j)] = sum;
      }
    const reference::Verification strict = reference::verify(op, c.values, in_dtype);
    INFO(strict.detail);
    CHECK_FALSE(strict.ok);
    reference::Accumulation accumulation;
    (dtype == DType::float16 ? accumulation.float16 : accumulation.bfloat16) = reference::DotAccumulation::in_dtype;
    CHECK(accumulation.of(dtype) == reference::DotAccumulation::in_dtype);
    CHECK(accumulation.of(DType::float32) == reference::DotAccumulation::float32);
    const reference::Verification loose = reference::verify(op, c.values, in_dtype, accumulation);
    INFO(loose.detail);
    CHECK(loose.ok);
    CHECK_THAT(loose.detail, Catch::Contains("partial sums in " + to_string(dtype)));
    // The bound grows with k (stagnation: a long sum in the dtype can drop small terms), but an element
    // off by more than it is caught.
    const reference::OpExpectation e = reference::expect(op, o, accumulation);
    std::vector<float> wrong = in_dtype;
    wrong[5] = round_to(dtype, wrong[5] + static_cast<float>(2 * e.bound[5]) + 1.0f);
    CHECK_FALSE(reference::verify(op, c.values, wrong, accumulation).ok);
    // Two backends, one accumulating each way: they agree within the two bounds together, not within
    // twice the float32 one.
    const std::vector<float> once = reference::compute(op, c.values);
    CHECK_FALSE(reference::compare_outputs(op, c.values, once, in_dtype).equal);
    const reference::Agreement both = reference::compare_outputs(op, c.values, once, in_dtype, {}, accumulation);
    INFO(both.detail);
    CHECK(both.equal);
  }
}

TEST_CASE("half dtypes: the CPU backend runs every op kind of a training step in float16 and bfloat16, verified",
          "[dtype][half][cpu][unit]") {
  kernels::cpu::CpuBackend cpu;
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    for (OpBackwardCase& c : op_backward_cases()) {
      convert_to_dtype(c.graph, c.values, dtype);
      const BackendResult r = cpu.run(c.graph, c.values, quick_half());
      REQUIRE(r.ops.size() == c.graph.ops.size());
      for (std::size_t k = 0; k < r.ops.size(); ++k) {
        INFO(to_string(dtype) << " " << c.name << ": " << r.ops[k].verification);
        CHECK(r.ops[k].verified == true);
        const std::vector<float>& out = cpu.outputs().f32(c.graph.ops[k].output);
        for (float x : out) CHECK(representable(dtype, x));
      }
    }
  }
}

TEST_CASE("half dtypes: scatters of many terms and large gathers on the CPU, serial and threaded", "[dtype][half][cpu][unit]") {
  kernels::cpu::CpuBackend cpu;
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    for (const OpKind kind : {OpKind::scatter_add, OpKind::scatter_mean, OpKind::scatter_max}) {
      for (const std::int64_t messages : {std::int64_t{40}, std::int64_t{70000}}) {
        std::mt19937 rng(11);
        OpCase c = scatter_case(kind, 16, 300, random_indices(messages, 300, rng), 5);
        convert_to_dtype(c.graph, c.values, dtype);
        const BackendResult r = cpu.run(c.graph, c.values, quick_half());
        INFO(to_string(dtype) << " " << to_string(kind) << " " << messages << ": " << r.ops[0].verification);
        CHECK(r.ops[0].verified == true);
      }
    }
    for (const std::int64_t features : {std::int64_t{3}, std::int64_t{128}}) {
      OpCase c = unary_case(UnaryFn::shifted_softplus, 0, 5000, features, 9);
      convert_to_dtype(c.graph, c.values, dtype);
      const BackendResult r = cpu.run(c.graph, c.values, quick_half());
      INFO(r.ops[0].verification);
      CHECK(r.ops[0].verified == true);
      OpCase b = binary_case(BinaryFn::divide, 5000, features, 5000, 1, 10);
      convert_to_dtype(b.graph, b.values, dtype);
      const BackendResult rb = cpu.run(b.graph, b.values, quick_half());
      INFO(rb.ops[0].verification);
      CHECK(rb.ops[0].verified == true);
    }
  }
}

TEST_CASE("half dtypes: a workload's ops and schnet_block take \"dtype\", with half the bytes", "[dtype][half][workload][unit]") {
  const nlohmann::json doc = {
      {"name", "half"},
      {"ops",
       {{{"op", "gather"}, {"num_inputs", 64}, {"num_features", 8}, {"num_outputs", 100}, {"dtype", "float16"}},
        {{"op", "gather"}, {"name", "g32"}, {"num_inputs", 64}, {"num_features", 8}, {"num_outputs", 100}},
        {{"op", "schnet_block"}, {"num_inputs", 20}, {"num_features", 8}, {"num_outputs", 60}, {"dtype", "bfloat16"}}}}};
  const workloads::Workload w = workloads::parse_workload(doc, "half.json");
  const workloads::Instance instance = workloads::instantiate(w);
  const OpGraph& g = instance.graph;
  CHECK(g.ops[0].dtype == DType::float16);
  CHECK(g.ops[1].dtype == DType::float32);
  // The 100 int32 indices keep their 4 bytes; the values take half.
  CHECK(g.ops[1].min_bytes() - 100 * 4 == 2 * (g.ops[0].min_bytes() - 100 * 4));
  CHECK(g.tensor(g.ops[0].input).bytes() * 2 == g.tensor(g.ops[1].input).bytes());
  for (std::size_t k = 2; k < g.ops.size(); ++k) {
    INFO(g.ops[k].name);
    CHECK(g.ops[k].dtype == DType::bfloat16);
  }
  for (float x : instance.values.f32(g.ops[0].input)) CHECK(representable(DType::float16, x));
  kernels::cpu::CpuBackend cpu;
  const BackendResult r = cpu.run(g, instance.values, quick_half());
  for (const OpResult& row : r.ops) {
    INFO(row.verification);
    CHECK(row.verified == true);
  }
}

TEST_CASE("half dtypes: a model's top-level \"dtype\" makes every tensor and op of it half, and is echoed",
          "[dtype][half][workload][unit]") {
  const nlohmann::json doc = {{"name", "gcn_half"},
                              {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 200}, {"num_edges", 1200}}},
                              {"num_features", 24},
                              {"dtype", "bfloat16"},
                              {"model", {{{"layer", "gcn"}, {"out", 16}, {"activation", "relu"}}, {{"layer", "gin"}, {"out", 8}}}}};
  const workloads::Workload w = workloads::parse_workload(doc, "m.json");
  REQUIRE(w.model);
  CHECK(w.model->dtype == DType::bfloat16);
  CHECK(workloads::to_json(w)["dtype"] == "bfloat16");
  const workloads::Instance instance = workloads::instantiate(w);
  for (const Op& op : instance.graph.ops) {
    INFO(op.name);
    CHECK(op.dtype == DType::bfloat16);
  }
  for (const TensorInfo& t : instance.graph.tensors) CHECK((t.dtype == DType::bfloat16 || t.dtype == DType::int32));
  kernels::cpu::CpuBackend cpu;
  const BackendResult r = cpu.run(instance.graph, instance.values, quick_half());
  for (const OpResult& row : r.ops) {
    INFO(row.op << ": " << row.verification);
    CHECK(row.verified == true);
  }

  // Beside a "train" section the model trains in mixed precision (tests/ir/mixed_precision_test.cpp): its
  // echo says the master weights' dtype and the loss scale.
  nlohmann::json train = doc;
  train["train"] = {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "sgd"}}}};
  const nlohmann::json train_echo = workloads::to_json(workloads::parse_workload(train, "m.json"));
  CHECK(train_echo["dtype"] == "bfloat16");
  CHECK(train_echo["train"]["master_weight_dtype"] == "float32");
  CHECK(train_echo["train"]["loss_scale"] == 1.0);
  nlohmann::json no_model = {{"name", "x"}, {"dtype", "float16"}, {"ops", {{{"op", "gather"}, {"num_inputs", 4}, {"num_features", 2}, {"num_outputs", 3}}}}};
  CHECK_THROWS_WITH(workloads::parse_workload(no_model, "m.json"), Catch::Contains("m.json: dtype: expected a \"dtype\" beside a \"model\""));
}

TEST_CASE("half dtypes: the simulated IPU runs every op kind of a training step in float16, verified",
          "[dtype][half][ipu][unit]") {
  // Each op alone, from the operands the CPU computed for the whole float16 step (its loss, loss gradient
  // and optimizer in float16 too, as a model.half() step without master weights has them).
  kernels::cpu::CpuBackend cpu;
  ipu::IpuBackend bow(ipu::load_ipu_machine("bow"), "ipu:bow");
  std::size_t ops_run = 0;
  for (OpBackwardCase& c : op_backward_cases()) {
    convert_to_dtype(c.graph, c.values, DType::float16);
    REQUIRE(cpu.run(c.graph, c.values, quick_half()).ops.size() == c.graph.ops.size());
    TensorValues all = c.values;
    for (std::size_t t = 0; t < c.graph.tensors.size(); ++t) {
      const auto id = static_cast<TensorId>(t);
      if (!all.has(id) && cpu.outputs().has(id)) all.set_f32(id, cpu.outputs().f32(id), cpu.outputs().dtype(id));
    }
    for (const Op& op : c.graph.ops) {
      OpGraph one = c.graph;
      one.ops = {op};
      INFO(c.name << ", op " << op.name << " (" << to_string(op.kind) << ")");
      const BackendResult r = bow.run(one, all, quick_half());
      REQUIRE(r.ops.size() == 1);
      INFO(r.ops[0].verification);
      CHECK(r.ops[0].verified == true);
      for (float x : bow.outputs().f32(op.output)) CHECK(representable(DType::float16, x));
      ++ops_run;
    }
  }
  CHECK(ops_run > 40);
}

TEST_CASE("half dtypes: on the simulated IPU float16 halves the bytes and uses the half codelet costs, bfloat16 is refused",
          "[dtype][half][ipu][unit]") {
  const ipu::IpuMachine bow = ipu::load_ipu_machine("bow");
  REQUIRE(bow.has_float16_codelets);
  const ipu::IpuMachine half = ipu::with_value_dtype(bow, DType::float16);
  CHECK(half.value_bytes() == 2);
  CHECK(half.codelets.amp_flops_per_tile_cycle == 4 * bow.codelets.amp_flops_per_tile_cycle);
  CHECK(half.codelets.elementwise_elements_per_vector == 2 * bow.codelets.elementwise_elements_per_vector);
  // MultiUpdateAdd: a row of 8 float16 is 4 atoms; a row of 7 takes the sub-word path.
  CHECK(ipu::multiupdateadd_worker_cycles(1, 0, 8, half.codelets) ==
        half.codelets.multiupdateadd_prologue_worker_cycles + half.codelets.multiupdateadd_in_range_worker_cycles +
            3 * half.codelets.multiupdateadd_per_extra_element_worker_cycles);
  CHECK(ipu::multiupdateadd_worker_cycles(1, 0, 7, half.codelets) ==
        half.codelets.multiupdateadd_prologue_worker_cycles + half.codelets.multiupdateadd_in_range_worker_cycles +
            7 * half.codelets.multiupdateadd_subword_write_worker_cycles_per_element);

  // The largest hydronet gather: fewer cycles and less SRAM in float16; on the same split, exactly half
  // the bytes its vertices write.
  OpGraph g32, g16;
  g32.add_gather_scatter("g", OpKind::gather, DType::float32, {4096, 512, 32768});
  g16.add_gather_scatter("g", OpKind::gather, DType::float16, {4096, 512, 32768});
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::int32_t> row(0, 4095);
  std::vector<std::int32_t> idx(32768);
  for (auto& i : idx) i = row(rng);
  const ipu::OpTiming t32 = ipu::simulate_op_timing(g32.ops.front(), idx, bow);
  const ipu::OpTiming t16 = ipu::simulate_op_timing(g16.ops.front(), idx, bow);
  INFO("float32 " << t32.stats.total_cycles << " cycles, float16 " << t16.stats.total_cycles);
  CHECK(t16.plan.estimated_peak_tile_bytes < t32.plan.estimated_peak_tile_bytes);
  CHECK(t16.stats.total_cycles < t32.stats.total_cycles);
  const ipu::OpPlan same_split = ipu::estimate_plan(g16.ops.front(), t32.plan.split, bow);
  const ipu::OpProgram p32 = ipu::build_op_program(g32.ops.front(), t32.plan, idx, bow);
  const ipu::OpProgram p16 = ipu::build_op_program(g16.ops.front(), same_split, idx, bow);
  CHECK(p32.sram_write_bytes > 0);
  CHECK(2 * p16.sram_write_bytes == p32.sram_write_bytes);

  // A matmul runs on the AMP units at the float16 rate.
  OpCase m32 = matmul_case(1024, 512, 256, false, 2);
  OpCase m16 = matmul_case(1024, 512, 256, false, 2);
  convert_to_dtype(m16.graph, m16.values, DType::float16);
  const ipu::OpTiming a32 = ipu::simulate_op_timing(m32.op(), {}, bow);
  const ipu::OpTiming a16 = ipu::simulate_op_timing(m16.op(), {}, bow);
  INFO("matmul float32 " << a32.stats.total_cycles << ", float16 " << a16.stats.total_cycles);
  CHECK(static_cast<double>(a16.stats.total_cycles) < 0.8 * static_cast<double>(a32.stats.total_cycles));

  convert_to_dtype(m16.graph, m16.values, DType::bfloat16);
  CHECK_THROWS_WITH(ipu::simulate_op_timing(m16.op(), {}, bow), Catch::Contains("is bfloat16") && Catch::Contains("not bfloat16"));
  // A machine file without half codelet costs holds float32 only.
  ipu::IpuMachine bare = bow;
  bare.has_float16_codelets = false;
  bare.file = "bare.json";
  CHECK_FALSE(ipu::models_value_dtype(bare, DType::float16));
  CHECK_THROWS_WITH(ipu::simulate_op_timing(g16.ops.front(), idx, bare), Catch::Contains("bare.json has no \"codelets_float16\" section"));
}

TEST_CASE("half dtypes: tilesim run reports half ops on the cpu, the GPU model and the IPU (float16), and refuses bfloat16 on the IPU with exit code 2",
          "[dtype][half][cli]") {
  const fs::path dir = tilesim_test::scratch("half_cli");
  const fs::path w = tilesim_test::write_text(dir / "h.json", R"({"name": "h", "ops": [
    {"op": "gather", "num_inputs": 256, "num_features": 32, "num_outputs": 1000, "dtype": "float16"},
    {"op": "scatter_add", "num_inputs": 1000, "num_features": 32, "num_outputs": 256, "dtype": "bfloat16"}]})");
  const auto ok = tilesim_test::run_tilesim("run '" + w.string() + "' --backends cpu,gpu-model:a100-40gb --repeats 2 --json --out '" +
                                                (dir / "out").string() + "'",
                                            dir);
  INFO(ok.err);
  REQUIRE(ok.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(ok.out);
  const nlohmann::json& model = report["workload"]["ops"];
  CHECK(model[0]["dtype"] == "float16");
  CHECK(model[1]["dtype"] == "bfloat16");
  const auto bad = tilesim_test::run_tilesim("run '" + w.string() + "' --backends ipu:bow --out '" + (dir / "out2").string() + "'", dir);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("op 'scatter_add_1' is bfloat16: the IPU's vector and AMP units take float16 and float32"));
  // The float16 op alone runs there, verified.
  const fs::path w16 = tilesim_test::write_text(dir / "h16.json", R"({"name": "h16", "ops": [
    {"op": "gather", "num_inputs": 256, "num_features": 32, "num_outputs": 1000, "dtype": "float16"}]})");
  const auto ipu = tilesim_test::run_tilesim("run '" + w16.string() + "' --backends ipu:bow --json --out '" + (dir / "out3").string() + "'", dir);
  INFO(ipu.err);
  REQUIRE(ipu.exit_code == 0);
  CHECK(nlohmann::json::parse(ipu.out)["results"][0]["ops"][0]["verified"] == true);
}

TEST_CASE("half dtypes: the shipped half examples run verified on the cpu, torch-cpu and the GPU model", "[dtype][half][cli][slow]") {
  const fs::path dir = tilesim_test::scratch("half_examples");
  for (const char* example : {"gcn_cora_bf16.json", "hydronet_ops_half.json"}) {
    INFO(example);
    const auto r = tilesim_test::run_tilesim(std::string("run workloads/examples/half/") + example +
                                                 " --backends cpu,torch-cpu,gpu-model:a100-40gb --repeats 1 --warmup 0 --json --out '" +
                                                 (dir / example).string() + "'",
                                             dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json report = nlohmann::json::parse(r.out);
    std::size_t half_rows = 0;
    for (const auto& backend : report["results"]) {
      if (backend["kind"] != "measured") continue;
      for (const auto& op : backend["ops"]) {
        INFO(backend["backend"] << " " << op["op"] << ": " << op["verification"]);
        CHECK(op["verified"] == true);
        half_rows += op["dtype"] != "float32" ? 1 : 0;
      }
    }
    CHECK(half_rows > 0);
  }
}

TEST_CASE("half dtypes: the half sweeps cover each hydronet point in float16 on the simulated IPU, and in bfloat16 elsewhere",
          "[dtype][half][sweep][unit]") {
  const analysis::SweepSpec s = analysis::load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/hydronet_half.json");
  CHECK(s.dtypes == std::vector<std::string>{"float32", "float16"});
  const auto names = [](const analysis::SweepSpec& spec) {
    std::vector<std::string> n;
    for (const auto& b : spec.backends) n.push_back(b.name);
    return n;
  };
  CHECK(names(s) == std::vector<std::string>{"ipu:bow", "gpu-model:a100-40gb:eager", "cpu"});
  std::map<std::string, std::size_t> per_dtype;
  for (const auto& p : analysis::expand_sweep(s)) ++per_dtype[p.dtype];
  CHECK(per_dtype["float16"] == 594 * 2 * 3);  // 594 points of each op on each of the three backends
  CHECK(per_dtype["float32"] == 594 * 2 * 3);
  const analysis::SweepSpec b = analysis::load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/hydronet_bf16.json");
  CHECK(b.dtypes == std::vector<std::string>{"bfloat16"});
  CHECK(names(b) == std::vector<std::string>{"gpu-model:a100-40gb:eager", "cpu"});
  CHECK(analysis::expand_sweep(b).size() == 594 * 2 * 2);
}

TEST_CASE("half dtypes: a sweep asking the simulated IPU for bfloat16 is refused before any point runs, float16 runs verified",
          "[dtype][half][cli]") {
  const fs::path dir = tilesim_test::scratch("half_sweep");
  const fs::path s = tilesim_test::write_text(dir / "s.json", R"({"name": "sh", "ops": ["gather"], "dtypes": ["float16", "bfloat16"],
    "sizes": {"num_inputs": [16], "num_features": [16], "num_outputs": [32, 64]}, "backends": ["cpu", "ipu:bow"], "ipu": {"verify": true}})");
  const auto r = tilesim_test::run_tilesim("sweep '" + s.string() + "' --out '" + (dir / "out").string() + "'", dir);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("s.json: dtypes[1]: expected dtypes every backend of the sweep models (ipu:bow: \"float32\", \"float16\"") &&
                        Catch::Contains("found \"bfloat16\" with backend ipu:bow"));
  CHECK_FALSE(fs::exists(dir / "out" / "results.csv"));
  // The float16 points run on both, each verified (functional IPU runs).
  const fs::path s16 = tilesim_test::write_text(dir / "s16.json", R"({"name": "sh", "ops": ["gather", "scatter_add"], "dtypes": ["float16"],
    "sizes": {"num_inputs": [16], "num_features": [16], "num_outputs": [32, 64]}, "backends": ["cpu", "ipu:bow"], "ipu": {"verify": true}})");
  const auto ok = tilesim_test::run_tilesim("sweep '" + s16.string() + "' --out '" + (dir / "out2").string() + "'", dir);
  INFO(ok.err);
  REQUIRE(ok.exit_code == 0);
  std::map<std::string, std::size_t> half_rows;
  for (const auto& row : tilesim::analysis::read_results_csv((dir / "out2" / "results.csv").string())) {
    CHECK(row.verified == "yes");
    half_rows[row.backend] += row.dtype == "float16" ? 1 : 0;
  }
  CHECK(half_rows["cpu"] == 4);
  CHECK(half_rows["ipu:bow"] == 4);
}
