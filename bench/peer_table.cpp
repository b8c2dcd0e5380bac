#include "bench/peer_table.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>

namespace tilesim::bench {
namespace {

std::map<std::string, double>& bytes_by_name() {
  static std::map<std::string, double> bytes;
  return bytes;
}

struct Flops {
  double flops = 0;
  std::string dtype;
};
std::map<std::string, Flops>& flops_by_name() {
  static std::map<std::string, Flops> flops;
  return flops;
}

Ceilings& ceilings() {
  static Ceilings c;
  return c;
}

// The FLOP ceiling a product in `dtype` is read against: float32 against the register-FMA peak (what
// the vector units can do at all), a 16-bit dtype against its own measured matmul peak (AMX and the
// BF16/FP16 dot products are reached only through a GEMM, so that is its best-known ceiling).
double flop_ceiling(const std::string& dtype) {
  const Ceilings& c = ceilings();
  if (dtype == "float32") return c.float32_fma_flops_per_s;
  const auto it = c.matmul_flops_per_s.find(dtype);
  return it == c.matmul_flops_per_s.end() ? 0 : it->second;
}

// "73%" of the ceiling, or "-" when it was not measured.
std::string percent_of(double value, double ceiling) {
  if (ceiling <= 0 || value <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * value / ceiling);
  return text;
}

// "peer/OP/SHAPE/IMPL" -> {OP, SHAPE, IMPL}; empty when the name has another form.
std::vector<std::string> split_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 4 || parts[0] != "peer") return {};
  return {parts[1], parts[2], parts[3]};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string format_time(double s) {
  char text[32];
  if (s < 1e-6) std::snprintf(text, sizeof text, "%.1f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(text, sizeof text, "%.2f us", s * 1e6);
  else std::snprintf(text, sizeof text, "%.2f ms", s * 1e3);
  return text;
}

// Every product measured (tilesim's library, OpenBLAS, ATen): GFLOP/s and its share of the ceilings.
void print_products(const std::map<std::string, double>& seconds, const std::vector<std::string>& order) {
  bool header = false;
  for (const std::string& name : order) {
    const auto flops = flops_by_name().find(name);
    if (flops == flops_by_name().end()) continue;
    const auto parts = split_name(name);
    const double rate = flops->second.flops / seconds.at(name);
    if (!header) {
      std::printf("\nproducts: GFLOP/s = 2 m k n / time; %% fp32 peak = of the float32 FMA peak; %% dtype peak = of the dtype's "
                  "measured 2048^3 matmul rate\n%-14s %-26s %-22s %12s %10s %11s %12s\n",
                  "op", "shape", "impl", "time", "GFLOP/s", "% fp32 peak", "% dtype peak");
      header = true;
    }
    const auto dtype_peak = ceilings().matmul_flops_per_s.find(flops->second.dtype);
    std::printf("%-14s %-26s %-22s %12s %10.1f %11s %12s\n", parts[0].c_str(), parts[1].c_str(), parts[2].c_str(),
                format_time(seconds.at(name)).c_str(), rate / 1e9, percent_of(rate, ceilings().float32_fma_flops_per_s).c_str(),
                percent_of(rate, dtype_peak == ceilings().matmul_flops_per_s.end() ? 0 : dtype_peak->second).c_str());
  }
}

}  // namespace

void register_bytes(const std::string& benchmark_name, double bytes) { bytes_by_name()[benchmark_name] = bytes; }
void register_flops(const std::string& benchmark_name, double flops, const std::string& dtype) {
  flops_by_name()[benchmark_name] = {flops, dtype};
}
void set_ceilings(const Ceilings& c) { ceilings() = c; }

void PeerTableReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    if (run.error_occurred || run.iterations == 0) continue;
    const bool aggregate = run.run_type == Run::RT_Aggregate;
    if (aggregate && run.aggregate_name != "median") continue;
    const std::string name = run.run_name.function_name;
    if (split_name(name).empty()) continue;
    if (!aggregate && run.repetitions > 1) continue;  // wait for the median
    const double per_call_s = run.real_accumulated_time / static_cast<double>(run.iterations);
    if (!seconds_.count(name)) order_.push_back(name);
    seconds_[name] = per_call_s;
  }
}

