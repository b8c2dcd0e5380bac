#pragma once
// Reader for the hydronet-gnn measurement CSVs (validation/hydronet-gnn/, see its README.md).
// Two formats share the size columns num_inputs, num_features, num_outputs (hydronet naming, as in
// ir/op_graph.hpp):
//   Bow:  ,num_inputs,num_features,num_outputs,cycles,time (μs),effective bandwidth (GiB/s)
//   A100: ,num_inputs,num_features,num_outputs,time,iqr          (time and iqr in microseconds)
// Columns are found by name, so their order does not matter; unknown extra columns are ignored.
#include <optional>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"

namespace tilesim::analysis {

struct MeasuredPoint {
  std::string op;                  // as passed to the reader: "gather", "scatter_add", "scatter_max", ...
  OpShape shape;
  double time_s = 0;               // measured time per op, seconds
  std::optional<double> cycles;    // Bow: tile clock cycles per op
  std::optional<double> iqr_s;     // A100: interquartile range of the per-call time, seconds
  int line = 0;                    // 1-based line in the file, for messages
};

// Reads every data row of a hydronet CSV. A missing file, a header without the needed columns, or a
// row that is short, non-numeric, non-positive or has a non-integral size throws tilesim::InputError
// naming the file and line.
std::vector<MeasuredPoint> read_hydronet_csv(const std::string& path, const std::string& op);

}  // namespace tilesim::analysis
