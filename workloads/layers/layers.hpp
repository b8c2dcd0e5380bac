#pragma once
// GNN layers lowered to the op graph, each exactly as PyTorch Geometric computes its forward pass
// (deviations are listed at each layer and in docs/workload-format.md, "Layers"). A layer becomes one
// OpGroup of consecutive ops; weights, biases, node features and edge indices are graph inputs, whose
// values the lowering describes (InputFill) and workloads/instantiate.cpp generates.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "workloads/graphs/graph.hpp"

namespace tilesim::workloads::layers {

enum class LayerKind { gcn, sage, gin, gat, schnet, rgcn, linear, pool, film, cgconv };
// How a "pool" layer reduces each graph's node rows to one row (PyG's global_add_pool, global_mean_pool).
enum class PoolReduce { add, mean };
// What a GIN layer's nn is: PyG's GIN MLP (Linear -> ReLU -> Linear) or a single torch.nn.Linear.
enum class GinNn { mlp, linear };
// Where a GAT layer computes its attention logits: per node then gathered to the edges (PyG's GATConv,
// (h * att).sum(-1) on the N rows), or per edge from the gathered rows (a MessagePassing whose message
// computes (x_i * att_i).sum(-1) + (x_j * att_j).sum(-1), as the DGL team's PyG GAT benchmark script for
// ogbn-arxiv writes it: the same values, E / N times the work, and the destination rows gathered too).
enum class GatAttention { per_node, per_edge };
// How a FiLM or CGConv layer aggregates its messages (PyG's aggr: 'mean', FiLMConv's default, 'add',
// CGConv's, or 'max').
enum class MessageAggregation { mean, add, max };
std::string to_string(LayerKind kind);
std::optional<LayerKind> layer_kind_from_string(const std::string& name);

// One entry of a workload's "model" array. Fields a layer does not use keep their defaults.
struct LayerSpec {
  LayerKind kind = LayerKind::gcn;
  std::string name;                      // the group's name; op names are "<name>.<step>"
  std::int64_t out_features = 0;         // schnet: equal to its input width (InteractionBlock keeps it)
  bool bias = true;                      // every layer's final bias (schnet: lin2's and lin's)
  std::optional<UnaryFn> activation;     // applied after the layer, inside its group
  float activation_scalar = 0;           // leaky_relu slope
  std::int64_t heads = 1;                // gat: heads, concatenated (out_features = heads * channels)
  float negative_slope = 0.2f;           // gat: LeakyReLU slope of the attention logits
  GatAttention gat_attention = GatAttention::per_node;  // gat: where the logits are computed
  bool concat = true;                    // gat: heads concatenated (H * C wide) or averaged (C wide)
  GinNn gin_nn = GinNn::mlp;             // gin: the MLP or one Linear
  std::int64_t hidden_features = 0;      // gin: the MLP's hidden width (0: out_features)
  float eps = 0;                         // gin: (1 + eps) * x
  std::int64_t filters = 0;              // schnet: num_filters (0: the hidden width)
  std::int64_t num_gaussians = 50;       // schnet
  float cutoff = 10.0f;                  // schnet: cosine cutoff and Gaussian range (PyG SchNet default 10)
  std::int32_t num_relations = 0;        // rgcn: 0 takes the graph's relation count
  PoolReduce pool_reduce = PoolReduce::add;  // pool: each graph's rows summed or averaged
  std::optional<MessageAggregation> aggregation;  // film, cgconv: the messages' aggregation (unset: the kind's default)
  // Training only (a model run for inference lowers none, as PyTorch's eval mode): nn.Dropout(p) on the
  // layer's input features, and gat's dropout of the attention coefficients (GATConv's `dropout`), each
  // in [0, 1).
  double input_dropout = 0;
  double attention_dropout = 0;
  // The simulated IPU's available memory proportion for every op the layer lowers to (and their
  // backward ops); unset: the run's or the machine file's (models/ipu/planning/temporary_budget.hpp).
  std::optional<double> available_memory_proportion;
  std::string json_path;                 // where the workload file gives it ("model[1]"), for messages
};

// The kind of the OpGroup a layer lowers to: the layer's kind, or a variant where PyG's module structure
// differs ("gin_linear": GINConv around one Linear; "gat_per_edge": the attention from the gathered rows), which the GPU model's eager mode looks up
// (models/gpu/eager/pyg_layers.json).
std::string group_kind(const LayerSpec& spec);

// How instantiate fills one graph input. Random kinds draw from a stream keyed by the tensor's name,
// so a layer's weights do not change when another layer is added.
struct InputFill {
  enum class Kind {
    standard_normal,      // node features (torch.randn)
    uniform,              // U(-bound, bound): glorot (sqrt(6 / (fan_in + fan_out))) or fan-in (1 / sqrt(fan_in))
    block_diagonal,       // gat attention vector as an [H*C, H] matrix: column h holds att[h, :] in rows h*C..h*C+C-1
    given_i32,            // indices and offsets from the graph
    given_f32,            // edge weights and Gaussian edge attributes (computed beforehand, as PyG's harness does)
  };
  TensorId tensor = -1;
  Kind kind = Kind::standard_normal;
  double bound = 0;
  std::int64_t block_rows = 0;  // block_diagonal: C
  std::vector<std::int32_t> i32;
  std::vector<float> f32;
  // Made or kept on the device, not sent by the host with each batch: a trained parameter, its optimizer
  // state, Adam's step number, a dropout mask the device's own generator draws, a constant mask, the edge
  // distances and Gaussians a SchNet model computes in its forward.
  bool device_resident = false;
};

// The bytes the host sends with every step (the batch's features, indices, edge attributes, loss rows,
// labels and targets): every filled input that is not device_resident, at its own dtype.
std::int64_t host_input_bytes(const OpGraph& graph, const std::vector<InputFill>& fills);

// Sets the value of every input in `fills` (moving given values out of them): standard normal and
// uniform values from the stream named after the tensor under `seed` (streams::named_engine).
void fill_inputs(TensorValues& values, const OpGraph& graph, std::vector<InputFill>& fills, std::uint64_t seed);

// The edges of a graph as graph-input index tensors, in the variants the layers need; each variant is
// made once and shared by every layer that uses it (PyG reuses edge_index across layers).
struct EdgeTensors {
  TensorId src = -1, dst = -1;
  std::int64_t num_edges = 0;
  TensorId relation_offsets = -1;  // "by_relation": [R + 1] int32 segment offsets
  std::int32_t num_relations = 0;
  TensorId distance = -1;          // "distance": [E, 1] edge weights (SchNet's interatomic distances)
  std::map<std::string, TensorId> gaussians;  // by "G/cutoff": [E, G] Gaussian-smeared distances
};

// State shared by the layers of one lowering: the graph being built, the fills of its inputs, the
// edge variants made so far. `seed` draws what the graph does not give (relation types, distances).
class Lowering {
 public:
  Lowering(OpGraph& graph, std::vector<InputFill>& fills, const graphs::EdgeList& edges, std::uint64_t seed)
      : graph_(graph), fills_(fills), edges_(edges), seed_(seed) {}
  std::uint64_t seed() const { return seed_; }