void PeerTableReporter::Finalize() {
  ConsoleReporter::Finalize();
  if (order_.empty()) return;
  // The machine's streaming bandwidth: the faster of the two copy benchmarks, when they ran.
  double stream_gbs = 0;
  for (const auto& [name, s] : seconds_) {
    const auto parts = split_name(name);
    if (parts[0] == "stream_copy" && bytes_by_name().count(name)) stream_gbs = std::max(stream_gbs, bytes_by_name()[name] / s / 1e9);
  }
  std::printf("\nPeer table: per-call wall time (median of repetitions), effective GB/s = (bytes read + written) / time, "
              "speed-up = torch-cpu time / tilesim time, vs plain = tilesim time / single-threaded plain loop's\n");
  if (stream_gbs > 0) std::printf("streaming bandwidth (best copy, read + written): %.1f GB/s\n", stream_gbs);
  const Ceilings& ceiling = ceilings();
  // The ceilings are measured before the first peer benchmark: a filter that runs none leaves them
  // unmeasured, which the table says rather than printing zeros as if they were measured.
  if (ceiling.stream_bytes_per_s > 0) {
    std::printf("measured ceilings (kernels/cpu/host_calibration, at the start of this run): STREAM triad %.1f GB/s, float32 FMA "
                "peak %.1f GFLOP/s",
                ceiling.stream_bytes_per_s / 1e9, ceiling.float32_fma_flops_per_s / 1e9);
    for (const auto& [dtype, rate] : ceiling.matmul_flops_per_s)
      std::printf(", %s matmul %.1f GFLOP/s (%s)", dtype.c_str(), rate / 1e9, ceiling.matmul_instruction_set.at(dtype).c_str());
  } else {
    std::printf("ceilings: not measured in this run (they are measured before the first peer benchmark, and the filter ran "
                "none); the %% ceiling column is left empty");
  }
  std::printf("\n%% ceiling: a memory-bound op's effective GB/s over the STREAM triad's; a product's FLOP/s over the float32 "
              "FMA peak (float32) or its dtype's matmul peak (16-bit)\n");
  std::printf("%-14s %-26s %12s %9s %12s %9s %-22s %8s %10s %9s %s\n", "op", "shape", "tilesim", "GB/s", "torch-cpu", "GB/s", "peer",
              "speed-up", "vs plain", "% ceiling", stream_gbs > 0 ? "% of stream" : "");
  std::map<std::string, std::vector<double>> ratios_by_op;
  std::vector<std::string> ops_in_order;
  std::set<std::pair<std::string, std::string>> printed;
  for (const std::string& name : order_) {
    const auto parts = split_name(name);
    const std::string& op = parts[0];
    const std::string& shape = parts[1];
    if (op == "stream_copy" || !printed.insert({op, shape}).second) continue;
    const std::string prefix = "peer/" + op + "/" + shape + "/";
    const auto ours = seconds_.find(prefix + "tilesim");
    if (ours == seconds_.end()) continue;
    // The peer is the fastest torch form measured for this op and shape (a stricter comparison than any one).
    std::string peer_name;
    double peer_s = 0;
    for (const auto& [other, s] : seconds_) {
      if (other.rfind(prefix + "torch", 0) != 0) continue;
      if (peer_name.empty() || s < peer_s) {
        peer_name = other.substr(prefix.size());
        peer_s = s;
      }
    }
    // tilesim's time over the single-threaded plain loop's, where one ran (the small-call target: <= 2).
    char vs_plain[32] = "-";
    const auto plain = seconds_.find(prefix + "plain_loop");
    if (plain != seconds_.end()) std::snprintf(vs_plain, sizeof vs_plain, "%.2f", ours->second / plain->second);
    const double bytes = bytes_by_name().count(ours->first) ? bytes_by_name()[ours->first] : 0;
    const double ours_gbs = bytes / ours->second / 1e9;
    char stream_share[32] = "";
    if (stream_gbs > 0) std::snprintf(stream_share, sizeof stream_share, "%.0f%%", 100 * ours_gbs / stream_gbs);
    const auto flops = flops_by_name().find(ours->first);
    const std::string of_ceiling = flops != flops_by_name().end()
                                       ? percent_of(flops->second.flops / ours->second, flop_ceiling(flops->second.dtype))
                                       : percent_of(ours_gbs * 1e9, ceiling.stream_bytes_per_s);
    if (peer_name.empty()) {
      std::printf("%-14s %-26s %12s %9.1f %12s %9s %-22s %8s %10s %9s %s\n", op.c_str(), shape.c_str(), format_time(ours->second).c_str(),
                  ours_gbs, "-", "-", "-", "-", vs_plain, of_ceiling.c_str(), stream_share);
      continue;
    }
    const double ratio = peer_s / ours->second;
    if (!ratios_by_op.count(op)) ops_in_order.push_back(op);
    ratios_by_op[op].push_back(ratio);
    std::printf("%-14s %-26s %12s %9.1f %12s %9.1f %-22s %7.2fx %10s %9s %s\n", op.c_str(), shape.c_str(), format_time(ours->second).c_str(),
                ours_gbs, format_time(peer_s).c_str(), bytes / peer_s / 1e9, peer_name.c_str(), ratio, vs_plain, of_ceiling.c_str(),
                stream_share);
  }
  print_products(seconds_, order_);
  std::printf("\nspeed-up over torch-cpu by op: median, min, max over the shapes above\n");
  for (const std::string& op : ops_in_order) {
    const auto& r = ratios_by_op[op];
    std::printf("%-14s median %6.2fx  min %6.2fx  max %6.2fx  (%zu shapes)\n", op.c_str(), median(r), *std::min_element(r.begin(), r.end()),
                *std::max_element(r.begin(), r.end()), r.size());
  }
  std::fflush(stdout);
}

}  // namespace tilesim::bench
