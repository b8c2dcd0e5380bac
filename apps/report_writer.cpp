#include "apps/report_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <map>
#include <sstream>

#include "common/error.hpp"

namespace tilesim::cli {

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "", "a writable output path", "it cannot be created");
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(path, "", "a writable output path", "a write error");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path, "", "a writable output path", ec.message());
  }
}

std::string format_time(double seconds) {
  std::ostringstream s;
  s << std::setprecision(3) << std::fixed;
  if (seconds < 1e-6) {
    s << seconds * 1e9 << " ns";
  } else if (seconds < 1e-3) {
    s << seconds * 1e6 << " us";
  } else if (seconds < 1) {
    s << seconds * 1e3 << " ms";
  } else {
    s << seconds << " s";
  }
  return s.str();
}

namespace {

struct Totals {
  double time_s = 0, flops = 0;
  std::int64_t min_bytes = 0, cycles = 0;
  bool all_cycles = true, all_checked = true, all_ok = true;
};

Totals totals_of(const BackendResult& r, std::size_t first, std::size_t count) {
  Totals t;
  for (std::size_t i = first; i < first + count && i < r.ops.size(); ++i) {
    const OpResult& o = r.ops[i];
    t.time_s += o.time_s;
    t.flops += o.flops;
    t.min_bytes += o.min_bytes;
    if (o.cycles) t.cycles += *o.cycles;
    else t.all_cycles = false;
    if (o.verified) t.all_ok = t.all_ok && *o.verified;
    else t.all_checked = false;
  }
  return t;
}

std::string si_text(double x, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  std::size_t p = 0;
  while (x >= 1000 && p + 1 < std::size(prefixes)) {
    x /= 1000;
    ++p;
  }
  std::ostringstream s;
  s << std::setprecision(3) << x << " " << prefixes[p] << unit;
  return s.str();
}

std::string intensity_text(double flops, std::int64_t bytes) {
  if (bytes <= 0) return "-";
  std::ostringstream s;
  s << std::setprecision(3) << flops / static_cast<double>(bytes);
  return s.str();
}

// "in x features x out" for the indexed ops; "M x K -> N" for the matmuls; "rows x cols" elementwise.
std::string shape_of(const OpResult& o) {
  const OpShape& s = o.shape;
  if (o.op_kind == OpKind::matmul || o.op_kind == OpKind::segment_matmul)
    return std::to_string(s.num_inputs) + " x " + std::to_string(s.num_features) + " -> " + std::to_string(s.out_features) +
           (o.op_kind == OpKind::segment_matmul ? " (" + std::to_string(s.num_segments) + " segments)" : "");
  if (o.op_kind == OpKind::unary || o.op_kind == OpKind::binary)
    return std::to_string(s.num_inputs) + " x " + std::to_string(s.num_features);
  return std::to_string(s.num_inputs) + " x " + std::to_string(s.num_features) + " x " + std::to_string(s.num_outputs);
}

}  // namespace

nlohmann::json group_totals(const std::vector<OpGroup>& groups, const BackendResult& result) {
  nlohmann::json out = nlohmann::json::array();
  for (const OpGroup& g : groups) {
    const Totals t = totals_of(result, g.first_op, g.op_count);
    nlohmann::json j = {{"name", g.name},
                        {"kind", g.kind},
                        {"first_op", g.first_op},
                        {"ops", g.op_count},
                        {"time_s", t.time_s},
                        {"flops", t.flops},
                        {"min_bytes", t.min_bytes},
                        {"intensity_flops_per_byte", t.min_bytes > 0 ? t.flops / static_cast<double>(t.min_bytes) : 0.0}};
    j["cycles"] = t.all_cycles ? nlohmann::json(t.cycles) : nlohmann::json(nullptr);
    j["verified"] = t.all_checked ? nlohmann::json(t.all_ok) : nlohmann::json(nullptr);
    out.push_back(j);
  }
  return out;
}

std::string format_table(const std::vector<BackendResult>& results, const std::vector<OpGroup>& groups) {
  // Column widths follow the content, so long op names and backend names still line up.
  std::size_t op_w = 2, shape_w = 19, backend_w = 7;
  for (const auto& r : results) {
    backend_w = std::max(backend_w, r.backend.size());
    for (const auto& o : r.ops) {
      op_w = std::max(op_w, o.op.size());
      shape_w = std::max(shape_w, shape_of(o).size());
    }
  }
  for (const auto& g : groups) op_w = std::max(op_w, g.name.size() + 2);
  std::ostringstream t;
  auto row = [&](const std::string& op, const std::string& shape, const std::string& backend, const std::string& kind,
                 const std::string& time, const std::string& cycles, const std::string& flops, const std::string& bytes,
                 const std::string& intensity, const std::string& verified) {
    t << std::left << std::setw(static_cast<int>(op_w + 2)) << op << std::setw(static_cast<int>(shape_w + 2)) << shape
      << std::setw(static_cast<int>(backend_w + 2)) << backend << std::setw(10) << kind << std::right << std::setw(13)
      << time << std::setw(11) << cycles << std::setw(12) << flops << std::setw(12) << bytes << std::setw(10) << intensity
      << "  " << verified << "\n";
  };
  row("op", "in x features x out", "backend", "kind", "time", "cycles", "FLOPs", "min bytes", "FLOP/B", "verified");
  if (results.empty()) return t.str();
  // Group ends, by the index of their last op.
  std::map<std::size_t, std::vector<const OpGroup*>> ends;
  for (const auto& g : groups)
    if (g.op_count > 0) ends[g.first_op + g.op_count - 1].push_back(&g);
  for (std::size_t k = 0; k < results.front().ops.size(); ++k) {
    for (const auto& r : results) {
      const auto& o = r.ops.at(k);
      const bool first = &r == &results.front();
      row(first ? o.op : "", first ? shape_of(o) : "", r.backend, to_string(r.kind), format_time(o.time_s),
          o.cycles ? std::to_string(*o.cycles) : "-", si_text(o.flops, ""), si_text(static_cast<double>(o.min_bytes), "B"),
          intensity_text(o.flops, o.min_bytes), o.verified ? (*o.verified ? "yes" : "NO") : "not checked");
    }
    auto it = ends.find(k);
    if (it == ends.end()) continue;
    for (const OpGroup* g : it->second) {
      for (const auto& r : results) {
        const Totals s = totals_of(r, g->first_op, g->op_count);
        const bool first = &r == &results.front();
        row(first ? "= " + g->name : "", first ? g->kind + ", " + std::to_string(g->op_count) + " ops" : "", r.backend,
            to_string(r.kind), format_time(s.time_s), s.all_cycles ? std::to_string(s.cycles) : "-", si_text(s.flops, ""),
            si_text(static_cast<double>(s.min_bytes), "B"), intensity_text(s.flops, s.min_bytes),
            s.all_checked ? (s.all_ok ? "yes" : "NO") : "not checked");
      }
    }
  }
  return t.str();
}

}  // namespace tilesim::cli
