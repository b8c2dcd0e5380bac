// tilesim sweep SWEEP.json [--out DIR] [--jobs N] [--resume]: every point of a sweep file on every
// backend it names, in one process (the simulated machine is elaborated once), each finished point
// appended to results.csv at once (one write per row), so a kill loses nothing and --resume runs only
// the points not yet there. Format and columns: docs/sweep-format.md.
//
// --jobs N > 1 runs the simulated and modeled points in N worker processes, each with its own
// simulator (the SystemC engine is a process-wide singleton and not thread-safe, so threads cannot
// share it); the parent alone writes results.csv. Measured CPU points then run in the parent after
// every worker has exited: a timing must not share the cores with anything.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "analysis/intensity.hpp"
#include "analysis/results_table.hpp"
#include "apps/backend_spec.hpp"
#include "apps/commands.hpp"
#include "apps/report_writer.hpp"
#include "common/error.hpp"
#include "common/host_info.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "workloads/sweep_spec.hpp"
#include "workloads/validation_suite.hpp"
#include "workloads/workload.hpp"

namespace tilesim::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using analysis::ResultRow;
using analysis::SweepPoint;
using analysis::SweepSpec;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string duration_text(double s) {
  std::ostringstream out;
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) out << std::fixed << std::setprecision(s < 10 ? 1 : 0) << s << " s";
  else if (s < 3600) out << static_cast<int>(s / 60) << " min " << static_cast<int>(std::fmod(s, 60)) << " s";
  else out << static_cast<int>(s / 3600) << " h " << static_cast<int>(std::fmod(s, 3600) / 60) << " min";
  return out.str();
}

std::string shape_text(const OpShape& s) {
  return std::to_string(s.num_inputs) + "x" + std::to_string(s.num_features) + "->" + std::to_string(s.num_outputs);
}

// ---------------------------------------------------------------------------------------------------
// Backends of the sweep, built once (machine files read, engine elaborated on first use).

struct SweepBackendRun {
  BackendSpec spec;
  std::string name;  // canonical: "ipu:bow", "gpu-model:a100-40gb:eager", "cpu"
  std::unique_ptr<Backend> backend;
  bool measured = false;  // real kernels (cpu, torch-cpu, cuda): run alone, in the parent
};

class PointRunner {
 public:
  PointRunner(const SweepSpec& spec, std::vector<SweepBackendRun>& backends) : spec_(spec), backends_(backends) {}

