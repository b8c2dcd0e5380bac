#include "runs/sweep/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "common/error.hpp"

namespace tilesim::runs::sweep {

namespace {

std::string holder_text(const std::string& what) {
  char host[256] = "unknown host";
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return "pid " + std::to_string(::getpid()) + " on " + host + " since " + when + " (" + what + ")";
}

// The holder's line, as far as it can be read (it may be mid-write or empty).
std::string read_holder(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string text(buf, static_cast<std::size_t>(n));
  const auto nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  return text;
}

}  // namespace

OutputLock::OutputLock(const std::string& dir, const std::string& what)
    : path_((std::filesystem::path(dir) / "sweep.lock").string()) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(path_, "", "a lock file tilesim can create in the output folder (--out)", std::strerror(errno));
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    const std::string holder = err == EWOULDBLOCK ? read_holder(fd_) : "";
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw InputError(path_, "", "a lock on the output folder (--out)", std::strerror(err));
    throw InputError(dir, "", "an output folder no other tilesim sweep is writing (--out; wait for it, or choose another)",
                     "one held by " + (holder.empty() ? std::string("another process") : holder));
  }
  // Ours: record who holds it. A failure here only loses the courtesy text, never the lock.
  const std::string text = holder_text(what) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd_, text.data(), text.size(), 0);
  }
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace tilesim::runs::sweep