  // The workload file, for messages about the graph a layer cannot use.
  std::string source_file;
  // The value dtype of every float tensor and op the layers make (a model's "dtype"; the whole model in
  // one dtype, as torch's model.half() or PopTorch's half model): float32, float16 or bfloat16.
  DType value_dtype = DType::float32;
  // The model is lowered for a training step: dropout is applied (models/workloads: docs/workload-format.md).
  bool training = false;
  // Mixed precision (a half model's training step): when set, the parameters input() makes (its uniform
  // and block-diagonal kinds) are graph inputs of this dtype (float32: the master weights the optimizer
  // updates), each read through a cast op "<name>.cast" to the value dtype, emitted where the parameter
  // is made (inside its layer's group), as autocast casts a weight at the op that reads it.
  std::optional<DType> master_dtype;

  OpGraph& graph() { return graph_; }
  const graphs::EdgeList& edges() const { return edges_; }
  std::int64_t num_nodes() const { return edges_.num_nodes; }

  // A graph input of `shape` in the value dtype, filled as described (kind, bound, block rows). With
  // master_dtype set, a parameter (uniform, block_diagonal) is the input in that dtype and the returned
  // tensor its cast to the value dtype.
  TensorId input(const std::string& name, std::vector<std::int64_t> shape, InputFill::Kind kind, double bound = 0,
                 std::int64_t block_rows = 0);
  TensorId given_i32(const std::string& name, std::vector<std::int32_t> values);
  // Given values in the value dtype, or in `dtype` (a training step's float32 loss targets, row weights,
  // optimizer state and step number, whatever the model's dtype).
  TensorId given_f32(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values);
  TensorId given_f32(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values, DType dtype);
  // Marks an input this lowering made as made or kept on the device (InputFill::device_resident).
  void keep_on_device(TensorId tensor);

