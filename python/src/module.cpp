// tilesim._core: the Python module's one native part. It hands the command line (apps/dispatch.cpp)
// its arguments from Python, fills a run request (runs/run.hpp) for tilesim.run with typed values, the
// caller's in-memory graphs and input values, returns the run's result (its report and summary, never
// captured output or a file read back), calls the library functions behind tilesim.fit, placement,
// calibrate, backends, validate and calibrate_model the same way (runs/batch_fit.hpp,
// runs/placement_study.hpp, runs/validation_run.hpp, runs/model_calibration.hpp; their results as JSON
// text), and turns tilesim's errors into the Python exceptions of tilesim/_errors.py. Everything else
// (the objects, JSON building, reading reports) is plain Python in python/tilesim/: this file only
// crosses the language boundary.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <mutex>

#include <omp.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include "apps/commands.hpp"
#include "backends/family_listing.hpp"
#include "backends/host_calibration.hpp"
#include "backends/machine_ceilings.hpp"
#include "analysis/speedup_report_text.hpp"
#include "apps/result_files.hpp"
#include "backends/registry.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "runs/batch_fit.hpp"
#include "runs/placement_study.hpp"
#include "runs/model_calibration.hpp"
#include "runs/run.hpp"
#include "runs/validation_run.hpp"
#include "workloads/graphs/in_memory.hpp"
#include "workloads/workload.hpp"

namespace py = pybind11;

namespace {

using tilesim::workloads::graphs::InMemoryEdges;
using Int64Array = py::array_t<std::int64_t, py::array::c_style>;
using Float32Array = py::array_t<float, py::array::c_style>;

// Standard output of a command, captured while it runs (the CLI's table or JSON), so that Python gets
// it as a string instead of text interleaved with its own buffered sys.stdout.
class CaptureStdout {
 public:
  explicit CaptureStdout(bool on) : old_(on ? std::cout.rdbuf(text_.rdbuf()) : nullptr) {}
  ~CaptureStdout() {
    if (old_) std::cout.rdbuf(old_);
  }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_;
};

// Standard error of a command (its progress lines, the CLI's error messages), handed to Python's
// sys.stderr a line at a time while the command runs, instead of going to file descriptor 2 behind
// Python's back: a notebook, pytest's capsys or a redirected sys.stderr then sees it. The command runs
// without the GIL, so each line takes it to write. `quiet` drops the lines (errors still raise).
class StderrToPython : public std::streambuf {
 public:
  explicit StderrToPython(bool quiet) : quiet_(quiet), pid_(::getpid()), old_(std::cerr.rdbuf(this)) {}
  ~StderrToPython() override {
    std::cerr.rdbuf(old_);
    write_out(take_line());
  }
  StderrToPython(const StderrToPython&) = delete;
  StderrToPython& operator=(const StderrToPython&) = delete;

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const char ch = static_cast<char>(c);
    xsputn(&ch, 1);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::string complete;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      line_.append(s, static_cast<std::size_t>(n));
      const auto end = line_.rfind('\n');
      if (end == std::string::npos) return n;
      complete = line_.substr(0, end + 1);
      line_.erase(0, end + 1);
    }
    write_out(complete);  // outside the lock: taking the GIL while holding it could deadlock
    return n;
  }
  // std::cerr flushes after every insertion (unitbuf): a line is handed on when it is complete (or at the
  // end of the command), not in the pieces it was written in.
  int sync() override { return 0; }

 private:
  std::string take_line() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string text;
    text.swap(line_);
    return text;
  }
  void write_out(const std::string& text) {
    if (text.empty() || quiet_) return;
    if (::getpid() != pid_) {
      // A forked worker (sweep --jobs) has no Python of its own to call: it writes as the executable does.
      for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(2, text.data() + done, text.size() - done);
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
      }
      return;
    }
    py::gil_scoped_acquire gil;
    try {
      const py::object err = py::module_::import("sys").attr("stderr");
      if (err.is_none()) return;  // pythonw and friends: nowhere to write
      // Bytes that are not UTF-8 (a file name, say) are replaced rather than lose the line.
      const py::object line = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
      if (!line) throw py::error_already_set();
      err.attr("write")(line);
      err.attr("flush")();
    } catch (const py::error_already_set&) {
      // A sys.stderr that refuses a write loses the line; the command itself goes on.
    }
  }

  std::mutex mutex_;
  std::string line_;
  bool quiet_;
  pid_t pid_;
  std::streambuf* old_;
};

