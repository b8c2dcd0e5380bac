#pragma once
// Synthetic graph generators. Each is deterministic in its seed and returns the edges in the order it
// produced them; the PyG-style clean-up (symmetrise, deduplicate, self-loops, edge order) is applied
// afterwards by apply_edge_options (edge_options.hpp). Boost.Graph's generators are used where Boost has
// one; the power-law (Chung-Lu) and molecule generators are written here because Boost has none that
// streams at the sizes of the dataset presets (124M edges).
#include <cstdint>
#include <random>
#include <string>

#include "workloads/graphs/graph.hpp"

namespace tilesim::workloads::graphs {

// Uniform random (Erdos-Renyi G(n, m) with repeats): both endpoints uniform over the nodes, like
// torch.randint(N, (2, E)). Boost's erdos_renyi_iterator.
struct ErdosRenyiParams {
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;
  bool self_loops = true;  // false: an endpoint equal to the other is drawn again
};
EdgeList erdos_renyi(const ErdosRenyiParams& params, std::uint64_t seed);

// R-MAT (Chakrabarti et al.): each edge picks one quadrant of the adjacency matrix per level with
// probabilities a, b, c, d. Boost's rmat_iterator (which perturbs a..d by up to 10% per level, as the
// SSCA#2 reference does, and permutes the vertex labels so hubs are not all at low ids).
struct RmatParams {
  std::int64_t num_nodes = 0;  // 2^scale; other values are accepted (Boost halves num_nodes per level)
  std::int64_t num_edges = 0;
  double a = 0.57, b = 0.19, c = 0.19, d = 0.05;  // Graph500 defaults
};
EdgeList rmat(const RmatParams& params, std::uint64_t seed);

// Power-law out-degree sequence (Palmer and Steffan's PLOD): node degree beta * x^-alpha for x uniform
// in [0, n), targets uniform. Boost's plod_iterator (directed). Each edge is produced once.
struct PlodParams {
  std::int64_t num_nodes = 0;
  double alpha = 0;
  double beta = 0;
};
EdgeList plod(const PlodParams& params, std::uint64_t seed);
// PLOD's expected average degree (both ends of each edge) for n, alpha and beta.
double plod_average_degree(std::int64_t num_nodes, double alpha, double beta);
// The beta that makes PLOD's expected average degree `average_degree` for this n and alpha.
double plod_beta_for_average_degree(std::int64_t num_nodes, double alpha, double average_degree);

// Watts-Strogatz small world: a ring where each node links to its k nearest neighbours, each edge
// rewired to a random target with probability p. Boost's small_world_iterator; each undirected edge
// is produced once (symmetrise for both directions).
struct SmallWorldParams {
  std::int64_t num_nodes = 0;
  std::int64_t k = 0;
  double rewire_probability = 0;
};
EdgeList small_world(const SmallWorldParams& params, std::uint64_t seed);

// A batch of small molecule-like graphs, laid out block-diagonally (graph g's nodes follow graph g-1's):
// each has a node count uniform in [min_nodes, max_nodes] and atoms at uniform random 3-D positions;
// edges are every ordered pair (complete, as PyG's radius_graph with a cutoff wider than the molecule)
// or, for k-nearest-neighbour, the k nearest sources of each destination (PyG's knn_graph, flow
// source_to_target), ordered by destination then distance.
enum class MoleculeConnectivity { complete, knn };
struct MoleculeParams {
  std::int64_t num_graphs = 0;
  std::int64_t min_nodes = 10;
  std::int64_t max_nodes = 30;
  MoleculeConnectivity connectivity = MoleculeConnectivity::complete;
  std::int64_t k = 0;  // knn only
};
EdgeList molecules(const MoleculeParams& params, std::uint64_t seed);
// One molecule of `num_atoms` atoms appended to `out` as graph out.num_graphs (its nodes after out's,
// graph_of_node and num_graphs extended), its positions drawn from `engine`: the molecule generator's
// step, shared with the dataset loaders (workloads/loaders/graph_dataset.hpp).
void append_molecule(EdgeList& out, std::int64_t num_atoms, MoleculeConnectivity connectivity, std::int64_t k,
                     std::mt19937_64& engine);

// Chung-Lu power law with optional blocks (a degree-corrected stochastic block model): node weights
// follow a rank power law w_r ~ (r + r0)^(-1/(exponent-1)), with r0 chosen so that the largest expected
// degree is max_degree, and scaled to the average degree num_edges / num_nodes. Each sampled pair picks
// its source by weight; its destination is, with the probability that makes the expected share of
// edges inside a block intra_block_fraction, drawn from the source's block, else from all nodes.
// Blocks (num_blocks of equal size) and weights are assigned to node ids by random permutations, so
// ids carry no locality. Symmetric: num_edges / 2 pairs, each stored in both directions (PyG's
// convention for undirected datasets); otherwise num_edges directed pairs.
// Sampling is in fixed chunks, each with its own random stream, and runs in parallel.
struct PowerLawParams {
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;
  double exponent = 2.5;
  double max_degree = 0;
  bool symmetric = true;
  std::int64_t num_blocks = 1;
  double intra_block_fraction = 0;
};
EdgeList power_law(const PowerLawParams& params, std::uint64_t seed);

}  // namespace tilesim::workloads::graphs
