#pragma once
// PopTorch Geometric's fixed shapes (graphcore/poptorch, poptorch_geometric/): an IPU program is
// compiled for one size of every tensor, so each batch is padded to a fixed node, edge and graph count,
// and batches of small graphs are packed to fill those sizes well.
//
// Padding layout, from FixedSizeCollater (poptorch_geometric/python/collate.py) and the Pad transform
// it applies to each padding graph (torch_geometric/transforms/pad.py):
//  - graph batches get num_graphs - (real graphs) padding graphs after the real ones; the padding
//    nodes and edges are divided evenly among them, the first (count mod graphs) one each more;
//  - each padding graph's edges are self-loops on its first node (Pad fills edge_index with "the
//    index of the first padded node"), so no real node receives a message from padding;
//  - node batches (num_graphs not set) get one padding graph holding all padding nodes and edges.
#include <cstdint>
#include <vector>

#include "workloads/loaders/batch.hpp"
#include "workloads/loaders/graph_dataset.hpp"

namespace tilesim::workloads::loaders {

struct FixedSize { std::int64_t num_nodes = 0, num_edges = 0, num_graphs = 0; };  // num_graphs 0 for node batches
struct Padding {
  std::int64_t real_nodes = 0, real_edges = 0, real_graphs = 0, pad_nodes = 0, pad_edges = 0, pad_graphs = 0;
};

// Pads a batch to `size` in the layout above: padding nodes appended after the real ones, padding
// edges after the real ones (relation type 0 when the graph has types), padding graphs after the real
// graphs (graph_of_node extended). global_nodes / graph_ids are not extended (they describe real nodes
// only). Throws std::invalid_argument, leaving the batch as it was, when it does not fit: more real
// nodes, edges or graphs than the size; a graph batch with size.num_graphs 0 or a node batch with
// size.num_graphs > 0; padding needed but no padding graph to hold it (num_graphs = real graphs);
// padding edges but no padding node; fewer padding nodes than padding graphs (a padding graph needs a
// node to hang its edges on).
Padding pad_to_fixed_size(Batch& batch, const FixedSize& size);

// Packing graphs into fixed-size batches. A pack's real graphs leave room for the padding as PopTorch
// Geometric's packers do (pyg_dataloader.py, "Leave space for padding": the samplers get num_graphs - 1,
// num_nodes - 1 and num_edges - 1; StreamPackingSampler._has_space: the nodes and the edges left are
// at least the graph slots left), so pad_to_fixed_size always succeeds on a pack:
//   graphs <= num_graphs - 1, nodes <= num_nodes - 1, edges <= num_edges - 1,
//   (num_nodes - 1 - nodes) >= (num_graphs - 1 - graphs) and (num_edges - 1 - edges) >= (num_graphs - 1 - graphs).
//  - lpfhp: longest-pack-first histogram packing (Krell et al. 2021, "Efficient sequence packing
//    without cross-contamination"), adapted to graphs: graphs taken by node count, largest first
//    (ties in the given order), each into the fullest pack that still fits it on all limits (the
//    least node room, nodes left beyond one per free graph slot; then the least edge room, alike), a
//    new pack otherwise; packs in the order they were opened;
//  - stream: the graphs in the order given, each pack closed when the next graph would not fit
//    (PopTorch Geometric's StreamPackingSampler).
// Which packs tighter depends on the size. lpfhp wins when a pack holds few graphs and its graph and
// edge limits have slack (stream wastes about half a graph per pack). Where they bind, longest-first
// hurts: the edge-dense large graphs share the first packs and run out of edges before nodes, and the
// small graphs come last and run out of graph slots; a shuffled stream mixes sizes and can need fewer
// packs (figures in bench/sampler_bench.cpp).
// Throws std::invalid_argument if a single graph does not fit (or size.num_graphs < 2). `order`: the
// dataset graph ids (maybe shuffled, by graph_batches with batch_size num_graphs).
std::vector<std::vector<std::int32_t>> pack_lpfhp(const GraphDataset& dataset, const std::vector<std::int32_t>& order, const FixedSize& size);
std::vector<std::vector<std::int32_t>> pack_stream(const GraphDataset& dataset, const std::vector<std::int32_t>& order, const FixedSize& size);

}  // namespace tilesim::workloads::loaders