// The OpenMP threads a command runs with: those the executable would have (OMP_NUM_THREADS, else every
// processor), not whatever this process was left with. Importing torch sets OpenMP to torch's own count
// (the physical cores: 1 on a 2-vCPU VM), which would halve the measured CPU kernels against the command
// line's. The process's setting is restored afterwards, so torch's is left as it was.
class CommandLineThreads {
 public:
  CommandLineThreads() : previous_(omp_get_max_threads()) { omp_set_num_threads(command_line_threads()); }
  ~CommandLineThreads() { omp_set_num_threads(previous_); }
  CommandLineThreads(const CommandLineThreads&) = delete;
  CommandLineThreads& operator=(const CommandLineThreads&) = delete;

 private:
  static int command_line_threads() {
    if (const char* env = std::getenv("OMP_NUM_THREADS")) {
      const int n = std::atoi(env);  // "4" or "4,2": the first level's count, as libgomp reads it
      if (n > 0) return n;
    }
    return omp_get_num_procs();
  }
  int previous_;
};

// argv for dispatch/run_cli: "tilesim" then the arguments, as a command line has them.
struct Argv {
  explicit Argv(const std::vector<std::string>& args) : strings(args) {
    strings.insert(strings.begin(), "tilesim");
    for (auto& s : strings) pointers.push_back(s.data());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(strings.size()); }
  char** argv() { return pointers.data(); }
  std::vector<std::string> strings;
  std::vector<char*> pointers;
};

// `tilesim ARGS...` through run_cli or dispatch: (exit code, standard output when captured). The
// command runs without the GIL, so other Python threads (and torch's autograd) go on meanwhile.
py::tuple command_line(int (*entry)(int, char**), const std::vector<std::string>& args, bool capture, bool quiet) {
  CommandLineThreads threads;
  StderrToPython err(quiet);
  CaptureStdout out(capture);
  Argv argv(args);
  int code = 0;
  {
    py::gil_scoped_release released;
    code = entry(argv.argc(), argv.argv());
  }
  return py::make_tuple(code, out.text());
}

// A library function called for a Python function as its command would run: with the command line's
// OpenMP threads, progress lines on Python's sys.stderr, and without the GIL (so other Python threads go
// on meanwhile). `call` touches no Python object; its value is returned.
template <typename Call>
auto as_command(Call&& call) {
  CommandLineThreads threads;
  StderrToPython err(false);
  py::gil_scoped_release released;
  return call();
}

// tilesim.validate and tilesim.calibrate_model: the library's result (runs/validation_run.hpp,
// runs/model_calibration.hpp), the files the user asked for written by the command's own writer
// (apps/result_files.hpp), and the answer from the result object, never a file read back or captured
// output. Both run without the GIL, their progress on sys.stderr.
std::string validate_suites(const std::string& suite, const std::string& out_dir, bool plots, const std::string& format) {
  tilesim::runs::ValidationRequest request;
  request.suite = suite;
  request.out_dir = out_dir;
  request.plots = plots;
  request.format = format;
  return as_command([&] {
    tilesim::runs::ValidationResult result = tilesim::runs::validate(request);
    tilesim::cli::write_validation_files(result);
    return result.report.dump();
  });
}

std::string calibrate_machine_model(const std::string& gpu, const std::string& ipu, const std::string& data_dir, bool write) {
  tilesim::runs::ModelCalibrationRequest request;
  request.gpu = gpu;
  request.ipu = ipu;
  request.data_dir = data_dir;
  request.write = write;
  return as_command([&] {
    const tilesim::runs::ModelCalibration calibration = tilesim::runs::calibrate_model(request);
    tilesim::cli::write_machine_files(calibration);
    return calibration.answer.dump();
  });
}

// The caller's graphs: name -> (edge_index [2, E] int64, num_nodes, batch [N] int64 or None, num_graphs).
// The arrays are C-contiguous int64 (the Python side converts, without a copy for PyG's own tensors);
// `keep` holds them alive for as long as the listing is used.
struct ListedGraphs {
  std::map<std::string, InMemoryEdges> edges;
  std::vector<py::object> keep;
};

