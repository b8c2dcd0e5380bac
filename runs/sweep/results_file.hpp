#pragma once
// results.csv: appended one write() per row, so a killed sweep leaves whole rows (at worst a partial
// last line, which --resume drops); and what --resume finds in it already. A new results.csv (or one
// --overwrite replaces) is a header written to a temporary file and renamed into place. Reading what is
// there changes nothing: the partial line is cut only once every check has passed (a failed --resume
// leaves the folder as it was). Writers hold the folder's OutputLock.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"

namespace tilesim::runs::sweep {

class ResultsFile {
 public:
  explicit ResultsFile(std::string path) : path_(std::move(path)) {}
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  // A results.csv holding the header only, replacing any there (temporary file and rename): an op
  // sweep's header, or `header` (a line ending in '\n', a workload sweep's).
  void start_new();
  void start_new(const std::string& header);
  // Continues the file: cuts it to `keep_bytes` (a partial last line) and appends after it.
  void continue_at(std::uintmax_t keep_bytes);
  void append(const std::string& text);

 private:
  std::string path_;
  int fd_ = -1;
};

// The points of results.csv that a run need not repeat.
struct DonePoints {
  std::vector<bool> done;        // one per point of the sweep (its SweepPoints index): a row is there
  std::size_t foreign_rows = 0;  // rows that are no point of this sweep (kept)
  bool exists = false;           // a results.csv to continue (--resume); else a new one is started
  std::uintmax_t keep_bytes = 0; // its whole lines: the length it is cut to before appending
};

// With --resume, the points already in results.csv (a partial last line is not counted; a point there
// twice is reported), read one row at a time: memory is one bit per point however long the file; without
// it, nothing, or an InputError when there is a results.csv and no --overwrite. Reads only.
// `position`: a row's place in sweep order (of `sweep_points`), nothing for a row of no point of it.
using PointPosition = std::function<std::optional<std::size_t>(const analysis::ResultRow&)>;
DonePoints done_points(const std::string& csv_path, std::size_t sweep_points, const PointPosition& position, bool resume,
                       bool overwrite);

}  // namespace tilesim::runs::sweep
