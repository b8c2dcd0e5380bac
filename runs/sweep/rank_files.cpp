#include "runs/sweep/rank_files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/results_table.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"

namespace tilesim::runs::sweep {

namespace fs = std::filesystem;

std::string rank_dir(const std::string& out_dir) { return (fs::path(out_dir) / "ranks").string(); }

std::string rank_file_path(const std::string& out_dir, int rank) {
  return (fs::path(rank_dir(out_dir)) / ("rank-" + std::to_string(rank) + ".csv")).string();
}

std::vector<std::string> rank_files(const std::string& out_dir) {
  const fs::path dir = rank_dir(out_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  static const std::regex name("rank-([0-9]{1,9})\\.csv");
  std::vector<std::pair<long, std::string>> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, m, name)) found.emplace_back(std::stol(m[1].str()), entry.path().string());
  }
  if (ec) throw InputError(dir.string(), "", "a folder of rank files tilesim can list", ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

FileHold::FileHold(const std::string& path, bool create) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
  if (fd_ < 0) throw InputError(path, "", "a rank file tilesim can open", std::strerror(errno));
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw InputError(path, "", "a lock on the rank file", std::strerror(err));
    throw InputError(path, "",
                     "a rank file no running sweep rank is writing (a rank of an earlier sweep over MPI ranks is still "
                     "alive: wait for it to end)",
                     "one held by another process");
  }
}

FileHold::~FileHold() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

namespace {

std::string read_csv_text(const std::string& path) {
  return read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes}, "a readable results.csv");
}

// Drops a partial last line; says whether there was one.
bool cut_partial_line(std::string& text) {
  if (text.empty() || text.back() == '\n') return false;
  const auto last = text.rfind('\n');
  text.resize(last == std::string::npos ? 0 : last + 1);
  return true;
}

void check_header(const std::string& text, const std::string& path) {
  const std::string header = analysis::results_csv_header();
  if (text.compare(0, header.size(), header) != 0)
    throw InputError(path + ":1", "", "the results.csv header of this tilesim version (" + header.substr(0, 60) + "...)",
                     "another header; resume into a new --out directory");
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// A rank file read and checked, before anything is written.
struct RankRow {
  std::string key;                     // analysis::point_key
  std::optional<std::size_t> position; // in sweep order; nothing for a row of no point of the sweep
  std::string line;                    // the row's line, with its '\n'
};
struct RankRows {
  std::string path;
  std::vector<RankRow> rows;
  bool partial = false;
};

RankRows read_rank_file(const std::string& path, const PointPosition& position) {
  RankRows r;
  r.path = path;
  std::string text = read_csv_text(path);
  r.partial = cut_partial_line(text);
  if (text.empty()) return r;  // created, killed before its header was whole
  check_header(text, path);
  const std::vector<std::string> lines = split_lines(text);
  for (const auto& row : analysis::parse_results_csv(text, path))
    r.rows.push_back({analysis::point_key(row), position(row), lines[static_cast<std::size_t>(row.line - 1)] + "\n"});
  return r;
}

}  // namespace

std::uintmax_t whole_line_bytes(const std::string& path) {
  std::string text = read_csv_text(path);
  cut_partial_line(text);
  if (!text.empty()) {
    check_header(text, path);
    analysis::parse_results_csv(text, path);  // every row must read back
  }
  return text.size();
}

