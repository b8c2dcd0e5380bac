#pragma once
// The few collective calls a sweep over MPI ranks makes (docs/sweep-format.md, "Sweeps over MPI ranks"):
// rank 0 tells the others which points are still to run, and gathers what each recorded. Each call
// is collective over every rank of the job, rooted at rank 0.
//
// They wait "quietly": a rank with nothing left to do tests the request and sleeps between tests
// instead of sitting in a blocking MPI call, because Open MPI's blocking calls poll and so hold a
// whole core, which the ranks still simulating (or rank 0 timing the measured points) need.
//
// Without MPI (not built with it, or not started by an MPI launcher) each call returns what this
// rank passed: the world has one rank.
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim::runs::sweep::ranks {

// Rank 0's `values` on every rank (the argument is ignored elsewhere).
std::vector<std::int64_t> broadcast_from_root(const std::vector<std::int64_t>& values);
std::string broadcast_from_root(const std::string& text);

// On rank 0, every rank's `values` in rank order (each rank passes the same count); elsewhere empty.
std::vector<std::vector<double>> gather_to_root(const std::vector<double>& values);
// On rank 0, every rank's `text` in rank order; elsewhere empty.
std::vector<std::string> gather_to_root(const std::string& text);

}  // namespace tilesim::runs::sweep::ranks
