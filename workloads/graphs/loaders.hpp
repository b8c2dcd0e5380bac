#pragma once
// Graph file loaders. Every malformed line is a tilesim::InputError naming "FILE:LINE", what was
// expected and what was found. Formats: docs/graph-format.md.
#include <string>

#include "workloads/graphs/graph.hpp"

namespace tilesim::workloads::graphs {

enum class FileFormat { edge_list, matrix_market, metis };

// "edge_list", "matrix_market", "metis"; and the format a file name suggests (.mtx: Matrix Market,
// .graph or .metis: METIS, anything else: edge list).
std::string to_string(FileFormat format);
FileFormat format_for_file_name(const std::string& path);

// Two integers per line, "SRC DST" (whitespace-separated; more columns are an error); blank lines
// and lines starting with '#' or '%' are skipped. Ids may be any non-negative integers: they are
// remapped to 0..N-1 in order of first appearance (so isolated nodes cannot be expressed).
EdgeList load_edge_list(const std::string& path);

// Matrix Market coordinate files (pattern, real or integer; general or symmetric), square. Entry
// (i, j) is the edge i -> j (PyG's from_scipy_sparse_matrix: row = source); a symmetric file's
// off-diagonal entries give both directions. Ids are 1-based in the file, 0-based here; N is the
// matrix order (isolated nodes kept). Values are read and checked, then dropped.
EdgeList load_matrix_market(const std::string& path);

// METIS graph files: a header "N M [FMT [NCON]]", then one line per vertex listing its neighbours
// (1-based), with vertex sizes, vertex weights and edge weights as FMT says (weights are skipped).
// Each undirected edge is listed at both ends, so the graph has 2M directed edges, in vertex order.
// '%' lines are comments; an empty line is a vertex without neighbours.
EdgeList load_metis(const std::string& path);

EdgeList load_graph_file(const std::string& path, FileFormat format);

}  // namespace tilesim::workloads::graphs
