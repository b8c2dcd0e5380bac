// The CPU matmul in float32, float16 and bfloat16 (kernels/cpu/matmul.hpp: oneDNN, or float32 after
// widening): every result against a double-precision reference within the error bound of float32
// accumulation plus one output rounding; the bias and transposed forms; the empty products; the names
// it reports; the matmul peaks `tilesim calibrate` writes; and the OpenBLAS kernel set chosen by cpuid.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "kernels/cpu/matmul.hpp"
#include "kernels/cpu/matmul_peak.hpp"
#include "kernels/cpu/onednn_matmul.hpp"
#include "kernels/cpu/openblas_coretype.hpp"
#include "models/cpu/cpu_machine.hpp"
#include "tests/support/test_support.hpp"

namespace {

namespace cpu = tilesim::kernels::cpu;
using namespace tilesim_test;

// Unit roundoff of each storage type's rounding to nearest: half an ulp of 1.
template <class T>
double unit_roundoff();
template <>
double unit_roundoff<float>() { return std::ldexp(1.0, -24); }
template <>
double unit_roundoff<cpu::Float16>() { return std::ldexp(1.0, -11); }
template <>
double unit_roundoff<cpu::BFloat16>() { return std::ldexp(1.0, -8); }

// Values in [-1, 1), rounded to T: the inputs are then exact in T, so the only errors left are the
// float32 accumulation and the one rounding of the output.
template <class T>
std::vector<T> random_values(std::int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = cpu::from_float<T>(u(rng));
  return v;
}

// Element (row, col) of a matrix stored [rows x cols], or its transpose stored [cols x rows].
template <class T>
double at(const std::vector<T>& v, bool transposed, std::int64_t row, std::int64_t col, std::int64_t rows, std::int64_t cols) {
  (void)rows;
  return static_cast<double>(cpu::to_float(transposed ? v[static_cast<std::size_t>(col * rows + row)] : v[static_cast<std::size_t>(row * cols + col)]));
}

// Checks c against the exact product in double. Bound per element: float32 accumulation of k products
// (each exact in float32 for 16-bit inputs; one rounding for float32 inputs) and the bias, gamma_(k+1) *
// sum |a||b| + |bias| with gamma_j = j u32 / (1 - j u32); then one rounding to T, u_T times the computed
// float32 value; plus T's smallest subnormal for results near zero.
template <class T>
struct Same {
  using type = T;
};

template <class T>
void check_product(const std::vector<T>& a, bool a_t, const std::vector<T>& b, bool b_t, const typename Same<std::vector<T>>::type* bias, std::int64_t m,
                   std::int64_t k, std::int64_t n, const std::vector<T>& c) {
  const double u32 = std::ldexp(1.0, -24);
  const double j = static_cast<double>(k + 2);
  const double gamma = j * u32 / (1 - j * u32);
  const double u_out = unit_roundoff<T>();
  int bad = 0;
  for (std::int64_t r = 0; r < m; ++r) {
    for (std::int64_t col = 0; col < n; ++col) {
      double exact = 0, magnitude = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = at(a, a_t, r, p, m, k) * at(b, b_t, p, col, k, n);
        exact += x;
        magnitude += std::fabs(x);
      }
      if (bias) {
        const double bv = static_cast<double>(cpu::to_float((*bias)[static_cast<std::size_t>(col)]));
        exact += bv;
        magnitude += std::fabs(bv);
      }
      const double accumulation = gamma * magnitude;
      const double bound = accumulation + u_out * (std::fabs(exact) + accumulation) + 1e-7;
      const double got = static_cast<double>(cpu::to_float(c[static_cast<std::size_t>(r * n + col)]));
      if (!(std::fabs(got - exact) <= bound) && bad++ < 3)
        FAIL_CHECK("c[" << r << ", " << col << "] = " << got << ", exact " << exact << ", error " << std::fabs(got - exact)
                        << " over the bound " << bound);
    }
  }
  CHECK(bad == 0);
}

struct Dims {
  std::int64_t m, k, n;
};
const Dims kDims[] = {{1, 1, 1}, {7, 5, 3}, {64, 300, 17}, {257, 256, 258}, {33, 1000, 64}};

