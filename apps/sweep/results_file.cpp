#include "apps/sweep/results_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/report_writer.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"

namespace tilesim::cli::sweep {

namespace fs = std::filesystem;

ResultsFile::~ResultsFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsFile::start_new() {
  write_file_atomically(path_, analysis::results_csv_header());
  continue_at(analysis::results_csv_header().size());
}

void ResultsFile::continue_at(std::uintmax_t keep_bytes) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw InputError(path_, "", "a results file tilesim can write", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw Error(ExitCode::internal_error, "stat " + path_ + ": " + std::strerror(errno));
  if (static_cast<std::uintmax_t>(st.st_size) > keep_bytes) {
    std::cerr << "sweep: " << path_ << ": dropping a partial last line (" << st.st_size - keep_bytes
              << " bytes; the previous run stopped while writing it)\n";
    if (::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0)
      throw Error(ExitCode::internal_error, "cutting the partial last line of " + path_ + ": " + std::strerror(errno));
  }
  if (keep_bytes == 0) append(analysis::results_csv_header());
}

void ResultsFile::append(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(ExitCode::internal_error, "writing " + path_ + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

namespace {

// Rows already in results.csv, for --resume, and the length of its whole lines. A partial last line (the
// previous run was killed while writing it) is left out; a header from another column set is an error.
std::vector<analysis::ResultRow> existing_rows(const std::string& path, std::uintmax_t& keep_bytes) {
  std::string text = read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes}, "a readable results.csv");
  // The partial last line a kill can leave is not a whole row: it is left out (and cut before appending).
  if (!text.empty() && text.back() != '\n') {
    const auto last = text.rfind('\n');
    text.resize(last == std::string::npos ? 0 : last + 1);
  }
  keep_bytes = text.size();
  if (text.empty()) return {};
  const std::string header = analysis::results_csv_header();
  if (text.compare(0, header.size(), header) != 0)
    throw InputError(path + ":1", "", "the results.csv header of this tilesim version (" + header.substr(0, 60) + "...)",
                     "another header; resume into a new --out directory");
  return analysis::parse_results_csv(text, path);
}

}  // namespace

DonePoints done_points(const std::string& csv_path, const std::vector<analysis::SweepPoint>& points,
                       const std::vector<std::string>& backend_names, bool resume, bool overwrite) {
  DonePoints done;
  if (!fs::exists(csv_path) || overwrite) return done;
  if (!fs::is_regular_file(csv_path)) throw InputError(csv_path, "", "a results.csv file", "something that is not a regular file");
  if (!resume)
    throw InputError(csv_path, "", "no results.csv yet, or --resume (continue it) or --overwrite (start again)",
                     "an existing results.csv");
  std::set<std::string> sweep_keys;
  for (const auto& p : points) sweep_keys.insert(analysis::point_key(p.op, p.shape, p.dtype, backend_names[p.backend], p.repeat));
  done.exists = true;
  for (const auto& row : existing_rows(csv_path, done.keep_bytes)) {
    const std::string key = analysis::point_key(row);
    if (!done.keys.insert(key).second)
      std::cerr << "sweep: " << csv_path << ":" << row.line << ": the point " << key << " is there twice\n";
    if (!sweep_keys.count(key)) ++done.foreign_rows;
  }
  return done;
}

}  // namespace tilesim::cli::sweep
