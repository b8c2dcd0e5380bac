#include "runs/sweep/workers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "analysis/results_table.hpp"
#include "common/error.hpp"

namespace tilesim::runs::sweep {

namespace {

using analysis::ResultRow;
using analysis::SweepPoint;

struct Worker {
  pid_t pid = -1;
  int fd = -1;           // read end of the worker's pipe
  std::string pending;   // bytes read but not yet a whole line
  bool open = true;
};

// Line protocol from a worker: "R <backend> <wall_s> <verified>\t<csv row>" for a row,
// "E <exit code>\t<message>" for an error (the worker then exits).
std::string worker_row_line(const SweepPoint& p, const ResultRow& row) {
  std::string csv = analysis::results_csv_row(row);
  csv.pop_back();
  std::ostringstream s;
  s << "R " << p.backend << " " << row.wall_s << " " << row.verified << "\t" << csv << "\n";
  return s.str();
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);  // the parent is gone
    done += static_cast<std::size_t>(n);
  }
}

// The next point to run, claimed by the workers from memory they share: each takes the next one as it
// finishes, so no worker sits idle while another still has a share of large points to run (with fixed
// shares the last worker ran alone for about a fifth of the hydronet grid's wall time).
struct SharedCursor {
  std::atomic<std::size_t>* next = nullptr;

  SharedCursor() {
    static_assert(std::atomic<std::size_t>::is_always_lock_free, "a cursor shared by processes must be lock-free");
    void* at = ::mmap(nullptr, sizeof(std::atomic<std::size_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) throw Error(ExitCode::internal_error, std::string("mmap: ") + std::strerror(errno));
    next = new (at) std::atomic<std::size_t>(0);
  }
  ~SharedCursor() { ::munmap(next, sizeof(std::atomic<std::size_t>)); }
  SharedCursor(const SharedCursor&) = delete;
  SharedCursor& operator=(const SharedCursor&) = delete;
};

[[noreturn]] void worker_main(int fd, pid_t parent, PointRunner& runner, const analysis::SweepPoints& points,
                              const std::vector<std::size_t>& indices, std::atomic<std::size_t>& next) {
  // Die with the parent: a killed sweep leaves no orphan simulating points nobody will record.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(3);
  try {
    for (std::size_t k = next.fetch_add(1); k < indices.size(); k = next.fetch_add(1)) {
      const SweepPoint p = points[indices[k]];
      write_all(fd, worker_row_line(p, runner.run(p)));
    }
  } catch (const Error& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    write_all(fd, "E " + std::to_string(static_cast<int>(e.code())) + "\t" + message + "\n");
  } catch (const std::exception& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    write_all(fd, "E 1\t" + message + "\n");
  }
  ::close(fd);
  // Skip static destructors: the SystemC kernel's teardown belongs to no one in a forked child.
  _exit(0);
}

std::vector<Worker> start_workers(const analysis::SweepPoints& points, const std::vector<std::size_t>& indices, int jobs,
                                  PointRunner& runner, std::atomic<std::size_t>& next) {
  std::vector<Worker> workers(static_cast<std::size_t>(std::min<std::size_t>(jobs, indices.size())));
  const pid_t parent = getpid();
  // Built once here, each worker's copy shared until written: not once per worker.
  runner.warm_up_simulated();
  std::cout << std::flush;
  std::cerr << std::flush;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(ExitCode::internal_error, std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(ExitCode::internal_error, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(pipe_fds[0]);
      for (std::size_t o = 0; o < w; ++o) ::close(workers[o].fd);
      worker_main(pipe_fds[1], parent, runner, points, indices, next);
    }
    ::close(pipe_fds[1]);
    workers[w].pid = pid;
    workers[w].fd = pipe_fds[0];
  }
  return workers;
}

void stop_workers(std::vector<Worker>& workers) {
  for (auto& w : workers)
    if (w.pid > 0) ::kill(w.pid, SIGKILL);
  for (auto& w : workers) {
    if (w.pid > 0) ::waitpid(w.pid, nullptr, 0);
    if (w.fd >= 0) ::close(w.fd);
    w.pid = -1;
    w.fd = -1;
  }
}

// A worker's error line, if one came.
struct WorkerFailure {
  std::string message;
  int code = 1;
};

// The whole lines a worker has sent so far: rows recorded, an error returned in `failure`.
void take_lines(Worker& w, const std::vector<std::string>& backend_names, Recorder& recorder, WorkerFailure& failure) {
  std::size_t nl;
  while ((nl = w.pending.find('\n')) != std::string::npos && failure.message.empty() && !recorder.stopped()) {
    const std::string line = w.pending.substr(0, nl);
    w.pending.erase(0, nl + 1);
    const auto tab = line.find('\t');
    if (line.rfind("E ", 0) == 0) {
      failure.code = std::atoi(line.c_str() + 2);
      failure.message = line.substr(tab + 1);
      break;
    }
    std::istringstream head(line.substr(2, tab - 2));
    std::size_t backend = 0;
    double wall_s = 0;
    std::string verified;
    head >> backend >> wall_s >> verified;
    const std::string csv = line.substr(tab + 1);
    const auto fields = analysis::split_csv_record(csv, "worker", 0);
    const std::string what = backend_names[backend] + " " + fields[0] + " " + fields[1] + "x" + fields[2] + "->" + fields[3];
    if (verified == "does-not-fit" || verified == "no") recorder.note_problem(what);
    recorder.record(backend, csv + "\n", wall_s, verified, what);
  }
}

// Reads the workers' lines as they come until every pipe is closed, one sent an error, or
// --stop-after is reached.
WorkerFailure collect_rows(std::vector<Worker>& workers, const std::vector<std::string>& backend_names, Recorder& recorder) {
  WorkerFailure failure;
  std::size_t open = workers.size();
  while (open > 0 && failure.message.empty() && !recorder.stopped()) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> which;
    for (std::size_t w = 0; w < workers.size(); ++w)
      if (workers[w].open) {
        fds.push_back({workers[w].fd, POLLIN, 0});
        which.push_back(w);
      }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(ExitCode::internal_error, std::string("poll: ") + std::strerror(errno));
    }
    for (std::size_t k = 0; k < fds.size() && failure.message.empty() && !recorder.stopped(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = workers[which[k]];
      char buf[65536];
      const ssize_t n = ::read(w.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        w.open = false;
        --open;
        continue;
      }
      w.pending.append(buf, static_cast<std::size_t>(n));
      take_lines(w, backend_names, recorder, failure);
    }
  }
  return failure;
}

