#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace tilesim {

void write_file_atomically(const std::string& path, const std::string& text) {
  // A temporary name of this process's own (mkstemp) beside the target, so two processes writing the
  // same report never share one temporary file, and the rename replaces the target whole.
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw InputError(path, "", "a writable output path", std::string("it cannot be created (") + std::strerror(errno) + ")");
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    std::remove(tmp.c_str());
    throw Error(ExitCode::internal_error, "could not write " + path + ": " + what + " (" + reason + "); the file is unchanged");
  };
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing the temporary file");
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) fail("setting its mode");
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(ExitCode::internal_error, "could not write " + path + " (" + reason + "); the file is unchanged");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path, "", "a writable output path", ec.message());
  }
}

void create_output_directory(const std::string& dir, const std::string& expected) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, "", expected, ec.message());
}

}  // namespace tilesim
