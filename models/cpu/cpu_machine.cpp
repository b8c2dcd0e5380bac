#include "models/cpu/cpu_machine.hpp"

#include <cstdlib>
#include <filesystem>
#include <limits>

#include "common/error.hpp"
#include "common/strict_json.hpp"

namespace tilesim::cpu_model {

namespace {

Figure read_figure(ObjectReader& parent, const std::string& key) {
  ObjectReader r = parent.object(key);
  Figure f;
  f.value = r.positive_number("value");
  f.source = r.string("source");
  r.finish();
  return f;
}

nlohmann::json figure_json(const Figure& f) { return {{"value", f.value}, {"source", f.source}}; }

const char* const kMatmulInstructionSets[] = {"AMX",     "AVX-512-BF16", "AVX-512-FP16", "conversion to float32",
                                              "AVX-512", "AVX2",         "other"};

CpuMachine::MatmulFigure read_matmul_figure(ObjectReader& parent, const std::string& key) {
  ObjectReader r = parent.object(key);
  CpuMachine::MatmulFigure f;
  f.rate.value = r.positive_number("value");
  f.rate.source = r.string("source");
  f.instruction_set = r.string("instruction_set");
  f.kernel = r.string("kernel");
  bool known = false;
  std::string allowed;
  for (const char* name : kMatmulInstructionSets) {
    known = known || f.instruction_set == name;
    allowed += std::string(allowed.empty() ? "" : ", ") + name;
  }
  if (!known) throw InputError(r.file(), r.path() + ".instruction_set", "one of " + allowed, "\"" + f.instruction_set + "\"");
  r.finish();
  return f;
}

}  // namespace

std::string cpu_machine_dir() {
  const char* env = std::getenv("TILESIM_CPU_MACHINE_DIR");
  if (env && *env) return env;
  return TILESIM_CPU_MACHINE_DIR;
}

CpuMachine parse_cpu_machine(const nlohmann::json& document, const std::string& file) {
  ObjectReader r(document, file, "");
  CpuMachine m;
  m.file = file;
  m.name = r.string("name");
  m.description = r.string("description");

  ObjectReader host = r.object("host");
  m.hostname = host.string("hostname");
  m.cpu_model = host.string("cpu_model");
  m.logical_cpus = host.integer("logical_cpus", 1, 1 << 20);
  m.threads = host.integer("threads", 1, 1 << 20);
  m.measured_utc = host.string("measured_utc");
  m.tool = host.string("tool");
  host.finish();

  ObjectReader bw = r.object("bandwidth_bytes_per_s");
  m.dram_stream_bytes_per_s = read_figure(bw, "dram_stream");
  m.dram_random_gather_bytes_per_s = read_figure(bw, "dram_random_gather");
  if (bw.has("llc_stream")) m.llc_stream_bytes_per_s = read_figure(bw, "llc_stream");
  bw.finish();

  ObjectReader peak = r.object("peak_flops_per_s");
  for (const char* dtype : {"float32", "float64"}) m.peak_flops_per_s[dtype] = read_figure(peak, dtype);
  peak.finish();

  if (r.has("matmul_peak_flops_per_s")) {
    ObjectReader mm = r.object("matmul_peak_flops_per_s");
    for (const char* dtype : {"float32", "bfloat16", "float16"})
      if (mm.has(dtype)) m.matmul_peak_flops_per_s[dtype] = read_matmul_figure(mm, dtype);
    mm.finish();
  }

  if (r.has("details")) {
    const auto& d = r.value("details");
    if (!d.is_object()) throw InputError(file, "details", "an object (how each figure was measured)", describe_json(d));
    m.details = d;
  }
  r.finish();
  return m;
}

CpuMachine load_cpu_machine(const std::string& name_or_path) {
  std::string path = name_or_path;
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (!looks_like_path) path = (std::filesystem::path(cpu_machine_dir()) / (name_or_path + ".json")).string();
  return parse_cpu_machine(load_json_file(path), path);
}

nlohmann::json to_json(const CpuMachine& m) {
  nlohmann::json peak = nlohmann::json::object();
  for (const auto& [dtype, f] : m.peak_flops_per_s) peak[dtype] = figure_json(f);
  nlohmann::json doc = {{"name", m.name},
          {"description", m.description},
          {"host",
           {{"hostname", m.hostname},
            {"cpu_model", m.cpu_model},
            {"logical_cpus", m.logical_cpus},
            {"threads", m.threads},
            {"measured_utc", m.measured_utc},
            {"tool", m.tool}}},
          {"bandwidth_bytes_per_s",
           {{"dram_stream", figure_json(m.dram_stream_bytes_per_s)},
            {"dram_random_gather", figure_json(m.dram_random_gather_bytes_per_s)}}},
          {"peak_flops_per_s", peak},
          {"details", m.details}};
  if (m.llc_stream_bytes_per_s) doc["bandwidth_bytes_per_s"]["llc_stream"] = figure_json(*m.llc_stream_bytes_per_s);
  if (!m.matmul_peak_flops_per_s.empty()) {
    nlohmann::json mm = nlohmann::json::object();
    for (const auto& [dtype, f] : m.matmul_peak_flops_per_s)
      mm[dtype] = {{"value", f.rate.value}, {"source", f.rate.source}, {"instruction_set", f.instruction_set}, {"kernel", f.kernel}};
    doc["matmul_peak_flops_per_s"] = mm;
  }
  return doc;
}

}  // namespace tilesim::cpu_model
