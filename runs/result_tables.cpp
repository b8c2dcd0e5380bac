#include "runs/result_tables.hpp"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <map>
#include <sstream>

#include "common/error.hpp"

namespace tilesim::runs {

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

// A backend's rows of one op each, in graph order (rows standing for a whole training phase left out).
std::vector<const OpResult*> op_rows(const BackendResult& r) {
  std::vector<const OpResult*> rows;
  for (const OpResult& o : r.ops)
    if (!o.phase) rows.push_back(&o);
  return rows;
}

std::vector<const OpResult*> phase_rows(const BackendResult& r) {
  std::vector<const OpResult*> rows;
  for (const OpResult& o : r.ops)
    if (o.phase) rows.push_back(&o);
  return rows;
}

// Whether the per-op rows reach a group's last op (a backend with per-phase rows has none).
bool covers(const std::vector<const OpResult*>& rows, const OpGroup& g) { return rows.size() >= g.first_op + g.op_count; }

Totals totals_of(const std::vector<const OpResult*>& rows, std::size_t first, std::size_t count) {
  Totals t;
  for (std::size_t i = first; i < first + count && i < rows.size(); ++i) {
    const OpResult& o = *rows[i];
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

std::string intensity_text(double flops, std::int64_t bytes) {
  if (bytes <= 0) return "-";
  std::ostringstream s;
  s << std::setprecision(3) << flops / static_cast<double>(bytes);
  return s.str();
}

// "in x features x out" for the indexed ops; "M x K -> N" for the matmuls; "rows x cols" elementwise.
std::string shape_of(const OpResult& o) {
  if (o.phase) return "whole " + to_string(*o.phase) + " phase";
  const OpShape& s = o.shape;
  if (o.op_kind == OpKind::matmul || o.op_kind == OpKind::segment_matmul)
    return std::to_string(s.num_inputs) + " x " + std::to_string(s.num_features) + " -> " + std::to_string(s.out_features) +
           (o.op_kind == OpKind::segment_matmul ? " (" + std::to_string(s.num_segments) + " segments)" : "");
  if (o.op_kind == OpKind::unary || o.op_kind == OpKind::binary || o.op_kind == OpKind::cast)
    return std::to_string(s.num_inputs) + " x " + std::to_string(s.num_features);
  return std::to_string(s.num_inputs) + " x " + std::to_string(s.num_features) + " x " + std::to_string(s.num_outputs);
}

}  // namespace

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

nlohmann::json group_totals(const std::vector<OpGroup>& groups, const BackendResult& result) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<const OpResult*> rows = op_rows(result);
  for (const OpGroup& g : groups) {
    if (!covers(rows, g)) continue;
    const Totals t = totals_of(rows, g.first_op, g.op_count);
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
  auto op_line = [&](const OpResult& o, const BackendResult& r, bool named) {
    row(named ? o.op : "", named ? shape_of(o) : "", r.backend, to_string(r.kind), format_time(o.time_s),
        o.cycles ? std::to_string(*o.cycles) : "-", si_text(o.flops, ""), si_text(static_cast<double>(o.min_bytes), "B"),
        intensity_text(o.flops, o.min_bytes), o.verified ? (*o.verified ? "yes" : "NO") : "not checked");
  };
  // Per-op rows (graph order, the same ops on every backend that has them), each op's backends together;
  // the op's name and shape on its first line.
  std::vector<std::vector<const OpResult*>> rows;
  std::size_t op_count = 0;
  for (const auto& r : results) {
    rows.push_back(op_rows(r));
    op_count = std::max(op_count, rows.back().size());
  }
  // Group ends, by the index of their last op.
  std::map<std::size_t, std::vector<const OpGroup*>> ends;
  for (const auto& g : groups)
    if (g.op_count > 0) ends[g.first_op + g.op_count - 1].push_back(&g);
  for (std::size_t k = 0; k < op_count; ++k) {
    bool named = false;
    for (std::size_t b = 0; b < results.size(); ++b) {
      if (k >= rows[b].size()) continue;
      op_line(*rows[b][k], results[b], !named);
      named = true;
    }
    auto it = ends.find(k);
    if (it == ends.end()) continue;
    for (const OpGroup* g : it->second) {
      named = false;
      for (std::size_t b = 0; b < results.size(); ++b) {
        if (!covers(rows[b], *g)) continue;
        const auto& r = results[b];
        const Totals s = totals_of(rows[b], g->first_op, g->op_count);
        row(!named ? "= " + g->name : "", !named ? g->kind + ", " + std::to_string(g->op_count) + " ops" : "", r.backend,
            to_string(r.kind), format_time(s.time_s), s.all_cycles ? std::to_string(s.cycles) : "-", si_text(s.flops, ""),
            si_text(static_cast<double>(s.min_bytes), "B"), intensity_text(s.flops, s.min_bytes),
            s.all_checked ? (s.all_ok ? "yes" : "NO") : "not checked");
        named = true;
      }
    }
  }
  // Rows that stand for a whole training phase (torch-cpu's autograd step), after the per-op rows.
  for (const auto& r : results)
    for (const OpResult* o : phase_rows(r)) op_line(*o, r, true);
  return t.str();
}

}  // namespace tilesim::runs
