#pragma once
// What a locality-aware mapping of node rows onto the IPU's tiles buys for one message-passing step of a
// graph: the exchange under a linear spread, reverse Cuthill-McKee then linear, and METIS k-way parts,
// each simulated (timing-only). What `tilesim placement` prints and tilesim.placement returns: the
// command and the Python module fill the request and read the report.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::runs {

struct PlacementStudyRequest {
  // The graph: a workload with a "graph" object (its "seed" and "num_features" are read too), or a
  // preset; exactly one of the two.
  std::string workload;                    // the workload file (read when `document` is not given)
  std::optional<nlohmann::json> document;  // or its document in memory (named `workload` in messages, if
                                           // that is given); its {"edge_index": NAME} graph must be
                                           // listed by a live workloads::graphs::ScopedInMemoryGraphs
  std::string graph;                       // a preset name (cora, pubmed, ogbn-arxiv, ...)
  std::optional<std::int64_t> features;    // else the workload's num_features, else the graph's
  std::string dtype = "float32";           // of a row's values: float32, float16 or bfloat16
  std::string machine = "bow";             // the IPU: a shipped name or a machine file
  bool symmetrize = false;                 // symmetrise and deduplicate the graph first
  std::optional<std::uint64_t> seed;       // else the workload's, or 0
  bool progress = true;                    // a line on standard error per stage
};

// The report `tilesim placement --json` prints: the source, the graph's figures, the row size and
// machine, the bandwidth as given and after RCM, and one entry per placement. InputError for a bad
// request (the messages name the command line's options), PlanError when a row or a tile's rows do not
// fit a tile.
nlohmann::json study_placements(const PlacementStudyRequest& request);

}  // namespace tilesim::runs