ListedGraphs list_graphs(const py::dict& graphs) {
  ListedGraphs out;
  for (const auto& item : graphs) {
    const std::string name = py::cast<std::string>(item.first);
    const py::tuple t = py::reinterpret_borrow<py::tuple>(item.second);
    const Int64Array edge_index = py::cast<Int64Array>(t[0]);
    if (edge_index.ndim() != 2 || edge_index.shape(0) != 2)
      throw tilesim::InputError("", "Graph " + name + ": edge_index", "a [2, E] integer array (PyG's edge_index)",
                                "an array of " + std::to_string(edge_index.ndim()) + " dimensions");
    InMemoryEdges g;
    g.edge_index = edge_index.data();
    g.num_edges = edge_index.shape(1);
    g.num_nodes = py::cast<std::int64_t>(t[1]);
    out.keep.push_back(edge_index);
    if (!t[2].is_none()) {
      const Int64Array batch = py::cast<Int64Array>(t[2]);
      if (batch.ndim() != 1 || batch.shape(0) != g.num_nodes)
        throw tilesim::InputError("", "Graph " + name + ": batch", "a [num_nodes] = [" + std::to_string(g.num_nodes) + "] integer array",
                                  "an array of " + std::to_string(batch.size()) + " elements");
      g.batch = batch.data();
      g.num_graphs = py::cast<std::int64_t>(t[3]);
      out.keep.push_back(batch);
    }
    tilesim::workloads::graphs::check_in_memory_edges(g, "Graph " + name);
    out.edges[name] = g;
  }
  return out;
}

// A shape without its dimensions of size 1: PyG's bias [out] is tilesim's [1, out].
std::vector<std::int64_t> squeezed(std::vector<std::int64_t> shape) {
  shape.erase(std::remove(shape.begin(), shape.end(), std::int64_t{1}), shape.end());
  return shape;
}

// Overwrites the named graph inputs with the caller's values: one copy, into the engine's inputs.
void set_values(const tilesim::OpGraph& graph, tilesim::TensorValues& values, const std::map<std::string, Float32Array>& given) {
  std::map<std::string, tilesim::TensorId> inputs;
  std::string names;
  for (const tilesim::TensorId id : graph.graph_inputs()) {
    const auto& info = graph.tensor(id);
    if (!tilesim::is_value_dtype(info.dtype)) continue;  // indices come from the graph or the workload's "indices"
    inputs[info.name] = id;
    names += (names.empty() ? "" : ", ") + info.name;
  }
  for (const auto& [name, array] : given) {
    const auto it = inputs.find(name);
    if (it == inputs.end())
      throw tilesim::InputError("", "values." + name, "the name of a value input of the workload (" + names + ")", "\"" + name + "\"");
    const auto& info = graph.tensor(it->second);
    std::vector<std::int64_t> shape(array.shape(), array.shape() + array.ndim());
    if (squeezed(shape) != squeezed(info.shape))
      throw tilesim::InputError("", "values." + name, "an array of shape " + tilesim::shape_text(info.shape) + " (dimensions of size 1 may be left out)",
                                "shape " + tilesim::shape_text(shape));
    // A half input's values are rounded into its dtype, as a tensor.half() makes them.
    values.set_f32(it->second, std::vector<float>(array.data(), array.data() + array.size()), info.dtype);
  }
}

// A new array of `shape` holding `values`: the one copy out of the engine.
template <typename T>
py::array_t<T> to_array(const std::vector<T>& values, const std::vector<std::int64_t>& shape) {
  py::array_t<T> a(shape);
  std::copy(values.begin(), values.end(), a.mutable_data());
  return a;
}

// The outputs of every op a backend computed, as float32 (or int32) arrays of the tensors' shapes.
py::dict collect_outputs(const tilesim::OpGraph& graph, const tilesim::TensorValues& out) {
  py::dict arrays;
  for (const auto& op : graph.ops) {
    if (!out.has(op.output)) continue;
    const auto& info = graph.tensor(op.output);
    arrays[py::str(info.name)] = info.dtype == tilesim::DType::int32 ? py::object(to_array(out.i32(op.output), info.shape))
                                                                     : py::object(to_array(out.f32(op.output), info.shape));
  }
  return arrays;
}

