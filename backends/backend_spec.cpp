#include "backends/backend_spec.hpp"

#include <set>
#include <sstream>

#include "common/error.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/torch/torch_backend.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/ipu/ipu_backend.hpp"

namespace tilesim::cli {

namespace {
const char* kAccepted =
    "ipu, ipu:MACHINE (bow, mk2, mk1, the 4-IPU system bow-2000 or a machine file path), ipu:MACHINE:static "
    "(a model's graph edges compiled into the exchange), cpu, torch-cpu, cuda, cuda:kernel|per-call, gpu-model, "
    "gpu-model:MACHINE (a100-40gb, a100-80gb, h100-sxm, h200 or a machine file path) or gpu-model:MACHINE:eager|kernel";

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::vector<BackendSpec> parse_backend_list(const std::string& list) {
  std::vector<BackendSpec> specs;
  std::set<std::string> seen;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw InputError("", "--backends", kAccepted, "an empty entry in \"" + list + "\"");
    BackendSpec spec;
    const auto colon = item.find(':');
    spec.family = item.substr(0, colon);
    if (spec.family == "ipu") {
      // ipu:MACHINE:static compiles a model's graph edges into the exchange; the index mode is the last
      // ':'-field when it names one, so a machine path may hold ':' itself.
      std::string rest = colon == std::string::npos ? "bow" : item.substr(colon + 1);
      spec.mode = "dynamic";
      for (const char* mode : {"static", "dynamic"}) {
        if (rest == mode) rest = "bow:" + rest;
        if (ends_with(rest, std::string(":") + mode)) {
          spec.mode = mode;
          rest.resize(rest.size() - std::string(mode).size() - 1);
          break;
        }
      }
      spec.machine = rest;
      if (spec.machine.empty()) throw InputError("", "--backends", kAccepted, "\"" + item + "\"");
    } else if (spec.family == "cpu") {
      if (colon != std::string::npos) throw InputError("", "--backends", "cpu without a machine name", "\"" + item + "\"");
    } else if (spec.family == "torch-cpu") {
      if (colon != std::string::npos) throw InputError("", "--backends", "torch-cpu without a machine name", "\"" + item + "\"");
    } else if (spec.family == "cuda") {
      // cuda (= cuda:kernel): device time from CUDA events; cuda:per-call: host time per call.
      const std::string mode = colon == std::string::npos ? "kernel" : item.substr(colon + 1);
      if (mode != "kernel" && mode != "per-call") throw InputError("", "--backends", "cuda, cuda:kernel or cuda:per-call", "\"" + item + "\"");
      spec.mode = mode;
    } else if (spec.family == "gpu-model") {
      // The mode is the last ':'-field when it names one, so a machine path may hold ':' itself.
      std::string rest = colon == std::string::npos ? "a100-40gb" : item.substr(colon + 1);
      spec.mode = "kernel";
      for (const char* mode : {"eager", "kernel"}) {
        if (ends_with(rest, std::string(":") + mode)) {
          spec.mode = mode;
          rest.resize(rest.size() - std::string(mode).size() - 1);
          break;
        }
      }
      if (rest.empty() || rest == "eager" || rest == "kernel") throw InputError("", "--backends", kAccepted, "\"" + item + "\"");
      spec.machine = rest;
    } else {
      throw InputError("", "--backends", kAccepted, "\"" + item + "\"");
    }
    if (!seen.insert(spec.name()).second) throw InputError("", "--backends", "each backend once", "\"" + spec.name() + "\" twice");
    specs.push_back(spec);
  }
  if (specs.empty()) throw InputError("", "--backends", kAccepted, "an empty list");
  return specs;
}

std::unique_ptr<Backend> make_backend(const BackendSpec& spec) {
  if (spec.family == "ipu") {
    return std::make_unique<ipu::IpuBackend>(ipu::load_ipu_machine(spec.machine), spec.name(),
                                             spec.mode == "static" ? ipu::IndexMode::static_ : ipu::IndexMode::dynamic);
  }
  if (spec.family == "gpu-model") {
    return std::make_unique<gpu::GpuModelBackend>(gpu::load_gpu_machine(spec.machine),
                                                  spec.mode == "eager" ? gpu::GpuMode::eager : gpu::GpuMode::kernel, spec.name());
  }
  if (spec.family == "torch-cpu") return kernels::torch_peer::make_backend();
  if (spec.family == "cuda") {
    return kernels::cuda::make_backend(spec.mode == "per-call" ? kernels::cuda::CudaTiming::per_call : kernels::cuda::CudaTiming::kernel);
  }
  return std::make_unique<kernels::cpu::CpuBackend>();
}

}  // namespace tilesim::cli