template <class T>
void check_dtype() {
  std::mt19937 rng(11);
  for (const Dims d : kDims) {
    INFO(cpu::storage_name<T>() << " m=" << d.m << " k=" << d.k << " n=" << d.n);
    const auto a = random_values<T>(d.m * d.k, rng), b = random_values<T>(d.k * d.n, rng), bias = random_values<T>(d.n, rng);
    for (const bool with_bias : {false, true}) {
      INFO("bias " << with_bias);
      std::vector<T> c(static_cast<std::size_t>(d.m * d.n));
      cpu::matmul<T>(a.data(), b.data(), d.m, d.k, d.n, with_bias ? bias.data() : nullptr, c.data());
      check_product(a, false, b, false, with_bias ? &bias : nullptr, d.m, d.k, d.n, c);
    }
    // The transposed forms read the same numbers stored the other way round.
    for (const bool a_t : {false, true}) {
      for (const bool b_t : {false, true}) {
        INFO("a_transposed " << a_t << " b_transposed " << b_t);
        std::vector<T> c(static_cast<std::size_t>(d.m * d.n));
        cpu::matmul_transposed<T>(a.data(), a_t, b.data(), b_t, d.m, d.k, d.n, c.data());
        check_product(a, a_t, b, b_t, nullptr, d.m, d.k, d.n, c);
      }
    }
  }
}

template <class T>
void check_conversion_path() {
  std::mt19937 rng(5);
  for (const Dims d : kDims) {
    INFO(cpu::storage_name<T>() << " widened, m=" << d.m << " k=" << d.k << " n=" << d.n);
    const auto a = random_values<T>(d.m * d.k, rng), b = random_values<T>(d.k * d.n, rng), bias = random_values<T>(d.n, rng);
    std::vector<T> c(static_cast<std::size_t>(d.m * d.n));
    cpu::matmul_by_conversion<T>(a.data(), false, b.data(), false, d.m, d.k, d.n, bias.data(), c.data());
    check_product(a, false, b, false, &bias, d.m, d.k, d.n, c);
    cpu::matmul_by_conversion<T>(a.data(), true, b.data(), true, d.m, d.k, d.n, nullptr, c.data());
    check_product(a, true, b, true, nullptr, d.m, d.k, d.n, c);
  }
}

template <class T>
void check_empty_products() {
  INFO(cpu::storage_name<T>());
  const T sentinel = cpu::from_float<T>(42.0f);
  const std::vector<T> a(12, cpu::from_float<T>(1.0f)), bias = {cpu::from_float<T>(0.5f), cpu::from_float<T>(-2.0f),
                                                                cpu::from_float<T>(3.0f)};
  std::vector<T> c(6, sentinel);
  // m or n == 0: nothing written.
  cpu::matmul<T>(a.data(), a.data(), 0, 4, 3, bias.data(), c.data());
  cpu::matmul<T>(a.data(), a.data(), 2, 4, 0, bias.data(), c.data());
  cpu::matmul_transposed<T>(a.data(), true, a.data(), false, 0, 4, 3, c.data());
  for (const T x : c) CHECK(cpu::to_float(x) == 42.0f);
  // k == 0: the bias on every row, or zeros.
  cpu::matmul<T>(a.data(), a.data(), 2, 0, 3, bias.data(), c.data());
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 3; ++j) CHECK(cpu::to_float(c[static_cast<std::size_t>(r * 3 + j)]) == cpu::to_float(bias[static_cast<std::size_t>(j)]));
  cpu::matmul<T>(a.data(), a.data(), 2, 0, 3, nullptr, c.data());
  for (const T x : c) CHECK(cpu::to_float(x) == 0.0f);
  std::fill(c.begin(), c.end(), sentinel);
  cpu::matmul_transposed<T>(a.data(), false, a.data(), true, 2, 0, 3, c.data());
  for (const T x : c) CHECK(cpu::to_float(x) == 0.0f);
  // A negative or too large dimension is refused by name.
  CHECK_THROWS_WITH(cpu::matmul<T>(a.data(), a.data(), -1, 2, 2, nullptr, c.data()), Catch::Contains("m = -1"));
  CHECK_THROWS_AS(cpu::matmul_transposed<T>(a.data(), false, a.data(), false, 1, std::int64_t{1} << 31, 1, c.data()), tilesim::InputError);
}

const std::set<std::string> kHalfInstructionSets = {"AMX", "AVX-512-BF16", "AVX-512-FP16", "conversion to float32"};
const std::set<std::string> kFloat32InstructionSets = {"AVX-512", "AVX2", "other"};

}  // namespace

TEST_CASE("cpu matmul in float32 is within float32 accumulation of the exact product", "[kernels][cpu][matmul][unit]") {
  check_dtype<float>();
  check_empty_products<float>();
}