  // Edge variants: "raw" (as the graph has them), "self_loops" (existing self-loops removed, one
  // (n, n) per node appended: PyG add_remaining_self_loops / remove_self_loops + add_self_loops),
  // "by_relation" (stably sorted by relation type, with offsets), "distance" (raw edges with edge weights
  // uniform in [1, cutoff), the hydronet harness's draw).
  const EdgeTensors& raw();
  const EdgeTensors& self_loops();
  const EdgeTensors& by_relation(std::int32_t num_relations, const std::string& where);
  const EdgeTensors& distance(float cutoff);
  // Gaussian smearing of the distances (PyG GaussianSmearing(0, cutoff, G)), computed here: not timed.
  TensorId gaussians(float cutoff, std::int64_t num_gaussians);

  // Appends an op in the value dtype; returns its output.
  TensorId op(Op op) {
    op.dtype = value_dtype;
    return graph_.add_op(std::move(op));
  }

 private:
  OpGraph& graph_;
  std::vector<InputFill>& fills_;
  const graphs::EdgeList& edges_;
  std::uint64_t seed_;
  std::map<std::string, EdgeTensors> variants_;
};

// Op builders: name, operands and shape filled from the operands' shapes.
Op matmul(const std::string& name, const OpGraph& g, TensorId x, TensorId weight, TensorId bias);
Op gather(const std::string& name, const OpGraph& g, TensorId table, TensorId indices);
Op scatter(const std::string& name, const OpGraph& g, OpKind kind, TensorId src, TensorId indices, std::int64_t rows);
Op degree_count(const std::string& name, const OpGraph& g, TensorId indices, std::int64_t rows);
Op unary(const std::string& name, const OpGraph& g, UnaryFn fn, TensorId x, float scalar = 0);
Op binary(const std::string& name, const OpGraph& g, BinaryFn fn, TensorId x, TensorId other);
Op segment_matmul(const std::string& name, const OpGraph& g, TensorId x, TensorId offsets, TensorId weight);
// segment_matmul's backward forms (ir/op_graph.hpp), as pyg_lib's autograd computes them: the input's
// gradient g_s @ W_s^T from `grad` [M, N] and the forward's weight [S, K, N] (out [M, K]), and the
// weight's gradient x_s^T @ g_s from the forward's input x [M, K] and `grad` [M, N] (out [S * K, N]).
Op segment_matmul_input_grad(const std::string& name, const OpGraph& g, TensorId grad, TensorId offsets, TensorId weight);
Op segment_matmul_weight_grad(const std::string& name, const OpGraph& g, TensorId x, TensorId offsets, TensorId grad);

// Pieces several layers share, each adding its ops to the lowering with names prefixed by `p`:
// message passing with a per-edge weight (GCN's norm, GAT's attention, CFConv's filter): the sum over
// edges src -> dst of h[src] * edge_weight, as "gather_src", "message" and "aggregate";
TensorId weighted_aggregate(Lowering& l, const std::string& p, TensorId h, const EdgeTensors& e, TensorId edge_weight);
// its last two steps, for a layer that gathered the source rows h_j itself (GAT's per-edge attention):
// h_j * edge_weight summed by destination, as "message" and "aggregate";
TensorId aggregate_messages(Lowering& l, const std::string& p, TensorId h_j, const EdgeTensors& e, TensorId edge_weight);
// and PyG's layer bias, a [1, width] input uniform in the fan-in bound, added to `result` as "bias";
TensorId add_bias(Lowering& l, const std::string& p, TensorId result, std::int64_t width, std::int64_t fan_in);
// and dropout with probability p in a training step (nothing otherwise, or for p = 0): `x` times a mask
// input "<name>.mask" of x's shape holding 0 (probability p) or 1 / (1 - p), drawn from the stream named
// after the mask, as "<name>". The mask is given, not a parameter: no gradient flows to it, and the
// backward is the gradient times the same mask, as autograd's native_dropout_backward computes it.
TensorId dropout(Lowering& l, const std::string& name, TensorId x, double p);

// Each lowers one layer over node features `x` ([num_nodes, F_in]) and returns its output tensor.
TensorId lower_gcn(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_sage(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_gin(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_linear(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_gat(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_schnet(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_rgcn(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_pool(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_film(Lowering& l, const LayerSpec& spec, TensorId x);
TensorId lower_cgconv(Lowering& l, const LayerSpec& spec, TensorId x);
// The aggregation a film or cgconv layer uses: its own, else its kind's default (film mean, cgconv add).
MessageAggregation message_aggregation(const LayerSpec& spec);
// The scatter op kind that aggregates messages that way.
OpKind aggregation_scatter_kind(MessageAggregation aggregation);
// Whether the graph source batches several graphs whose nodes are `rows` rows (a "molecules" source, a
// "graphs" loader's batch): what pooling by graph needs.
bool batches_graphs(const Lowering& l, std::int64_t rows);
// Each graph's rows of `x` reduced to one row by the batch vector (given as `batch_name`), summed
// (scatter_add: global_add_pool) or averaged (scatter_mean: global_mean_pool), as op `op_name`. Only
// where batches_graphs holds; the pool layer and a graph task's readout both pool this way.
TensorId pool_by_graph(Lowering& l, TensorId x, PoolReduce reduce, const std::string& op_name, const std::string& batch_name);

// Lowers one layer and its activation as an OpGroup named spec.name; returns the output tensor.
TensorId lower_layer(Lowering& l, const LayerSpec& spec, TensorId x);

// A stack of layers over node features "<prefix>x" ([num_nodes, num_features], standard normal).
TensorId lower_model(Lowering& l, const std::vector<LayerSpec>& model, std::int64_t num_features,
                     const std::string& prefix = "");

// The hydronet-gnn schnet_block benchmark as one group: `num_nodes` nodes with `num_features` features,
// `num_edges` edges with source and destination uniform over the nodes (drawn from `seed`), hidden =
// filters = num_features, 50 Gaussians, cutoff 6, distances uniform in [1, 6) smeared beforehand; one
// InteractionBlock forward.
void lower_schnet_block(OpGraph& graph, std::vector<InputFill>& fills, const std::string& name, std::int64_t num_nodes,
                        std::int64_t num_features, std::int64_t num_edges, std::uint64_t seed, DType dtype = DType::float32);

// The LayerSpec the schnet_block benchmark uses.
LayerSpec schnet_block_layer(const std::string& name, std::int64_t num_features);

}  // namespace tilesim::workloads::layers
