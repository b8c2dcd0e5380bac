#pragma once
// results.csv: appended one write() per row, so a killed sweep leaves whole rows (at worst a partial
// last line, which --resume drops); and what --resume finds in it already.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"
#include "workloads/sweep_spec.hpp"

namespace tilesim::cli::sweep {

class ResultsFile {
 public:
  explicit ResultsFile(std::string path) : path_(std::move(path)) {}
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  // Opens for appending; writes the header when the file is new or empty.
  void open(bool truncate);
  void append(const std::string& text);

 private:
  std::string path_;
  int fd_ = -1;
};

// The points of results.csv that a run need not repeat.
struct DonePoints {
  std::set<std::string> keys;    // analysis::point_key of every row already there
  std::size_t foreign_rows = 0;  // rows that are no point of this sweep (kept)
};

// With --resume, the points already in results.csv (a partial last line is cut off; a point there twice
// is reported); without it, nothing, or an InputError when there is a results.csv and no --overwrite.
// `backend_names`: the canonical name of each backend index of `points`.
DonePoints done_points(const std::string& csv_path, const std::vector<analysis::SweepPoint>& points,
                       const std::vector<std::string>& backend_names, bool resume, bool overwrite);

}  // namespace tilesim::cli::sweep