MergeOutcome merge_rank_files(const std::string& out_dir, const std::string& csv_path, std::size_t sweep_points,
                              const PointPosition& position) {
  MergeOutcome outcome;
  const std::vector<std::string> paths = rank_files(out_dir);
  if (paths.empty()) return outcome;
  std::vector<std::unique_ptr<FileHold>> holds;
  for (const auto& p : paths) holds.push_back(std::make_unique<FileHold>(p, false));

  // Read and check everything first. The rows there: one bit per point of the sweep, keys for others.
  std::string text;
  if (fs::exists(csv_path)) {
    text = read_csv_text(csv_path);
    outcome.partial_lines += cut_partial_line(text) ? 1 : 0;
  }
  if (text.empty()) text = analysis::results_csv_header();
  check_header(text, csv_path);
  std::vector<bool> have_point(sweep_points, false);
  std::set<std::string> have_other;
  auto first_time = [&](const std::optional<std::size_t>& at, const std::string& key) {
    if (!at || *at >= have_point.size()) return have_other.insert(key).second;
    if (have_point[*at]) return false;
    have_point[*at] = true;
    return true;
  };
  {
    std::istringstream in(text);
    analysis::for_each_results_row(in, csv_path, analysis::PartialLastLine::parse,
                                   [&](analysis::ResultRow&& row) { first_time(position(row), analysis::point_key(row)); });
  }
  std::vector<RankRows> ranks;
  for (const auto& p : paths) {
    ranks.push_back(read_rank_file(p, position));
    outcome.partial_lines += ranks.back().partial ? 1 : 0;
  }

  // The new rows, in sweep order.
  struct NewRow {
    std::size_t position;
    std::size_t found;
    const std::string* line;
  };
  std::vector<NewRow> added;
  for (const auto& r : ranks)
    for (const auto& row : r.rows) {
      if (!first_time(row.position, row.key)) {
        ++outcome.duplicates;
        continue;
      }
      added.push_back({row.position.value_or(std::numeric_limits<std::size_t>::max()), added.size(), &row.line});
    }
  std::sort(added.begin(), added.end(),
            [](const NewRow& a, const NewRow& b) { return std::tie(a.position, a.found) < std::tie(b.position, b.found); });
  for (const auto& a : added) text += *a.line;
  outcome.rows = added.size();
  outcome.files = paths.size();

  write_file_atomically(csv_path, text);
  for (const auto& p : paths) {
    std::error_code ec;
    fs::remove(p, ec);
    if (ec) throw Error(ExitCode::internal_error, "removing the merged rank file " + p + ": " + ec.message() +
                                                       " (its rows are in " + csv_path + ")");
  }
  std::error_code ec;
  fs::remove(rank_dir(out_dir), ec);  // only when empty; something else there keeps it
  return outcome;
}

RowOrder put_rows_in_sweep_order(const std::string& csv_path, const PointPosition& position, std::uintmax_t max_bytes) {
  if (fs::file_size(csv_path) > max_bytes) return RowOrder::too_large;
  std::string text = read_csv_text(csv_path);
  if (cut_partial_line(text)) return RowOrder::partial_line;
  if (text.empty()) return RowOrder::already;
  check_header(text, csv_path);
  const std::vector<std::string> lines = split_lines(text);
  struct Placed {
    std::size_t position;
    std::size_t line;  // 1-based, as ResultRow::line
  };
  std::vector<Placed> rows;
  for (const auto& row : analysis::parse_results_csv(text, csv_path)) {
    rows.push_back({position(row).value_or(std::numeric_limits<std::size_t>::max()), static_cast<std::size_t>(row.line)});
  }
  auto before = [](const Placed& a, const Placed& b) { return std::tie(a.position, a.line) < std::tie(b.position, b.line); };
  if (std::is_sorted(rows.begin(), rows.end(), before)) return RowOrder::already;
  std::sort(rows.begin(), rows.end(), before);
  std::string sorted = lines.front() + "\n";  // the header
  sorted.reserve(text.size());
  for (const Placed& r : rows) sorted += lines[r.line - 1] + "\n";
  write_file_atomically(csv_path, sorted);
  return RowOrder::rewritten;
}

std::size_t remove_rank_files(const std::string& out_dir) {
  const std::vector<std::string> paths = rank_files(out_dir);
  for (const auto& p : paths) {
    const FileHold hold(p, false);
    std::error_code ec;
    fs::remove(p, ec);
    if (ec) throw Error(ExitCode::internal_error, "removing the rank file " + p + " (--overwrite): " + ec.message());
  }
  std::error_code ec;
  fs::remove(rank_dir(out_dir), ec);
  return paths.size();
}

}  // namespace tilesim::runs::sweep