TEST_CASE("cpu matmul in bfloat16 accumulates in float32 and rounds the output once", "[kernels][cpu][matmul][unit]") {
  check_dtype<cpu::BFloat16>();
  check_conversion_path<cpu::BFloat16>();
  check_empty_products<cpu::BFloat16>();
}

TEST_CASE("cpu matmul in float16 accumulates in float32 and rounds the output once", "[kernels][cpu][matmul][unit]") {
  check_dtype<cpu::Float16>();
  check_conversion_path<cpu::Float16>();
  check_empty_products<cpu::Float16>();
}

TEST_CASE("cpu matmul names its kernel and instruction set per dtype, chosen by cpuid", "[kernels][cpu][matmul][unit]") {
  CHECK(cpu::instruction_set_of_kernel("brg:avx512_core_amx_bf16", "bfloat16") == "AMX");
  CHECK(cpu::instruction_set_of_kernel("brg:avx512_core_bf16", "bfloat16") == "AVX-512-BF16");
  CHECK(cpu::instruction_set_of_kernel("brg:avx512_core_fp16", "float16") == "AVX-512-FP16");
  CHECK(cpu::instruction_set_of_kernel("brg:avx512_core", "bfloat16") == "conversion to float32");
  CHECK(cpu::instruction_set_of_kernel("", "float16") == "conversion to float32");
  CHECK(cpu::instruction_set_of_kernel("brg:avx512_core", "float32") == "AVX-512");
  CHECK(cpu::instruction_set_of_kernel("gemm:jit:avx2", "float32") == "AVX2");

  CHECK(kFloat32InstructionSets.count(cpu::matmul_instruction_set<float>()) == 1);
  CHECK(kHalfInstructionSets.count(cpu::matmul_instruction_set<cpu::BFloat16>()) == 1);
  CHECK(kHalfInstructionSets.count(cpu::matmul_instruction_set<cpu::Float16>()) == 1);
  for (const std::string& kernel : {cpu::matmul_kernel<float>(), cpu::matmul_kernel<cpu::BFloat16>(), cpu::matmul_kernel<cpu::Float16>()})
    CHECK_THAT(kernel, Catch::Contains("oneDNN") || Catch::Contains("OpenBLAS"));
  // The library follows cpuid: AMX where the host has AMX tiles, the BF16 instructions where it has those;
  // unless it may not use AVX-512 here (no AVX-512, or its documented cap holds it below: make
  // test-isa-capped sets AVX2), when no 16-bit instruction is used and float32 takes no AVX-512 kernel.
  if (!cpu::onednn_allows_avx512()) {
    CHECK(cpu::matmul_instruction_set<cpu::BFloat16>() == "conversion to float32");
    CHECK(cpu::matmul_instruction_set<cpu::Float16>() == "conversion to float32");
    CHECK(cpu::matmul_instruction_set<float>() != "AVX-512");
    return;
  }
  const cpu::CpuFeatures f = cpu::host_cpu_features();
  if (f.amx_bf16 && f.amx_tile && f.avx512_bf16) CHECK(cpu::matmul_instruction_set<cpu::BFloat16>() == "AMX");
  else if (f.avx512_bf16) CHECK(cpu::matmul_instruction_set<cpu::BFloat16>() == "AVX-512-BF16");
  if (f.avx512f && f.avx512bw && f.avx512vl) CHECK(cpu::matmul_instruction_set<float>() == "AVX-512");
}