// tilesim's errors as the exceptions of tilesim/_errors.py, carrying the CLI's message and exit code.
void translate_errors(std::exception_ptr p) {
  const py::module_ errors = py::module_::import("tilesim._errors");
  try {
    if (p) std::rethrow_exception(p);
  } catch (const tilesim::InputError& e) {
    py::object ex = errors.attr("InputError")(e.what(), e.file(), e.json_path());
    PyErr_SetObject(ex.get_type().ptr(), ex.ptr());
  } catch (const tilesim::PlanError& e) {
    py::object ex = errors.attr("DoesNotFitError")(e.what());
    PyErr_SetObject(ex.get_type().ptr(), ex.ptr());
  } catch (const tilesim::Error& e) {
    py::object ex = errors.attr("Error")(e.what(), "", "", static_cast<int>(e.code()));
    PyErr_SetObject(ex.get_type().ptr(), ex.ptr());
  } catch (const std::bad_alloc&) {
    py::object ex = errors.attr("Error")("out of host memory");
    PyErr_SetObject(ex.get_type().ptr(), ex.ptr());
  } catch (const py::error_already_set&) {
    throw;  // a Python exception raised inside a hook: pybind11 restores it as it was
  } catch (const py::builtin_exception&) {
    throw;  // pybind11's own (a failed cast): its TypeError / ValueError
  } catch (const std::exception& e) {
    // Any other failure of a backend (a std::runtime_error of libtorch, say) is an internal error, as the
    // command line reports it (exit code 1), not a bare RuntimeError.
    py::object ex = errors.attr("Error")(e.what(), "", "", static_cast<int>(tilesim::ExitCode::internal_error));
    PyErr_SetObject(ex.get_type().ptr(), ex.ptr());
  }
}

}  // namespace

