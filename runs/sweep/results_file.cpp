#include "runs/sweep/results_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"

namespace tilesim::runs::sweep {

namespace fs = std::filesystem;

ResultsFile::~ResultsFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsFile::start_new() { start_new(analysis::results_csv_header()); }

void ResultsFile::start_new(const std::string& header) {
  write_file_atomically(path_, header);
  continue_at(header.size());
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

DonePoints done_points(const std::string& csv_path, std::size_t sweep_points, const PointPosition& position, bool resume,
                       bool overwrite) {
  DonePoints done;
  if (!fs::exists(csv_path) || overwrite) return done;
  if (!fs::is_regular_file(csv_path)) throw InputError(csv_path, "", "a results.csv file", "something that is not a regular file");
  if (!resume)
    throw InputError(csv_path, "", "no results.csv yet, or --resume (continue it) or --overwrite (start again)",
                     "an existing results.csv");
  std::ifstream in(csv_path, std::ios::binary);
  if (!in) throw InputError(csv_path, "", "a readable results.csv", std::strerror(errno));
  // A header from another column set is an error (a partial header line, a kill before the first row
  // was whole, is no header: the file starts again).
  const std::string header = analysis::results_csv_header();
  std::string first(header.size(), '\0');
  in.read(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<std::size_t>(in.gcount()));
  if (!first.empty() && first != header && !(first.size() < header.size() && header.compare(0, first.size(), first) == 0))
    throw InputError(csv_path + ":1", "", "the results.csv header of this tilesim version (" + header.substr(0, 60) + "...)",
                     "another header; resume into a new --out directory");
  in.clear();
  in.seekg(0);
  done.exists = true;
  done.done.assign(sweep_points, false);
  std::set<std::string> foreign_keys;  // rows of no point of this sweep: few, kept by key
  done.keep_bytes = analysis::for_each_results_row(in, csv_path, analysis::PartialLastLine::skip, [&](analysis::ResultRow&& row) {
    const auto i = position(row);
    bool again = false;
    if (i && *i < sweep_points) {
      again = done.done[*i];
      done.done[*i] = true;
    } else {
      ++done.foreign_rows;
      again = !foreign_keys.insert(analysis::point_key(row)).second;
    }
    if (again) std::cerr << "sweep: " << csv_path << ":" << row.line << ": the point " << analysis::point_key(row) << " is there twice\n";
  });
  return done;
}

}  // namespace tilesim::runs::sweep