TEST_CASE("the matmul peak is a positive rate on a named instruction set, and the machine file keeps it",
          "[kernels][cpu][calibrate][unit]") {
  for (const char* dtype : {"float32", "bfloat16", "float16"}) {
    INFO(dtype);
    const cpu::MatmulPeak p = cpu::measure_matmul_peak(dtype, 256, 2);
    CHECK(p.flops_per_s > 0);
    CHECK((std::string(dtype) == "float32" ? kFloat32InstructionSets : kHalfInstructionSets).count(p.instruction_set) == 1);
    CHECK(p.details["trials_flops_per_s"].size() == 2);
  }
  CHECK_THROWS_AS(cpu::measure_matmul_peak("float64", 256, 1), tilesim::InputError);
  CHECK_THROWS_AS(cpu::measure_matmul_peak("float32", 0, 1), tilesim::InputError);

  // The CPU machine file: the matmul peaks round-trip, a file without them still reads, and an unknown
  // instruction set is refused by its JSON path.
  nlohmann::json doc = {
      {"name", "host-t"},
      {"description", "test"},
      {"host", {{"hostname", "t"}, {"cpu_model", "x"}, {"logical_cpus", 2}, {"threads", 2}, {"measured_utc", "2025-01-01T00:00:00Z"}, {"tool", "tilesim"}}},
      {"bandwidth_bytes_per_s", {{"dram_stream", {{"value", 1e10}, {"source", "s"}}}, {"dram_random_gather", {{"value", 1e9}, {"source", "s"}}}}},
      {"peak_flops_per_s", {{"float32", {{"value", 1e11}, {"source", "s"}}}, {"float64", {{"value", 5e10}, {"source", "s"}}}}}};
  CHECK(tilesim::cpu_model::parse_cpu_machine(doc, "old.json").matmul_peak_flops_per_s.empty());
  doc["matmul_peak_flops_per_s"] = {
      {"bfloat16", {{"value", 4e11}, {"source", "s"}, {"instruction_set", "AMX"}, {"kernel", "oneDNN brg:avx512_core_amx_bf16"}}}};
  const auto m = tilesim::cpu_model::parse_cpu_machine(doc, "new.json");
  REQUIRE(m.matmul_peak_flops_per_s.count("bfloat16") == 1);
  CHECK(m.matmul_peak_flops_per_s.at("bfloat16").rate.value == 4e11);
  CHECK(tilesim::cpu_model::to_json(m)["matmul_peak_flops_per_s"] == doc["matmul_peak_flops_per_s"]);
  doc["matmul_peak_flops_per_s"]["bfloat16"]["instruction_set"] = "AMX-FP8";
  CHECK_THROWS_WITH(tilesim::cpu_model::parse_cpu_machine(doc, "bad.json"), Catch::Contains("matmul_peak_flops_per_s.bfloat16.instruction_set"));
}

TEST_CASE("tilesim calibrate writes the matmul peaks with their instruction sets", "[kernels][cpu][calibrate][cli][slow]") {
  TempDir dir("calibrate_matmul");
  const auto out = dir.dir() / "cpu.json";
  const auto r = run_tilesim("calibrate --json --out " + out.string(), dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["peak_flops_per_s"]["float32"]["value"].get<double>() > 0);  // the existing keys stay
  CHECK(doc["bandwidth_bytes_per_s"]["dram_stream"]["value"].get<double>() > 0);
  for (const char* dtype : {"float32", "bfloat16", "float16"}) {
    INFO(dtype);
    const auto& f = doc["matmul_peak_flops_per_s"][dtype];
    CHECK(f["value"].get<double>() > 0);
    CHECK((std::string(dtype) == "float32" ? kFloat32InstructionSets : kHalfInstructionSets).count(f["instruction_set"].get<std::string>()) == 1);
    CHECK_THAT(f["source"].get<std::string>(), Catch::Contains("measured by"));
  }
}

TEST_CASE("the OpenBLAS kernel set follows cpuid features, not the CPU model", "[kernels][cpu][blas][unit]") {
  cpu::CpuFeatures f;
  CHECK(cpu::openblas_coretype_for(f) == "");
  f.avx2 = f.fma = true;
  CHECK(cpu::openblas_coretype_for(f) == "Haswell");
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512cd = true;
  CHECK(cpu::openblas_coretype_for(f) == "SkylakeX");
  f.avx512_bf16 = true;
  CHECK(cpu::openblas_coretype_for(f) == "Cooperlake");
  f.avx512_fp16 = f.amx_bf16 = f.amx_tile = true;
  CHECK(cpu::openblas_coretype_for(f) == "SapphireRapids");
  f.avx512bw = false;  // an incomplete AVX-512 is not SkylakeX
  CHECK(cpu::openblas_coretype_for(f) == "Haswell");
}

TEST_CASE("tilesim's cpu results name the OpenBLAS kernels that match this host's cpuid", "[kernels][cpu][blas][cli]") {
  TempDir dir("blas_core");
  const auto out = dir.dir() / "out";
  // OPENBLAS_CORETYPE cleared, so the choice is tilesim's own (made before OpenBLAS loads).
  const auto r = run_tilesim("run workloads/examples/default.json --backends cpu --repeats 1 --json --out " + out.string(), dir.dir(),
                             "env -u OPENBLAS_CORETYPE");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  REQUIRE(report["results"].size() == 1);
  const auto& host = report["results"][0]["host"];
  const std::string core = host["openblas_core"].get<std::string>();
  CHECK(!core.empty());
  if (cpu::host_cpu_features().avx512f) CHECK(core != "Prescott");
  CHECK_THAT(host["matmul_kernels"]["bfloat16"].get<std::string>(), Catch::Contains("oneDNN") || Catch::Contains("float32 via"));
}
