// The backend registry (backends/registry.hpp): every family listed, the name grammar with its
// canonical names, defaults and error messages, the facts sweeps and reports ask of a family, and
// `tilesim backends`, which lists the families with their modes, machines and build state.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backends/backend_spec.hpp"
#include "backends/registry.hpp"
#include "tests/support/test_support.hpp"

namespace {

using namespace tilesim::backends;
using Catch::Contains;
using tilesim_test::required_input_error_of;

std::string canonical(const std::string& name) { return parse_backend_list(name).front().name(); }

std::string parse_error(const std::string& list) {
  return required_input_error_of([&] { parse_backend_list(list); });
}

const nlohmann::json& family_entry(const nlohmann::json& list, const std::string& family) {
  for (const auto& f : list)
    if (f.at("family") == family) return f;
  FAIL("no family " << family << " in the listing");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("the registry lists every backend family once, in help order, each with a grammar and one default mode at most",
          "[backends][unit]") {
  std::vector<std::string> families;
  for (const BackendFamily* f : all_families()) {
    families.push_back(f->family());
    CHECK(f->info().grammar.rfind(f->family(), 0) == 0);
    CHECK_FALSE(f->info().summary.empty());
    int defaults = 0;
    for (const auto& m : f->info().modes) defaults += m.is_default ? 1 : 0;
    CHECK(defaults == (f->info().modes.empty() ? 0 : 1));
    CHECK(find_family(f->family() + ":x") == f);
  }
  CHECK(families == std::vector<std::string>{"ipu", "cpu", "torch-cpu", "cuda", "gpu-model", "cpu-model"});
  CHECK(find_family("gpu") == nullptr);
  CHECK(find_family("validation/hydronet-gnn/a100") == nullptr);
}

TEST_CASE("backend names parse to their family's canonical names, default machines and modes left out", "[backends][unit]") {
  CHECK(canonical("ipu") == "ipu:bow");
  CHECK(canonical("ipu:static") == "ipu:bow:static");
  CHECK(canonical("ipu:dynamic") == "ipu:bow");
  CHECK(canonical("ipu:mk2:dynamic") == "ipu:mk2");
  CHECK(canonical("ipu:bow-2000:static") == "ipu:bow-2000:static");
  CHECK(canonical("ipu:runs/my:ipu.json:static") == "ipu:runs/my:ipu.json:static");
  CHECK(canonical("gpu-model") == "gpu-model:a100-40gb");
  CHECK(canonical("gpu-model:h100-sxm:kernel") == "gpu-model:h100-sxm");
  CHECK(canonical("gpu-model:h100-sxm:eager") == "gpu-model:h100-sxm:eager");
  CHECK(canonical("cuda") == "cuda");
  CHECK(canonical("cuda:kernel") == "cuda");
  CHECK(canonical("cuda:per-call") == "cuda:per-call");
  CHECK(canonical("cpu") == "cpu");
  CHECK(canonical("torch-cpu") == "torch-cpu");
  CHECK(canonical("cpu-model") == "cpu-model:spr-2s");
  CHECK(canonical("cpu-model:spr-cluster") == "cpu-model:spr-cluster");
  const auto specs = parse_backend_list("ipu:mk1:static,gpu-model:h200:eager,cpu");
  REQUIRE(specs.size() == 3);
  CHECK((specs[0].descriptor == find_family("ipu") && specs[0].machine == "mk1" && specs[0].mode == "static"));
  CHECK((specs[1].descriptor == find_family("gpu-model") && specs[1].machine == "h200" && specs[1].mode == "eager"));
  const auto nograd = parse_backend_list("gpu-model:a100-80gb:eager-nograd").front();
  CHECK((nograd.machine == "a100-80gb" && nograd.mode == "eager-nograd"));
  CHECK(parse_error("gpu-model:eager-nograd").find("gpu-model:MACHINE:eager|eager-nograd|kernel") != std::string::npos);
  CHECK((specs[2].descriptor == find_family("cpu") && specs[2].machine.empty() && specs[2].mode.empty()));
}

TEST_CASE("bad backend names say what each family accepts", "[backends][unit]") {
  const std::string all =
      "ipu, ipu:MACHINE (bow, mk2, mk1, the 4-IPU system bow-2000 or a machine file path), ipu:MACHINE:static "
      "(a model's graph edges compiled into the exchange), cpu, torch-cpu, cuda, cuda:kernel|per-call, gpu-model, "
      "gpu-model:MACHINE (a100-40gb, a100-80gb, h100-sxm, h200, v100-16gb or a machine file path) or gpu-model:MACHINE:eager|eager-nograd|kernel, "
      "cpu-model, cpu-model:MACHINE (spr-2s, spr-cluster or a machine file path)";
  CHECK(accepted_names_text() == all);
  CHECK_THAT(parse_error("ipu,gpu"), Contains(all) && Contains("\"gpu\""));
  CHECK_THAT(parse_error("ipu:"), Contains(all));
  CHECK_THAT(parse_error("gpu-model:eager"), Contains(all));
  CHECK_THAT(parse_error("ipu,,cpu"), Contains("an empty entry"));
  CHECK_THAT(parse_error(""), Contains("an empty list"));
  CHECK_THAT(parse_error("cpu:x"), Contains("cpu without a machine name"));
  CHECK_THAT(parse_error("torch-cpu:x"), Contains("torch-cpu without a machine name"));
  CHECK_THAT(parse_error("cuda:fast"), Contains("cuda, cuda:kernel or cuda:per-call"));
  CHECK_THAT(parse_error("ipu:static,ipu:bow:static"), Contains("each backend once") && Contains("\"ipu:bow:static\" twice"));
  CHECK_THAT(backends_help_text(), Contains("ipu (= ipu:bow)") && Contains("cuda[:kernel|:per-call]") &&
                                       Contains("gpu-model:MACHINE[:eager|:eager-nograd|:kernel]"));
}

TEST_CASE("each family says how its rows are described and which roofline machine applies", "[backends][unit]") {
  const TimingSettings timing{true, 2, 10};
  const auto ipu = parse_backend_list("ipu").front();
  CHECK(ipu.descriptor->kind() == tilesim::ResultKind::simulated);
  CHECK(ipu.descriptor->row_mode(ipu, timing) == "timing-only");
  CHECK(ipu.descriptor->row_mode(ipu, {false, 2, 10}) == "functional");
  CHECK(ipu.descriptor->info().unchecked_verified == "timing-only");
  CHECK(ipu.descriptor->info().writes_traces);
  const auto gpu = parse_backend_list("gpu-model:a100-40gb:eager").front();
  CHECK(gpu.descriptor->kind() == tilesim::ResultKind::modeled);
  CHECK(gpu.descriptor->row_mode(gpu, timing) == "eager");
  CHECK(gpu.descriptor->plan_text(gpu, timing) == "modeled, eager mode");
  CHECK_FALSE(gpu.descriptor->info().reads_input_values);
  const auto cuda = parse_backend_list("cuda:per-call").front();
  CHECK(cuda.descriptor->row_mode(cuda, timing) == "per-call-median-of-10");
  CHECK(cuda.descriptor->plan_text(cuda, timing) == "measured, median of 10 calls after 2 warm-up (per-call time)");
  const auto cpu = parse_backend_list("cpu").front();
  CHECK(cpu.descriptor->row_mode(cpu, timing) == "median-of-10");
  CHECK(cpu.descriptor->info().unchecked_verified == "no");
  CHECK(roofline_machine_family("torch-cpu") == "cpu");
  CHECK(roofline_machine_family("gpu-model:h200:eager") == "gpu-model");
  CHECK(roofline_machine_family("cuda").empty());
  CHECK(roofline_machine_forms() ==
        std::vector<std::string>{"ipu:NAME_OR_FILE", "gpu-model:NAME_OR_FILE", "cpu-model:NAME_OR_FILE", "cpu:FILE"});
  const auto cpu_model = parse_backend_list("cpu-model:spr-cluster").front();
  CHECK(cpu_model.descriptor->kind() == tilesim::ResultKind::modeled);
  CHECK(cpu_model.descriptor->row_mode(cpu_model, timing) == "roofline");
  CHECK(cpu_model.descriptor->plan_text(cpu_model, timing) == "modeled, roofline plus per-op overhead, one node of the cluster");
  CHECK(display_label("cpu-model:spr-2s", "modeled", "") == std::optional<std::string>("SPR-2S CPU model"));
  CHECK(display_label("ipu:bow:static", "simulated", "timing-only").has_value());
  CHECK(display_label("gpu-model:a100-40gb:eager-nograd", "modeled", "") == std::optional<std::string>("A100-40GB model (eager-nograd)"));
  CHECK(display_label("gpu-model:h100-sxm", "modeled", "") == std::optional<std::string>("H100-SXM model (kernel)"));
  CHECK(display_label("cuda:per-call", "measured", "") == std::optional<std::string>("CUDA GPU (measured, per-call)"));
  CHECK_FALSE(display_label("cpu:x", "measured", "").has_value());
  CHECK_FALSE(display_label("validation/hydronet-gnn/a100", "", "").has_value());
}

TEST_CASE("tilesim backends lists every family with its modes, machines and whether it is built, as --version says",
          "[backends][cli]") {
  const tilesim_test::TempDir dir("backends_cli");
  const auto version = tilesim_test::run_tilesim("--version", dir.dir());
  REQUIRE(version.exit_code == 0);
  const auto text = tilesim_test::run_tilesim("backends", dir.dir());
  REQUIRE(text.exit_code == 0);
  for (const char* grammar : {"ipu[:MACHINE][:static|:dynamic]", "gpu-model[:MACHINE][:eager|:eager-nograd|:kernel]", "cuda[:kernel|:per-call]",
                              "cpu  (measured)", "torch-cpu  (measured)"})
    CHECK_THAT(text.out, Contains(grammar));
  CHECK_THAT(text.out, Contains("dynamic (default)") && Contains("bow (default), bow-2000, mk1, mk2, pod16, pod64, or a machine file path"));

  const auto json = tilesim_test::run_tilesim("backends --json", dir.dir());
  REQUIRE(json.exit_code == 0);
  const auto list = nlohmann::json::parse(json.out);
  REQUIRE(list.size() == 6);
  const auto& ipu = family_entry(list, "ipu");
  CHECK(ipu.at("kind") == "simulated");
  REQUIRE(ipu.at("modes").size() == 2);
  CHECK((ipu.at("modes")[0].at("name") == "dynamic" && ipu.at("modes")[0].at("default") == true));
  CHECK((ipu.at("modes")[1].at("name") == "static" && ipu.at("modes")[1].at("default") == false));
  CHECK(ipu.at("machine").at("default") == "bow");
  CHECK(ipu.at("built") == true);
  const auto& gpu = family_entry(list, "gpu-model");
  CHECK(gpu.at("kind") == "modeled");
  const auto shipped = gpu.at("machine").at("shipped").get<std::vector<std::string>>();
  CHECK(std::find(shipped.begin(), shipped.end(), "a100-40gb") != shipped.end());
  CHECK(family_entry(list, "cpu").at("machine").at("runs_on") == "this host's cores");
  // The cpu family says what it runs: three dtypes, oneDNN's matmuls (once "float32 kernels ...
  // (OpenBLAS for the matmuls)", long after both had changed).
  const std::string cpu_summary = family_entry(list, "cpu").at("summary");
  CHECK_THAT(cpu_summary, Contains("float32, float16 and bfloat16") && Contains("oneDNN for the matmuls"));
  CHECK_THAT(cpu_summary, !Contains("OpenBLAS"));
  // Which families run a workload's training steps: the CPU kernels do; every family says.
  CHECK(family_entry(list, "cpu").at("training_steps") == true);
  for (const auto& f : list) CHECK(f.at("training_steps").is_boolean());
  CHECK_THAT(text.out, Contains("training: runs training steps"));

  // The optional peers: built exactly when --version says so; when not, the listing says why.
  const auto& torch = family_entry(list, "torch-cpu");
  const bool torch_built = version.out.find("torch-cpu (measured, libtorch") != std::string::npos;
  CHECK(torch.at("built") == torch_built);
  if (!torch_built) CHECK_THAT(torch.at("build").get<std::string>(), Contains("not built") && Contains("libtorch"));
  const auto& cuda = family_entry(list, "cuda");
  const bool cuda_built = version.out.find("cuda (measured, CUDA") != std::string::npos;
  CHECK(cuda.at("built") == cuda_built);
  if (cuda_built) {
    // Whether a GPU is there decides whether it can run: no GPU is what `run --backends cuda` exits 2 for.
    REQUIRE(cuda.contains("device"));
    CHECK(cuda.at("available") == cuda.at("device").at("present"));
    if (cuda.at("device").at("present") == false)
      CHECK_THAT(cuda.at("device").at("detail").get<std::string>(), Contains("no CUDA device present"));
  } else {
    CHECK_THAT(cuda.at("build").get<std::string>(), Contains("not built") && Contains("nvcc"));
    CHECK(cuda.at("available") == false);
  }
}
