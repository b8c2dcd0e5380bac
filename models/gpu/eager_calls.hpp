#pragma once
// The eager call sequences of the GPU model's eager mode, recorded from PyTorch rather than kept by hand:
//  - models/gpu/eager/aten_calls.json: for each forward op signature, the ATen operators libtorch
//    dispatches when PyG's Python call for it runs (written by `tilesim-record-eager`, which runs each
//    signature's probe op through libtorch under at::RecordFunction; kernels/torch/eager_record.hpp);
//  - models/gpu/eager/pyg_layers.json: the Python-level structure of each PyG layer that libtorch
//    cannot see (nn.Module calls, MessagePassing.propagate calls), each with its PyG source.
// The host side of an eager op is its depth-0 calls (one Python call each: a kernel-launching call costs
// the machine's aten_call floor, a view or allocation-only call its aten_view_call floor); a layer adds
// its module and propagate calls; in grad mode every call that records autograd history adds
// autograd_node. The device side stays with the kernel models (gpu_op_model.cpp): on CUDA each
// kernel-launching Python call of these ops launches one kernel, and tests/models/gpu/eager_calls_test.cpp checks
// that every kernel model has as many kernels as the recorded sequence has such calls. (Operators nested
// inside a backend kernel, such as the CPU addmm's copy of its bias, are the CPU's and not counted.)
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim::gpu {

struct GpuMachine;

// The key of an op's recorded sequence: "gather", "matmul+bias", "unary:cosine_cutoff",
// "binary:multiply:per_row", ...; "" for ops with none (training kinds, transposed matmuls,
// segment_matmul: pyg_lib is not part of libtorch, so its host cost stays the fitted one).
std::string eager_signature(const Op& op);

// One op per signature at the probe sizes below, for the recorder.
std::vector<Op> eager_probe_ops();

// The OpShape field a probe dimension stands for ("num_inputs", ..., "num_features/other_groups"), "1"
// for 1; throws std::invalid_argument for a size no field of the probe has (the recording would be
// ambiguous).
std::string probe_dimension_symbol(std::int64_t size, const Op& probe);
// A symbol's size in `op` (the inverse, for another op of the same signature).
std::int64_t dimension_size(const std::string& symbol, const Op& op);

// ATen operators that launch no kernel (views, shape queries, uninitialised allocations).
bool is_view_op(const std::string& aten_op);

struct RecordedCall {
  std::string op;
  int depth = 0;
  std::vector<std::vector<std::string>> shapes;  // symbolic: field names of OpShape, "1", or a number
  bool launches_kernel = false;  // a depth-0 call: it or a call nested in it is not a view op
  bool autograd_node = false;    // backward only: an autograd node (AddmmBackward0, ...), not an operator
};

struct RecordedSequence {
  std::string python;  // the PyG / torch Python call
  std::vector<RecordedCall> calls;
  int python_calls() const;  // depth-0 calls
  int kernel_calls() const;  // depth-0 calls that launch a kernel
  int view_calls() const;    // depth-0 calls that do not
  // The backward autograd runs for it (every float operand requiring grad); empty when no gradient
  // flows through the op in tilesim's layers.
  std::vector<RecordedCall> backward;
  int backward_nodes() const;         // autograd nodes (AccumulateGrad of the leaves included)
  int backward_kernels() const;  // kernels it launches: innermost non-view operators (AccumulateGrad's aside)
};

struct LayerStructure {
  int module_calls = 0;     // nn.Module __call__s besides propagate's aggregation module
  int propagate_calls = 0;  // MessagePassing.propagate / edge_updater calls
  std::string source;
};

struct EagerRecord {
  std::string calls_file, layers_file;
  std::string recorded_with;  // libtorch version and tool
  std::map<std::string, RecordedSequence> sequences;
  std::map<std::string, LayerStructure> layers;  // by OpGroup kind
};

// Parses the two documents (throws tilesim::InputError naming the file and JSON path).
EagerRecord parse_eager_record(const nlohmann::json& calls, const std::string& calls_file, const nlohmann::json& layers,
                               const std::string& layers_file);
// Loaded once per process from the source tree's models/gpu/eager/ (or $TILESIM_EAGER_DIR).
const EagerRecord& eager_record();
std::string eager_record_dir();

// The host side of one eager op from its recorded sequence, or nullptr when it has none.
const RecordedSequence* recorded_sequence(const Op& op);
// Host seconds of the op's Python-level calls: kernel calls x aten_call + view calls x aten_view_call
// (autograd's share, which depends on the graph, is eager_timeline's).
double recorded_host_s(const RecordedSequence& seq, const GpuMachine& machine);
// The sequence with the op's sizes, for reports: [{"op", "depth", "shapes"}].
nlohmann::json instantiate(const RecordedSequence& seq, const Op& op);

}  // namespace tilesim::gpu