  ResultRow run(const SweepPoint& p) {
    const auto t0 = Clock::now();
    SweepBackendRun& b = backends_[p.backend];
    const std::uint64_t seed = analysis::sweep_index_seed(p.shape, spec_.seed, p.repeat);
    if (p.op == "schnet_block") return run_group(p, b, seed, t0);
    const OpKind kind = p.op == "gather" ? OpKind::gather : OpKind::scatter_add;
    const DType dtype = *dtype_from_string(p.dtype);

    ResultRow row;
    RunOptions options = options_for(p, b, seed, row);

    BackendResult result;
    try {
      if (b.spec.family == "gpu-model") {
        // A model reads no values.
        OpGraph graph;
        graph.add_gather_scatter(p.op, kind, dtype, p.shape);
        b.backend->prepare(graph);
        result = b.backend->run(graph, TensorValues{}, options);
      } else if (options.timing_only) {
        // Timing-only: the indices alone (the cycles depend on them), drawn as a one-op workload with
        // this seed would draw them, without generating the values nobody reads.
        OpGraph graph;
        const Op& op = graph.add_gather_scatter(p.op, kind, dtype, p.shape);
        auto indices = analysis::point_indices(op, seed);
        if (spec_.indices == "sorted") std::sort(indices.begin(), indices.end());
        TensorValues values;
        values.set_i32(op.indices, std::move(indices));
        result = b.backend->run(graph, values, options);
      } else {
        const workloads::Instance instance = workloads::instantiate(point_workload(p, kind, dtype, seed));
        result = b.backend->run(instance.graph, instance.values, options);
      }
    } catch (const PlanError& e) {
      // The point does not fit the machine: recorded (so --resume does not retry it) and reported.
      row.machine = machine_name(b);
      row.verified = "does-not-fit";
      row.flops = op_of(p, kind, dtype).flops();
      row.min_bytes = op_of(p, kind, dtype).min_bytes();
      row.wall_s = seconds_since(t0);
      last_error_ = e.what();
      return row;
    }
    if (result.ops.size() != 1) throw Error(ExitCode::internal_error, b.name + " returned " + std::to_string(result.ops.size()) + " rows for one op");
    const OpResult& o = result.ops.front();
    row.machine = result.machine;
    row.time_s = o.time_s;
    row.cycles = o.cycles;
    row.flops = o.flops;
    row.min_bytes = o.min_bytes;
    for (const auto& [level, bytes] : o.bytes_by_level.items()) {
      const auto& known = analysis::byte_level_columns();
      if (std::find(known.begin(), known.end(), level) == known.end())
        throw Error(ExitCode::internal_error, b.name + " reports bytes at level \"" + level +
                                                  "\", which results.csv has no column for (analysis/results_table.cpp)");
      row.bytes[level] = bytes.get<std::int64_t>();
    }
    row.intensity_level = analysis::main_level(row);
    for (const auto& t : analysis::traffic_by_level(row))
      if (t.level == row.intensity_level) row.intensity_flops_per_byte = t.intensity_flops_per_byte;
    if (o.verified) row.verified = *o.verified ? "yes" : "no";
    else row.verified = b.spec.family == "ipu" ? "timing-only" : (b.measured ? "no" : "modeled");
    if (row.verified == "no") last_error_ = o.verification;
    row.wall_s = seconds_since(t0);
    return row;
  }

  // The message of the last point that did not fit or failed verification.
  const std::string& last_error() const { return last_error_; }

 private:
  // The row fields every point shares: identity, kind and mode.
  RunOptions options_for(const SweepPoint& p, SweepBackendRun& b, std::uint64_t seed, ResultRow& row) const {
    row.op = p.op;
    row.shape = p.shape;
    row.dtype = p.dtype;
    row.backend = b.name;
    row.repeat = p.repeat;
    row.index_seed = seed;
    RunOptions options;
    options.warmup = spec_.cpu_warmup;
    options.repeats = spec_.cpu_timed_calls;
    const bool ipu = b.spec.family == "ipu";
    options.timing_only = ipu && !spec_.ipu_verify;
    if (ipu) row.mode = options.timing_only ? "timing-only" : "functional";
    else if (b.spec.family == "gpu-model") row.mode = b.spec.mode;
    else if (b.spec.family == "cuda") row.mode = b.spec.mode + "-median-of-" + std::to_string(spec_.cpu_timed_calls);
    else row.mode = "median-of-" + std::to_string(spec_.cpu_timed_calls);
    row.kind = ipu ? "simulated" : (b.spec.family == "gpu-model" ? "modeled" : "measured");
    return options;
  }

