#pragma once
// The rank files of a sweep over MPI ranks (docs/sweep-format.md, "Sweeps over MPI ranks"): rank R
// appends each finished row to DIR/ranks/rank-R.csv (a results.csv of its own: the header, then one
// write per row), so a rank that dies loses only the points it had not finished. Rank 0 merges them
// into results.csv at the end; a --resume (over any number of ranks, or in one process) merges the
// ones a dead run left before it counts what is done.
//
// A rank holds an advisory lock (flock) on its file while it writes, and the merge takes each file's
// lock before reading it: a rank of an earlier run still alive (its rank 0 died, the launcher has not
// yet ended it) keeps its file, and the merge is refused rather than losing its next rows.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"
#include "runs/sweep/results_file.hpp"

namespace tilesim::runs::sweep {

// DIR/ranks and DIR/ranks/rank-R.csv.
std::string rank_dir(const std::string& out_dir);
std::string rank_file_path(const std::string& out_dir, int rank);

// The rank files in DIR/ranks (names rank-<digits>.csv), by rank; none when the folder is not there.
std::vector<std::string> rank_files(const std::string& out_dir);

// An exclusive flock on a file, held while the object lives. Throws InputError (exit 2) naming the
// file when another process holds it.
class FileHold {
 public:
  // `create`: make the file (empty) when it is not there.
  FileHold(const std::string& path, bool create);
  ~FileHold();
  FileHold(const FileHold&) = delete;
  FileHold& operator=(const FileHold&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// The length of `path`'s whole lines (a partial last line, which a kill in the middle of a write can
// leave, is not counted), after checking that what is there starts with the results.csv header.
// 0 for an empty file. Reads only.
std::uintmax_t whole_line_bytes(const std::string& path);

struct MergeOutcome {
  std::size_t files = 0;       // rank files merged (and removed)
  std::size_t rows = 0;        // rows they added to results.csv
  std::size_t duplicates = 0;  // rows already in results.csv (or in another rank file): left out
  std::size_t partial_lines = 0;  // partial last lines dropped (results.csv's and the rank files')
};

// Moves every row of DIR/ranks/rank-*.csv into results.csv and removes the rank files: results.csv's
// whole lines, then the rank files' rows not already there (one row per point: the first kept), in
// sweep order (`position`; rows of no point of the sweep after, as found).
// results.csv is rewritten whole (a temporary file renamed into place), so a merge that stops
// part-way leaves the old results.csv and every rank file, and a merge that stops after the rename
// leaves rank files whose rows are all duplicates. Reads and checks every file before writing any.
// Nothing to do (no rank files): returns zeros and changes nothing.
// `position`: a row's place in sweep order (of `sweep_points`), nothing for a row of no point of it.
MergeOutcome merge_rank_files(const std::string& out_dir, const std::string& csv_path, std::size_t sweep_points,
                              const PointPosition& position);

// After a sweep whose worker processes appended rows as they finished (--jobs N > 1): results.csv's
// rows put in sweep order (`position`; rows of no point of the sweep after, as found), rewritten whole
// (a temporary file renamed into place) when they are not in that order already. A file larger than
// `max_bytes` is left as it is (its rows are read whole to sort them), and so is one whose last line is
// partial (a --resume mends that first).
enum class RowOrder { already, rewritten, too_large, partial_line };
RowOrder put_rows_in_sweep_order(const std::string& csv_path, const PointPosition& position, std::uintmax_t max_bytes);

// --overwrite: removes the rank files of an earlier run (after taking each one's lock).
std::size_t remove_rank_files(const std::string& out_dir);

}  // namespace tilesim::runs::sweep