namespace {

// One process runs every call from Python, and SystemC elaborates the simulated machine's engine once,
// at its first use: size it for the largest shipped IPU machine, so that a session may run ipu:bow, then
// a Pod16 or Pod64 step, in any order (about a second and 170 MB more at the first IPU run). A machine
// file that does not read is left to the run that names it, which reports it.
void reserve_engine_for_shipped_machines() {
  for (const auto& name : tilesim::ipu::shipped_ipu_machines()) {
    try {
      tilesim::ipu::reserve_engine_tiles(tilesim::ipu::load_ipu_machine(name).chip.num_tiles);
    } catch (const tilesim::Error&) {
    }
  }
}

// The bodies of tilesim._core's functions that fill a request themselves (the others are above): each
// parses what Python hands over, calls the library as its command would (as_command) and returns text.
std::string fit_document(const std::string& document, const std::string& file, const py::dict& graphs, const std::string& backend,
                         std::optional<std::int64_t> sample_batches) {
  ListedGraphs listed = list_graphs(graphs);
  tilesim::workloads::graphs::ScopedInMemoryGraphs scope(listed.edges);
  const nlohmann::json report = as_command([&] {
    // The options are checked before the workload is read, as the command checks them.
    tilesim::runs::BatchFitRequest request =
        tilesim::runs::fit_request_for(backend, sample_batches.value_or(tilesim::runs::BatchFitRequest{}.sample_batches));
    request.progress = false;  // as `tilesim fit --json`, whose answer tilesim.fit returns
    request.workload = tilesim::workloads::parse_workload(nlohmann::json::parse(document), file);
    request.workload_file = file;
    return tilesim::runs::fit_batch_size(request).report;
  });
  return report.dump();
}

std::string placement_report(const std::optional<std::string>& document, const std::string& file, const py::dict& graphs,
                             const py::dict& options) {
  tilesim::runs::PlacementStudyRequest request;  // its defaults are the command line's
  request.workload = file;
  if (document) request.document = nlohmann::json::parse(*document);
  if (!options["graph"].is_none()) request.graph = py::cast<std::string>(options["graph"]);
  if (!options["features"].is_none()) request.features = py::cast<std::int64_t>(options["features"]);
  if (!options["dtype"].is_none()) request.dtype = py::cast<std::string>(options["dtype"]);
  if (!options["machine"].is_none()) request.machine = py::cast<std::string>(options["machine"]);
  request.symmetrize = py::cast<bool>(options["symmetrize"]);
  // Checked as the command line checks --seed, with the same message.
  if (!options["seed"].is_none()) request.seed = tilesim::cli::checked_seed(py::cast<std::int64_t>(options["seed"]));
  ListedGraphs listed = list_graphs(graphs);
  tilesim::workloads::graphs::ScopedInMemoryGraphs scope(listed.edges);
  return as_command([&] { return tilesim::runs::study_placements(request); }).dump();
}

std::string calibrate_host(const std::string& out_path) {
  const std::string out = out_path.empty() ? tilesim::backends::default_cpu_machine_file() : out_path;
  return as_command([&] {
           tilesim::backends::check_calibration_destination(out);
           const auto calibration = tilesim::backends::calibrate_this_host(true);
           // The file is what the caller asked for; the document returned is this one, not the file read back.
           tilesim::write_file_atomically(out, calibration.document.dump(2) + "\n");
           return calibration.document;
         })
      .dump();
}

py::tuple run_document(const std::string& document, const std::string& file, const py::dict& graphs,
                       const std::map<std::string, Float32Array>& values, const py::dict& options, bool want_outputs) {
  ListedGraphs listed = list_graphs(graphs);
  tilesim::workloads::graphs::ScopedInMemoryGraphs scope(listed.edges);
  tilesim::runs::RunRequest request;
  request.backends = tilesim::backends::parse_backend_list(py::cast<std::string>(options["backends"]));
  request.workload = tilesim::workloads::parse_workload(nlohmann::json::parse(document), file);
  request.workload_file = file;
  request.backends_text = py::cast<std::string>(options["backends"]);
  request.timing_only = py::cast<bool>(options["timing_only"]);
  request.trace_path = py::cast<std::string>(options["trace"]);
  const std::string trace_path = request.trace_path;
  if (!options["warmup"].is_none()) request.warmup = py::cast<int>(options["warmup"]);
  if (!options["repeats"].is_none()) request.repeats = py::cast<int>(options["repeats"]);
  // Checked as the command line checks --seed, with the same message.
  if (!options["seed"].is_none()) request.seed = tilesim::cli::checked_seed(py::cast<std::int64_t>(options["seed"]));
  if (!options["steps"].is_none()) request.steps = py::cast<std::int64_t>(options["steps"]);
  if (!options["batches"].is_none()) request.batches = py::cast<std::int64_t>(options["batches"]);
  if (!options["available_memory_proportion"].is_none())
    request.available_memory_proportion = py::cast<double>(options["available_memory_proportion"]);
  const std::string out_dir = py::cast<std::string>(options["out_dir"]);  // "": the report is not kept
  const std::string report_path = out_dir.empty() ? "" : (std::filesystem::path(out_dir) / "report.json").string();
  const std::string report_where = out_dir.empty() ? "not kept (tilesim.run(..., out=None))" : report_path;
  request.ready = [&] {
    if (!out_dir.empty()) tilesim::create_output_directory(out_dir, "a directory the report can be written to (out=)");
  };
  py::dict outputs;
  // The hooks run inside the run, which runs without the GIL: each takes it, since both touch
  // Python objects (the caller's arrays, the dict of outputs).
  if (!values.empty())
    request.set_inputs = [&](const tilesim::OpGraph& g, tilesim::TensorValues& v) {
      py::gil_scoped_acquire gil;
      set_values(g, v, values);
    };
  if (want_outputs)
    request.outputs = [&](const std::string& backend, const tilesim::OpGraph& g, const tilesim::TensorValues& v) {
      py::gil_scoped_acquire gil;
      outputs[py::str(backend)] = collect_outputs(g, v);
    };
  const bool quiet = options.contains("quiet") && py::cast<bool>(options["quiet"]);
  request.progress = !quiet;
  CommandLineThreads threads;
  StderrToPython err(quiet);
  tilesim::runs::RunResult result;
  {
    // Without the GIL: torch-cpu's autograd refuses to run while its caller holds it, and other
    // Python threads go on while the engine works.
    py::gil_scoped_release released;
    result = tilesim::runs::run(std::move(request));
  }
  const std::string report_text = result.report.dump(2) + "\n";
  if (!report_path.empty()) tilesim::write_file_atomically(report_path, report_text);
  if (result.all_verified) std::cerr << tilesim::runs::refusal_text(result, report_where) << std::flush;
  const std::string table = result.summary + tilesim::runs::files_text(result, report_where, trace_path);
  return py::make_tuple(result.exit_code(), table, report_text, outputs);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "tilesim's native core: the command line and `run` with in-memory graphs and values (use the tilesim package)";
  py::register_exception_translator(&translate_errors);
  reserve_engine_for_shipped_machines();

  m.def(
      "version",
      [] {
        CommandLineThreads threads;  // the text names the thread count the commands run with
        return tilesim::cli::version_text();
      },
      "tilesim --version's text");

  m.def(
      "cli",
      [](const std::vector<std::string>& args, bool capture, bool quiet) { return command_line(&tilesim::cli::run_cli, args, capture, quiet); },
      py::arg("args"), py::arg("capture") = false, py::arg("quiet") = false,
      "Runs `tilesim ARGS...` in this process as the executable would: errors printed on stderr, the exit code returned");

  m.def(
      "dispatch",
      [](const std::vector<std::string>& args, bool capture, bool quiet) { return command_line(&tilesim::cli::dispatch, args, capture, quiet); },
      py::arg("args"), py::arg("capture") = true, py::arg("quiet") = false,
      "Runs `tilesim ARGS...` in this process; tilesim's errors are raised (tilesim.InputError, ...)");

  m.def(
      "load_json", [](const std::string& path) { return tilesim::load_json_file(path).dump(); }, py::arg("path"),
      "Reads a JSON file with the checks and messages every tilesim reader uses; returns its text");

  m.def(
      "check_workload",
      [](const std::string& document, const std::string& file, const py::dict& graphs) {
        ListedGraphs listed = list_graphs(graphs);
        tilesim::workloads::graphs::ScopedInMemoryGraphs scope(listed.edges);
        const auto workload = tilesim::workloads::parse_workload(nlohmann::json::parse(document), file);
        return tilesim::workloads::to_json(workload).dump();
      },
      py::arg("document"), py::arg("file"), py::arg("graphs"),
      "Parses a workload document strictly (as `tilesim run` does) and returns the resolved workload's JSON");

  m.def(
      "fit",
      &fit_document,
      py::arg("document"), py::arg("file"), py::arg("graphs"), py::arg("backend"), py::arg("sample_batches") = py::none(),
      "`tilesim fit --json` on a workload document with in-memory graphs (runs/batch_fit.hpp); returns the answer's JSON text");

  m.def(
      "placement",
      &placement_report,
      py::arg("document"), py::arg("file"), py::arg("graphs"), py::arg("options"),
      "`tilesim placement --json` (runs/placement_study.hpp) on a preset, a workload file (document None) or a workload "
      "document with in-memory graphs; returns the report's JSON text");

  m.def(
      "calibrate",
      &calibrate_host,
      py::arg("out"),
      "`tilesim calibrate --out OUT` (\"\": the default file; backends/host_calibration.hpp): measures this host, writes its CPU "
      "machine file and returns the file's JSON text");

  m.def(
      "backends", [] { return as_command([] { return tilesim::backends::describe_families(true); }).dump(); },
      "`tilesim backends --json` (backends/family_listing.hpp): the backend families as JSON text");

  m.def(
      "run",
      &run_document,
      py::arg("document"), py::arg("file"), py::arg("graphs"), py::arg("values"), py::arg("options"), py::arg("want_outputs"),
      "`tilesim run` on a workload document with in-memory graphs and values (runs/run.hpp); returns (exit code, the table, "
      "report.json's text, outputs)");

  m.def(
      "report",
      [](const std::string& results, const std::string& format, const std::vector<std::string>& baselines,
         const std::vector<std::string>& targets, const std::string& ops) {
        tilesim::analysis::SpeedupReportRequest request{results, format, baselines, targets, ops};
        return as_command([&] { return tilesim::analysis::speedup_report_text(request); });
      },
      py::arg("results"), py::arg("format"), py::arg("baselines"), py::arg("targets"), py::arg("ops"),
      "`tilesim report` (analysis/speedup_report_text.hpp): the speedup tables' text");
  m.def("validate", &validate_suites, py::arg("suite"), py::arg("out_dir"), py::arg("plots"), py::arg("format"),
        "`tilesim validate` (runs/validation_run.hpp): writes validation.json and the suites' files into out_dir; returns "
        "validation.json's text");
  m.def("calibrate_model", &calibrate_machine_model, py::arg("gpu"), py::arg("ipu"), py::arg("data_dir"), py::arg("write"),
        "`tilesim calibrate-model` (runs/model_calibration.hpp): with write, stores the fitted machine files; returns the --json "
        "answer's text");
}