// Every worker has closed its pipe: each must have exited cleanly.
void wait_for_workers(std::vector<Worker>& workers, Recorder& recorder, const std::string& csv_path) {
  for (auto& w : workers) {
    int status = 0;
    ::waitpid(w.pid, &status, 0);
    ::close(w.fd);
    w.fd = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      recorder.progress().finish();
      throw Error(ExitCode::internal_error,
                  "a sweep worker (pid " + std::to_string(w.pid) + ") died" +
                      (WIFSIGNALED(status) ? " of signal " + std::to_string(WTERMSIG(status)) : "") +
                      "; the rows it finished are in " + csv_path + ", rerun with --resume");
    }
    w.pid = -1;
  }
}

}  // namespace

void run_in_workers(const analysis::SweepPoints& points, const std::vector<std::size_t>& indices, int jobs, PointRunner& runner,
                    const std::vector<std::string>& backend_names, Recorder& recorder, const std::string& csv_path) {
  SharedCursor cursor;
  std::vector<Worker> workers = start_workers(points, indices, jobs, runner, *cursor.next);
  const WorkerFailure failure = collect_rows(workers, backend_names, recorder);
  if (failure.message.empty() && !recorder.stopped()) {
    wait_for_workers(workers, recorder, csv_path);
    return;
  }
  stop_workers(workers);
  if (!failure.message.empty()) {
    recorder.progress().finish();
    throw Error(static_cast<ExitCode>(failure.code == 2 || failure.code == 3 ? failure.code : 1),
                "a sweep worker failed: " + failure.message + " (the rows before it are in " + csv_path + ")");
  }
}

}  // namespace tilesim::runs::sweep