  // A point that lowers to a group of ops (schnet_block): one row whose time, cycles, FLOPs and bytes
  // are the group's totals, verified when every op was.
  ResultRow run_group(const SweepPoint& p, SweepBackendRun& b, std::uint64_t seed, Clock::time_point t0) {
    ResultRow row;
    const RunOptions options = options_for(p, b, seed, row);
    // The block's kind and index distribution are unused: it draws its own edges.
    workloads::Workload w = point_workload(p, OpKind::gather, *dtype_from_string(p.dtype), seed);
    w.ops.front().schnet_block = true;
    BackendResult result;
    OpGraph graph;
    try {
      if (b.spec.family == "gpu-model") {
        graph = workloads::build_graph(w);  // a model reads no values
        b.backend->prepare(graph);
        result = b.backend->run(graph, TensorValues{}, options);
      } else {
        // The edge indices decide the cycles, so even timing-only runs need the generated inputs.
        workloads::Instance instance = workloads::instantiate(w);
        graph = instance.graph;
        result = b.backend->run(instance.graph, instance.values, options);
      }
    } catch (const PlanError& e) {
      if (graph.ops.empty()) graph = workloads::build_graph(w);
      row.machine = machine_name(b);
      row.verified = "does-not-fit";
      for (const Op& o : graph.ops) {
        row.flops += o.flops();
        row.min_bytes += o.min_bytes();
      }
      row.wall_s = seconds_since(t0);
      last_error_ = e.what();
      return row;
    }
    if (result.ops.size() != graph.ops.size())
      throw Error(ExitCode::internal_error, b.name + " returned " + std::to_string(result.ops.size()) + " rows for " +
                                                std::to_string(graph.ops.size()) + " ops of a schnet_block");
    row.machine = result.machine;
    double time_s = 0;
    bool all_cycles = true, all_checked = true, all_ok = true;
    std::int64_t cycles = 0;
    std::string failure;
    for (const OpResult& o : result.ops) {
      time_s += o.time_s;
      row.flops += o.flops;
      row.min_bytes += o.min_bytes;
      if (o.cycles) cycles += *o.cycles;
      else all_cycles = false;
      for (const auto& [level, bytes] : o.bytes_by_level.items()) {
        const auto& known = analysis::byte_level_columns();
        if (std::find(known.begin(), known.end(), level) == known.end())
          throw Error(ExitCode::internal_error, b.name + " reports bytes at level \"" + level +
                                                    "\", which results.csv has no column for (analysis/results_table.cpp)");
        row.bytes[level] += bytes.get<std::int64_t>();
      }
      if (o.verified) {
        all_ok = all_ok && *o.verified;
        if (!*o.verified && failure.empty()) failure = o.op + ": " + o.verification;
      } else {
        all_checked = false;
      }
    }
    row.time_s = time_s;
    if (all_cycles) row.cycles = cycles;
    row.intensity_level = analysis::main_level(row);
    for (const auto& t : analysis::traffic_by_level(row))
      if (t.level == row.intensity_level) row.intensity_flops_per_byte = t.intensity_flops_per_byte;
    if (!all_ok) row.verified = "no";
    else if (all_checked) row.verified = "yes";
    else row.verified = b.spec.family == "ipu" ? "timing-only" : (b.measured ? "no" : "modeled");
    if (row.verified == "no") last_error_ = failure.empty() ? "outputs not checked" : failure;
    row.wall_s = seconds_since(t0);
    return row;
  }

  static Op op_of(const SweepPoint& p, OpKind kind, DType dtype) {
    OpGraph g;
    return g.add_gather_scatter(p.op, kind, dtype, p.shape);
  }

  workloads::Workload point_workload(const SweepPoint& p, OpKind kind, DType dtype, std::uint64_t seed) const {
    workloads::Workload w;
    w.name = "sweep_point";
    w.seed = seed;
    workloads::OpSpec op;
    op.name = p.op;
    op.kind = kind;
    op.dtype = dtype;
    op.shape = p.shape;
    op.indices.distribution =
        spec_.indices == "sorted" ? workloads::IndexDistribution::sorted : workloads::IndexDistribution::uniform;
    w.ops.push_back(op);
    return w;
  }

  static std::string machine_name(const SweepBackendRun& b) {
    if (const auto* ipu = dynamic_cast<const ipu::IpuBackend*>(b.backend.get())) return ipu->machine().chip.name;
    if (const auto* gpu = dynamic_cast<const gpu::GpuModelBackend*>(b.backend.get())) return gpu->machine().name;
    return kernels::cpu::host_description();
  }

  const SweepSpec& spec_;
  std::vector<SweepBackendRun>& backends_;
  std::string last_error_;
};

