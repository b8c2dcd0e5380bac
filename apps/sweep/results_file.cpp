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

#include "common/error.hpp"

namespace tilesim::cli::sweep {

namespace fs = std::filesystem;

ResultsFile::~ResultsFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsFile::open(bool truncate) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (fd_ < 0) throw InputError(path_, "", "a results file tilesim can write", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size == 0) append(analysis::results_csv_header());
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

// Rows already in results.csv, for --resume. A partial last line (the previous run was killed while
// writing it) is cut off; a header from another column set is an error.
std::vector<analysis::ResultRow> existing_rows(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  if (text.empty()) return {};
  if (text.back() != '\n') {
    const auto last = text.rfind('\n');
    const std::size_t keep = last == std::string::npos ? 0 : last + 1;
    std::cerr << "sweep: " << path << ": dropping a partial last line (" << text.size() - keep
              << " bytes; the previous run stopped while writing it)\n";
    fs::resize_file(path, keep);
    text.resize(keep);
    if (text.empty()) return {};
  }
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
  if (!resume)
    throw InputError(csv_path, "", "no results.csv yet, or --resume (continue it) or --overwrite (start again)",
                     "an existing results.csv");
  std::set<std::string> sweep_keys;
  for (const auto& p : points) sweep_keys.insert(analysis::point_key(p.op, p.shape, p.dtype, backend_names[p.backend], p.repeat));
  for (const auto& row : existing_rows(csv_path)) {
    const std::string key = analysis::point_key(row);
    if (!done.keys.insert(key).second)
      std::cerr << "sweep: " << csv_path << ":" << row.line << ": the point " << key << " is there twice\n";
    if (!sweep_keys.count(key)) ++done.foreign_rows;
  }
  return done;
}

}  // namespace tilesim::cli::sweep
