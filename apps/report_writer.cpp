#include "apps/report_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
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

std::string format_table(const std::vector<BackendResult>& results) {
  // Column widths follow the content, so long op names and backend names still line up.
  std::size_t op_w = 2, shape_w = 19, backend_w = 7;
  auto shape_of = [](const OpResult& o) {
    return std::to_string(o.shape.num_inputs) + " x " + std::to_string(o.shape.num_features) + " x " +
           std::to_string(o.shape.num_outputs);
  };
  for (const auto& r : results) {
    backend_w = std::max(backend_w, r.backend.size());
    for (const auto& o : r.ops) {
      op_w = std::max(op_w, o.op.size());
      shape_w = std::max(shape_w, shape_of(o).size());
    }
  }
  std::ostringstream t;
  auto row = [&](const std::string& op, const std::string& shape, const std::string& backend, const std::string& kind,
                 const std::string& time, const std::string& cycles, const std::string& verified) {
    t << std::left << std::setw(static_cast<int>(op_w + 2)) << op << std::setw(static_cast<int>(shape_w + 2)) << shape
      << std::setw(static_cast<int>(backend_w + 2)) << backend << std::setw(10) << kind << std::right << std::setw(13)
      << time << std::setw(11) << cycles << "  " << verified << "\n";
  };
  row("op", "in x features x out", "backend", "kind", "time", "cycles", "verified");
  if (results.empty()) return t.str();
  for (std::size_t k = 0; k < results.front().ops.size(); ++k) {
    for (const auto& r : results) {
      const auto& o = r.ops.at(k);
      const bool first = &r == &results.front();
      row(first ? o.op : "", first ? shape_of(o) : "", r.backend, to_string(r.kind), format_time(o.time_s),
          o.cycles ? std::to_string(*o.cycles) : "-", o.verified ? (*o.verified ? "yes" : "NO") : "not checked");
    }
  }
  return t.str();
}

}  // namespace tilesim::cli