// Share of the CPUs' time other processes used over a fifth of a second (this one sleeps meanwhile),
// from /proc/stat; 0 when it cannot be read. The load average would still count work that just ended.
double other_cpu_share() {
  auto sample = [](double& busy, double& total) {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    busy = user + nice + system + irq + softirq + steal;
    total = busy + idle + iowait;
    return static_cast<bool>(stat) && cpu == "cpu";
  };
  double b0 = 0, t0 = 0, b1 = 0, t1 = 0;
  if (!sample(b0, t0)) return 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (!sample(b1, t1) || t1 <= t0) return 0;
  return (b1 - b0) / (t1 - t0);
}

// ---------------------------------------------------------------------------------------------------
// results.csv: appended one write() per row, so a killed sweep leaves whole rows (at worst a partial
// last line, which --resume drops).

class ResultsFile {
 public:
  explicit ResultsFile(std::string path) : path_(std::move(path)) {}
  ~ResultsFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Opens for appending; writes the header when the file is new or empty.
  void open(bool truncate) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
    if (fd_ < 0) throw InputError(path_, "", "a results file tilesim can write", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && st.st_size == 0) append(analysis::results_csv_header());
  }

  void append(const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error(ExitCode::internal_error, "writing " + path_ + ": " + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Rows already in results.csv, for --resume. A partial last line (the previous run was killed while
// writing it) is cut off; a header from another column set is an error.
std::vector<ResultRow> existing_rows(const std::string& path) {
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

// ---------------------------------------------------------------------------------------------------
// Progress: a redrawn bar on a terminal, plain lines (every 10 %) otherwise, on stderr.

class Progress {
 public:
  Progress(std::size_t total, std::size_t backends, std::vector<std::size_t> remaining, std::vector<int> parallelism)
      : total_(total),
        remaining_(std::move(remaining)),
        parallelism_(std::move(parallelism)),
        wall_(backends, 0.0),
        done_by_(backends, 0),
        tty_(isatty(STDERR_FILENO) == 1) {}

  void point_done(std::size_t backend, double wall_s, const std::string& what) {
    ++done_;
    wall_[backend] += wall_s;
    ++done_by_[backend];
    if (remaining_[backend] > 0) --remaining_[backend];
    const double elapsed = seconds_since(start_);
    if (tty_) {
      // A tenth of a second between redraws: live enough, and cheap beside thousands of points.
      if (done_ != total_ && seconds_since(last_draw_) < 0.1) return;
      last_draw_ = Clock::now();
      constexpr int width = 24;
      const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
      std::cerr << "\r\033[K[" << std::string(static_cast<std::size_t>(filled), '#')
                << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << done_ << "/" << total_ << " "
                << rate_eta(elapsed) << "  " << what << std::flush;
      return;
    }
    const std::size_t step = std::max<std::size_t>(1, total_ / 10);
    if (done_ % step == 0 || done_ == total_)
      std::cerr << "sweep: " << done_ << "/" << total_ << " points (" << std::fixed << std::setprecision(0)
                << 100.0 * static_cast<double>(done_) / static_cast<double>(total_) << "%), " << rate_eta(elapsed) << "\n";
  }

  void finish() {
    if (tty_ && done_ > 0) std::cerr << "\n";
  }

 private:
  // Rate over this run; ETA from each backend's own mean point time (a simulated point and a modeled
  // one differ by orders of magnitude), divided by the processes running it.
  std::string rate_eta(double elapsed) const {
    double eta = 0, all_wall = 0;
    std::size_t all_done = 0;
    for (std::size_t b = 0; b < wall_.size(); ++b) {
      all_wall += wall_[b];
      all_done += done_by_[b];
    }
    for (std::size_t b = 0; b < wall_.size(); ++b) {
      const double mean = done_by_[b] ? wall_[b] / static_cast<double>(done_by_[b])
                                      : (all_done ? all_wall / static_cast<double>(all_done) : 0.0);
      eta += static_cast<double>(remaining_[b]) * mean / std::max(1, parallelism_[b]);
    }
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << (elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0)
      << " points/s, ETA " << duration_text(eta);
    return s.str();
  }

  std::size_t total_, done_ = 0;
  std::vector<std::size_t> remaining_;
  std::vector<int> parallelism_;
  std::vector<double> wall_;
  std::vector<std::size_t> done_by_;
  bool tty_;
  Clock::time_point start_ = Clock::now(), last_draw_ = Clock::now() - std::chrono::seconds(1);
};

// ---------------------------------------------------------------------------------------------------
// Worker processes for --jobs N.

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

[[noreturn]] void worker_main(int fd, pid_t parent, PointRunner& runner, const std::vector<SweepPoint>& points) {
  // Die with the parent: a killed sweep leaves no orphan simulating points nobody will record.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(3);
  try {
    for (const auto& p : points) write_all(fd, worker_row_line(p, runner.run(p)));
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

struct Tally {
  std::size_t rows = 0, does_not_fit = 0, failed = 0;
  std::map<std::size_t, double> wall_by_backend;
  std::map<std::size_t, std::size_t> rows_by_backend;
  std::string last_problem;
};

}  // namespace

int sweep_command(const SweepArgs& args) {
  const auto run_start = Clock::now();
  if (args.jobs < 1 || args.jobs > 256) throw InputError("", "--jobs", "an integer in [1, 256]", std::to_string(args.jobs));
  if (args.stop_after < 0) throw InputError("", "--stop-after", "an integer >= 0", std::to_string(args.stop_after));
  if (args.resume && args.overwrite) throw InputError("", "--resume", "either --resume or --overwrite", "both");

  SweepSpec spec = analysis::load_sweep(args.sweep);
  if (!args.backends.empty()) {
    // --backends replaces the file's list: every backend on the full grid.
    std::vector<analysis::SweepBackend> replaced;
    std::stringstream in(args.backends);
    std::string item;
    while (std::getline(in, item, ',')) {
      analysis::SweepBackend b;
      b.name = item;
      b.json_path = "--backends";
      b.num_inputs = spec.num_inputs;
      b.num_features = spec.num_features;
      b.num_outputs = spec.num_outputs;
      replaced.push_back(b);
    }
    spec.backends = replaced;
  }
  if (args.verify) spec.ipu_verify = true;

  // Backend names are checked here (the sweep file's parser knows no machines), with the file and
  // JSON path in the message; machine files are read before any point runs.
  std::vector<SweepBackendRun> backends;
  std::set<std::string> names;
  for (auto& b : spec.backends) {
    SweepBackendRun run;
    try {
      const auto parsed = parse_backend_list(b.name);
      run.spec = parsed.front();
    } catch (const InputError& e) {
      const std::string why = e.what();
      const auto found = why.find(", found ");
      throw InputError(b.json_path == "--backends" ? "" : spec.file, b.json_path,
                       "a backend name: ipu, ipu:MACHINE, cpu, gpu-model:MACHINE[:eager|:kernel]",
                       "\"" + b.name + "\"" + (found == std::string::npos ? "" : " (" + why.substr(found + 8) + ")"));
    }
    run.name = run.spec.name();
    if (!names.insert(run.name).second)
      throw InputError(b.json_path == "--backends" ? "" : spec.file, b.json_path, "each backend once",
                       "\"" + run.name + "\" twice");
    b.name = run.name;
    // Real kernels (cpu, torch-cpu, cuda) are timed: they run in the parent, alone.
    run.measured = run.spec.family != "ipu" && run.spec.family != "gpu-model";
    run.backend = make_backend(run.spec);
    backends.push_back(std::move(run));
  }
  // Values are generated only for the CPU and for functional IPU runs; the largest point's tensors
  // must fit in half of the host's memory (as for workloads, docs/workload-format.md).
  bool needs_values = false;
  for (const auto& b : backends) needs_values = needs_values || b.measured || (b.spec.family == "ipu" && spec.ipu_verify);
  if (needs_values) {
    const double half = static_cast<double>(host_input_memory_bytes());
    const double in = static_cast<double>(spec.num_inputs.back()), f = static_cast<double>(spec.num_features.back()),
                 out = static_cast<double>(spec.num_outputs.back());
    double bytes = 4 * (in * f + std::max(in, out) + out * f);
    // A schnet_block point also holds per edge 50 Gaussians and about six filter-wide tensors.
    if (std::find(spec.ops.begin(), spec.ops.end(), "schnet_block") != spec.ops.end())
      bytes = std::max(bytes, 4 * (out * (50 + 6 * f) + 6 * in * f + 2 * out));
    if (half > 0 && bytes > half)
      throw InputError(spec.file, "sizes", "points whose tensors fit in half of this host's memory (" +
                                               std::to_string(static_cast<long long>(half / (1 << 20))) + " MiB)",
                       "a largest point of " + std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB");
  }

  const std::string out_dir = args.out_dir.empty() ? "out/" + spec.name : args.out_dir;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "a directory the results can be written to (--out)", ec.message());
  const std::string csv_path = (fs::path(out_dir) / "results.csv").string();

  std::set<std::string> done_keys;
  std::size_t foreign_rows = 0;
  const auto points = analysis::expand_sweep(spec);
  if (fs::exists(csv_path) && !args.overwrite) {
    if (!args.resume)
      throw InputError(csv_path, "", "no results.csv yet, or --resume (continue it) or --overwrite (start again)",
                       "an existing results.csv");
    std::set<std::string> sweep_keys;
    for (const auto& p : points) sweep_keys.insert(analysis::point_key(p.op, p.shape, p.dtype, backends[p.backend].name, p.repeat));
    for (const auto& row : existing_rows(csv_path)) {
      const std::string key = analysis::point_key(row);
      if (!done_keys.insert(key).second)
        std::cerr << "sweep: " << csv_path << ":" << row.line << ": the point " << key << " is there twice\n";
      if (!sweep_keys.count(key)) ++foreign_rows;
    }
  }
  ResultsFile results(csv_path);
  results.open(args.overwrite);

  nlohmann::json echo = analysis::to_json(spec);
  echo["tool"] = {{"name", "tilesim"}, {"version", TILESIM_VERSION}};
  echo["run"] = {{"started_utc", utc_now()},
                 {"jobs", args.jobs},
                 {"resume", args.resume},
                 {"host", kernels::cpu::host_description()},
                 {"results_csv", csv_path}};
  write_file_atomically((fs::path(out_dir) / "sweep.json").string(), echo.dump(2) + "\n");

  std::vector<SweepPoint> pending;
  std::vector<std::size_t> per_backend(backends.size(), 0), pending_per_backend(backends.size(), 0);
  for (const auto& p : points) {
    ++per_backend[p.backend];
    if (done_keys.count(analysis::point_key(p.op, p.shape, p.dtype, backends[p.backend].name, p.repeat))) continue;
    pending.push_back(p);
    ++pending_per_backend[p.backend];
  }

  // What will run, on stdout: the user's record of which points each backend covers.
  std::cout << "sweep " << spec.name << ": " << points.size() << " points (" << spec.ops.size() << " ops x grid x "
            << spec.repeats << " repeat" << (spec.repeats > 1 ? "s" : "") << ") -> " << csv_path << "\n";
  for (std::size_t b = 0; b < backends.size(); ++b) {
    const auto& sb = spec.backends[b];
    std::cout << "  " << std::left << std::setw(28) << backends[b].name << std::right << std::setw(6) << per_backend[b]
              << " points";
    if (backends[b].spec.family == "ipu")
      std::cout << ", simulated, " << (spec.ipu_verify ? "functional (outputs checked)" : "timing-only (outputs not computed)");
    else if (backends[b].spec.family == "gpu-model")
      std::cout << ", modeled, " << backends[b].spec.mode << " mode";
    else
      std::cout << ", measured, median of " << spec.cpu_timed_calls << " calls after " << spec.cpu_warmup << " warm-up"
                << (backends[b].spec.family == "cuda" ? " (" + backends[b].spec.mode + " time)" : "");
    if (sb.subset) {
      auto list = [](const std::vector<std::int64_t>& v) {
        std::string s;
        for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
        return s;
      };
      std::cout << "; subset: num_inputs {" << list(sb.num_inputs) << "}, num_features {" << list(sb.num_features)
                << "}, num_outputs {" << list(sb.num_outputs) << "}";
    }
    if (pending_per_backend[b] != per_backend[b])
      std::cout << " (" << per_backend[b] - pending_per_backend[b] << " already in results.csv)";
    std::cout << "\n";
  }
  if (foreign_rows) std::cout << "  (" << foreign_rows << " rows of results.csv are not points of this sweep; kept)\n";
  // Other work on the host stalls the OpenMP team of a measured kernel (a busy core can hold a worker
  // for a whole scheduler slice), so say so before measuring rather than after.
  bool measuring = false;
  for (std::size_t b = 0; b < backends.size(); ++b) measuring = measuring || (backends[b].measured && pending_per_backend[b] > 0);
  if (measuring) {
    const double busy = other_cpu_share();
    if (busy > 0.25)
      std::cerr << "sweep: warning: other processes keep " << std::fixed << std::setprecision(0) << 100 * busy << "% of the "
                << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs busy: the measured CPU times will be slow and noisy\n"
                << std::defaultfloat;
  }
  std::cout << std::flush;

  PointRunner runner(spec, backends);
  Tally tally;
  std::vector<int> parallelism(backends.size(), 1);
  for (std::size_t b = 0; b < backends.size(); ++b) parallelism[b] = backends[b].measured ? 1 : args.jobs;
  Progress progress(pending.size(), backends.size(), pending_per_backend, parallelism);
  const auto limit = static_cast<std::size_t>(args.stop_after);
  bool stopped = false;

  auto record = [&](std::size_t backend, const std::string& csv_line, double wall_s, const std::string& verified,
                    const std::string& what) {
    results.append(csv_line);
    ++tally.rows;
    tally.wall_by_backend[backend] += wall_s;
    ++tally.rows_by_backend[backend];
    if (verified == "does-not-fit") ++tally.does_not_fit;
    if (verified == "no") ++tally.failed;
    progress.point_done(backend, wall_s, what);
    if (limit && tally.rows >= limit) stopped = true;
  };
  auto describe = [&](const SweepPoint& p) { return backends[p.backend].name + " " + p.op + " " + shape_text(p.shape); };

  std::vector<SweepPoint> parallel_points, serial_points;
  for (const auto& p : pending) (args.jobs > 1 && !backends[p.backend].measured ? parallel_points : serial_points).push_back(p);

  if (!parallel_points.empty()) {
    std::vector<Worker> workers(static_cast<std::size_t>(std::min<std::size_t>(args.jobs, parallel_points.size())));
    const pid_t parent = getpid();
    std::cout << std::flush;
    std::cerr << std::flush;
    for (std::size_t w = 0; w < workers.size(); ++w) {
      // Interleaved shares: neighbouring points cost about the same, so every worker gets a mix.
      std::vector<SweepPoint> share;
      for (std::size_t i = w; i < parallel_points.size(); i += workers.size()) share.push_back(parallel_points[i]);
      int pipe_fds[2];
      if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(ExitCode::internal_error, std::string("pipe: ") + std::strerror(errno));
      const pid_t pid = ::fork();
      if (pid < 0) throw Error(ExitCode::internal_error, std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        ::close(pipe_fds[0]);
        for (std::size_t o = 0; o < w; ++o) ::close(workers[o].fd);
        worker_main(pipe_fds[1], parent, runner, share);
      }
      ::close(pipe_fds[1]);
      workers[w].pid = pid;
      workers[w].fd = pipe_fds[0];
    }
    std::string failure;
    int failure_code = 1;
    std::size_t open = workers.size();
    while (open > 0 && failure.empty() && !stopped) {
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
      for (std::size_t k = 0; k < fds.size() && failure.empty() && !stopped; ++k) {
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
        std::size_t nl;
        while ((nl = w.pending.find('\n')) != std::string::npos && failure.empty() && !stopped) {
          const std::string line = w.pending.substr(0, nl);
          w.pending.erase(0, nl + 1);
          const auto tab = line.find('\t');
          if (line.rfind("E ", 0) == 0) {
            failure_code = std::atoi(line.c_str() + 2);
            failure = line.substr(tab + 1);
            break;
          }
          std::istringstream head(line.substr(2, tab - 2));
          std::size_t backend = 0;
          double wall_s = 0;
          std::string verified;
          head >> backend >> wall_s >> verified;
          const std::string csv = line.substr(tab + 1);
          const auto fields = analysis::split_csv_record(csv, "worker", 0);
          const std::string what = backends[backend].name + " " + fields[0] + " " + fields[1] + "x" + fields[2] + "->" + fields[3];
          if (verified == "does-not-fit" || verified == "no") tally.last_problem = what;
          record(backend, csv + "\n", wall_s, verified, what);
        }
      }
    }
    if (!failure.empty() || stopped) {
      stop_workers(workers);
      if (!failure.empty()) {
        progress.finish();
        throw Error(static_cast<ExitCode>(failure_code == 2 || failure_code == 3 ? failure_code : 1),
                    "a sweep worker failed: " + failure + " (the rows before it are in " + csv_path + ")");
      }
    } else {
      for (auto& w : workers) {
        int status = 0;
        ::waitpid(w.pid, &status, 0);
        ::close(w.fd);
        w.fd = -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          progress.finish();
          throw Error(ExitCode::internal_error,
                      "a sweep worker (pid " + std::to_string(w.pid) + ") died" +
                          (WIFSIGNALED(status) ? " of signal " + std::to_string(WTERMSIG(status)) : "") +
                          "; the rows it finished are in " + csv_path + ", rerun with --resume");
        }
        w.pid = -1;
      }
    }
  }

  for (const auto& p : serial_points) {
    if (stopped) break;
    ResultRow row;
    try {
      row = runner.run(p);
    } catch (const Error& e) {
      progress.finish();
      throw Error(e.code(), describe(p) + ": " + e.what() + " (the rows before it are in " + csv_path + ")");
    }
    if (row.verified == "does-not-fit" || row.verified == "no") tally.last_problem = describe(p) + ": " + runner.last_error();
    record(p.backend, analysis::results_csv_row(row), row.wall_s, row.verified, describe(p));
  }
  progress.finish();

  if (stopped) {
    std::cout << "sweep: stopped after " << tally.rows << " new points (--stop-after); continue with --resume\n";
    return 0;
  }
  std::cout << "sweep: " << tally.rows << " new rows in " << duration_text(seconds_since(run_start)) << " (" << csv_path << ")\n";
  for (const auto& [b, n] : tally.rows_by_backend)
    std::cout << "  " << std::left << std::setw(28) << backends[b].name << std::right << std::setw(6) << n << " points, "
              << std::fixed << std::setprecision(2) << tally.wall_by_backend[b] << " s of host time ("
              << std::setprecision(2) << 1e3 * tally.wall_by_backend[b] / static_cast<double>(n) << " ms/point)\n";
  if (tally.does_not_fit)
    std::cout << "  " << tally.does_not_fit << " points do not fit their machine (verified = does-not-fit), e.g. "
              << tally.last_problem << "\n";
  if (tally.failed) {
    std::cout << "  " << tally.failed << " points FAILED verification, e.g. " << tally.last_problem << "\n";
    return static_cast<int>(ExitCode::internal_error);
  }
  return tally.does_not_fit ? static_cast<int>(ExitCode::does_not_fit) : 0;
}

}  // namespace tilesim::cli
