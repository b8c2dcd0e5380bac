#pragma once
// results.csv: the table `tilesim sweep` appends to, one row per point (op, sizes, dtype, backend,
// repeat), and that `tilesim roofline`, `plot surface` and `report` read. The columns are fixed
// (docs/sweep-format.md, "results.csv"); every row says what it is (kind: simulated | measured |
// modeled, and the mode), and units sit in the column names. Pure text in, rows out: no backend here.
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"

namespace tilesim::analysis {

// Bytes moved at each memory level, named as the backends name them in OpResult::bytes_by_level:
// the IPU's tile_sram_read_bytes, tile_sram_write_bytes and exchange_bytes, the GPU model's l2_bytes
// and hbm_bytes, the CPU's dram_min_bytes. One column each, empty where a backend has no such level.
const std::vector<std::string>& byte_level_columns();

// Every column of results.csv, in order.
const std::vector<std::string>& result_columns();
// The columns of result_columns() that a reader does without (read as empty): added after files were
// written, so older results.csv files still read.
const std::vector<std::string>& later_result_columns();

struct ResultRow {
  std::string op;                  // "gather", "scatter_add"
  OpShape shape;
  std::string dtype = "float32";
  std::string backend;             // as resolved: "ipu:bow", "gpu-model:a100-40gb:eager", "cpu"
  int repeat = 0;                  // 0-based repeat of the point
  std::string kind;                // "simulated", "measured" or "modeled"
  std::string mode;                // IPU: timing-only | functional; GPU model: kernel | eager; CPU: median-of-N
  std::string machine;             // machine name (IPU, GPU) or this host in words (CPU)
  std::uint64_t index_seed = 0;    // the seed of a one-op workload that reproduces the point's indices
  std::optional<double> time_s;    // empty when the point does not fit the machine
  std::optional<std::int64_t> cycles;  // simulated backends
  double flops = 0;
  std::int64_t min_bytes = 0;      // the op's own minimum traffic (ir/op_graph.hpp)
  std::map<std::string, std::int64_t> bytes;  // by byte_level_columns() name; only the levels present
  std::string intensity_level;     // the level intensity_flops_per_byte is taken at ("" when none)
  std::optional<double> intensity_flops_per_byte;
  // "yes" / "no": the outputs were checked against the reference; "timing-only": a simulated run that
  // moved no bytes; "modeled": a model computes no outputs; "does-not-fit": the point cannot be
  // planned on the machine (no time).
  std::string verified;
  double wall_s = 0;               // host seconds this point took (simulator or model speed)
  // Measured rows: the threads the timed calls ran on, the team they would have run on on a quiet host
  // (threads < team_threads: other work held cores and the timing fell back to the free ones;
  // kernels/cpu/guarded_timing.hpp), and why the time is still not to be trusted: "" when it is, else
  // what the disturbance detector saw ("threads waited for a core ..."). Empty / nullopt for simulated
  // and modeled rows, and in files written before these columns existed.
  std::optional<int> threads;
  std::optional<int> team_threads;
  std::string disturbed;
  // The content hash of the resolved machine the row was modeled or simulated on (MachineProvenance):
  // a sweep over machine figures gives each what-if machine its own. "" for measured rows and in files
  // written before the column existed.
  std::string machine_hash;
  // The cells of columns beyond result_columns() (a header may carry more: "extra columns are
  // ignored" by every other reader), by column name. They identify the point: the speedup surfaces
  // pair rows on them (analysis/speedup.hpp) and can draw over them. A workload sweep's rows read for
  // the surfaces (analysis/workload_results.hpp) hold their axis columns here. Not written back.
  std::map<std::string, std::string> point_columns;
  int line = 0;                    // 1-based line in the file it was read from (0 when built in code)
};

// The header line and one data line, each ending in '\n'. Fields holding a comma or quote are quoted
// (RFC 4180); a line break inside a field is written as a space, so every record is one line.
std::string results_csv_header();
std::string results_csv_row(const ResultRow& row);

// Reads results.csv. The header must hold every column of result_columns() but the later ones (in any
// order; extra columns are kept in ResultRow::point_columns). A short row, a bad number or an unknown kind throws
// tilesim::InputError naming the file, line and column.
std::vector<ResultRow> parse_results_csv(const std::string& text, const std::string& file);
std::vector<ResultRow> read_results_csv(const std::string& path);

// The same reading one row at a time, for results files too large to hold (a resumed sweep of millions
// of points): `each` gets every row in file order; lines over limits::max_csv_line_bytes are an error.
// With PartialLastLine::skip, a last line without a line end (a sweep killed while writing it) is left
// out, and an empty input is no error. Returns the bytes of the whole lines read, header included.
enum class PartialLastLine { parse, skip };
std::uintmax_t for_each_results_row(std::istream& in, const std::string& file, PartialLastLine partial,
                                    const std::function<void(ResultRow&&)>& each);

// Splits one CSV record (without its line end) into fields, undoing RFC 4180 quoting. Throws
// InputError (file, line) on an unterminated quote.
std::vector<std::string> split_csv_record(const std::string& record, const std::string& file, int line);
std::string csv_field(const std::string& text);
// A cell's finite number (the whole cell, as std::stod reads it); nullopt for anything else, an empty cell
// included.
std::optional<double> csv_finite_number(const std::string& text);

// The identity of a point for `tilesim sweep --resume`: op, sizes, dtype, backend and repeat.
std::string point_key(const std::string& op, const OpShape& shape, const std::string& dtype, const std::string& backend,
                      int repeat);
inline std::string point_key(const ResultRow& row) {
  return point_key(row.op, row.shape, row.dtype, row.backend, row.repeat);
}

}  // namespace tilesim::analysis
