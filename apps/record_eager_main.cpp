// tilesim-record-eager: records, through libtorch, the ATen operators each forward op signature of the
// GPU model's eager mode dispatches (kernels/torch/eager_record.hpp), and writes them with symbolic
// sizes as models/gpu/eager/aten_calls.json (models/gpu/eager_calls.hpp reads it).
//   tilesim-record-eager OUT.json     write the record
//   tilesim-record-eager --check FILE record afresh and compare with FILE; exit 1 and name the first
//                                     difference when they differ (the shipped file is stale)
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/strict_json.hpp"
#include "kernels/torch/eager_record.hpp"
#include "kernels/torch/torch_ops.hpp"
#include "models/gpu/eager_calls.hpp"

namespace {

using namespace tilesim;

nlohmann::json symbolic(const std::vector<kernels::torch_peer::RecordedCall>& recorded, const Op& probe) {
  nlohmann::json calls = nlohmann::json::array();
  for (const auto& call : recorded) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& shape : call.tensor_shapes) {
      nlohmann::json dims = nlohmann::json::array();
      for (std::int64_t d : shape) dims.push_back(gpu::probe_dimension_symbol(d, probe));
      shapes.push_back(dims);
    }
    nlohmann::json c = {{"op", call.op}, {"depth", call.depth}, {"shapes", shapes}};
    if (call.autograd_node) c["autograd_node"] = true;
    calls.push_back(c);
  }
  return calls;
}

nlohmann::json record_all() {
  nlohmann::json signatures = nlohmann::json::object();
  for (const Op& probe : gpu::eager_probe_ops()) {
    nlohmann::json entry = {{"python", kernels::torch_peer::eager_python_call(probe)},
                            {"calls", symbolic(kernels::torch_peer::record_eager_op(probe), probe)}};
    if (kernels::torch_peer::has_eager_backward(probe))
      entry["backward"] = symbolic(kernels::torch_peer::record_eager_backward(probe), probe);
    signatures[gpu::eager_signature(probe)] = entry;
  }
  return {{"description",
           "ATen operators each forward op dispatches when PyG's eager Python call for it runs, and (\"backward\") the "
           "autograd nodes and operators its backward runs with every float operand requiring grad, recorded with "
           "at::RecordFunction on CPU probe tensors (composite operators decompose the same way on CUDA). Sizes are "
           "OpShape fields. Written by tilesim-record-eager; do not edit by hand."},
          {"recorded_with", "libtorch " + kernels::torch_peer::version() + ", tilesim-record-eager"},
          {"signatures", signatures}};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string usage = "usage: tilesim-record-eager OUT.json | --check FILE";
    if (argc == 3 && std::string(argv[1]) == "--check") {
      const nlohmann::json shipped = load_json_file(argv[2]);
      const nlohmann::json fresh = record_all();
      if (shipped == fresh) {
        std::cout << argv[2] << ": matches a fresh recording (" << fresh["signatures"].size() << " signatures)\n";
        return 0;
      }
      const nlohmann::json diff = nlohmann::json::diff(shipped, fresh);
      std::cerr << argv[2] << ": differs from a fresh recording; rerun tilesim-record-eager " << argv[2]
                << ". First difference: " << diff.front().dump() << "\n";
      return 1;
    }
    if (argc != 2 || std::string(argv[1]).rfind("-", 0) == 0) {
      std::cerr << usage << "\n";
      return 2;
    }
    const nlohmann::json doc = record_all();
    std::ofstream out(argv[1]);
    out << doc.dump(1) << "\n";
    if (!out) {
      std::cerr << "tilesim-record-eager: cannot write " << argv[1] << "\n";
      return 3;
    }
    std::cout << "wrote " << argv[1] << " (" << doc["signatures"].size() << " signatures)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tilesim-record-eager: " << e.what() << "\n";
    return 4;
  }
}
