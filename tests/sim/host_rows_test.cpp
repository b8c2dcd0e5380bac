// Host moves of many pieces at once (Engine::write_rows, read_rows) against the one-buffer-at-a-time
// write and read, on irregular pieces: column blocks of odd widths over the same rows (bands), whole
// rows, single rows; small moves, and large ones that stream and use the host's cores. A large compute
// phase, which runs its tiles on several threads, against the bytes and the failure a one-thread run
// gives. And the host threads both use: every item of every run runs once.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine.hpp"
#include "sim/host_threads.hpp"
#include "tests/support/sim_test_machine.hpp"

using namespace tilesim::sim;

namespace {

Engine& host_rows_engine() { return Engine::instance(1472); }

MachineConfig roomy_machine(std::int32_t tiles, std::int64_t sram_bytes_per_tile) {
  return tilesim_test::sim_test_machine("roomy", tiles, sram_bytes_per_tile, 3);
}

// A host array of `rows` x `row_bytes` cut into pieces, one buffer each (one tile each, round robin):
// for each band of rows, the columns cut at `cuts` (a band with no cuts is one whole-rows piece).
struct Layout {
  Program program;
  std::vector<HostRows> pieces;
  std::int64_t host_bytes = 0;
};

Layout cut(std::int64_t row_bytes, const std::vector<std::int64_t>& band_rows, const std::vector<std::vector<std::int64_t>>& cuts,
           std::int32_t tiles) {
  Layout l;
  l.program.name = "host rows";
  std::int64_t row = 0;
  for (std::size_t b = 0; b < band_rows.size(); ++b) {
    std::vector<std::int64_t> edges{0};
    for (auto c : cuts[b]) edges.push_back(c);
    edges.push_back(row_bytes);
    for (std::size_t k = 0; k + 1 < edges.size(); ++k) {
      const std::int64_t width = edges[k + 1] - edges[k];
      const auto tile = static_cast<TileId>(l.pieces.size() % static_cast<std::size_t>(tiles));
      const BufferId buffer = l.program.add_buffer("piece " + std::to_string(l.pieces.size()), tile, band_rows[b] * width);
      l.pieces.push_back({buffer, band_rows[b], width, row * row_bytes + edges[k], row_bytes});
    }
    row += band_rows[b];
  }
  l.host_bytes = row * row_bytes;
  return l;
}

std::vector<std::byte> pattern(std::size_t bytes, unsigned seed) {
  std::vector<std::byte> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    const std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (std::uint64_t{seed} * 0xBF58476D1CE4E5B9ull);
    v[i] = static_cast<std::byte>(x >> 56);
  }
  return v;
}

// Writes the host array through write_rows and checks each buffer by plain reads; reads it back through
// read_rows into a differently filled array and checks every byte. `host_offset` shifts the host array
// off its allocation's alignment.
void check_round_trip(const Layout& l, const MachineConfig& machine, std::size_t host_offset) {
  host_rows_engine().load(l.program, machine, Mode::functional);
  const auto storage = pattern(static_cast<std::size_t>(l.host_bytes) + host_offset, 1);
  const std::byte* host = storage.data() + host_offset;
  host_rows_engine().write_rows(l.pieces, host, l.host_bytes);
  bool buffers_match = true;
  for (const HostRows& p : l.pieces) {
    std::vector<std::byte> held(static_cast<std::size_t>(p.rows * p.row_bytes));
    host_rows_engine().read(p.buffer, 0, held.data(), static_cast<std::int64_t>(held.size()));
    for (std::int64_t r = 0; r < p.rows && buffers_match; ++r) {
      for (std::int64_t c = 0; c < p.row_bytes; ++c) {
        if (held[static_cast<std::size_t>(r * p.row_bytes + c)] != host[p.host_offset_bytes + r * p.host_stride_bytes + c]) {
          buffers_match = false;
          break;
        }
      }
    }
  }
  CHECK(buffers_match);
  auto back_storage = pattern(static_cast<std::size_t>(l.host_bytes) + host_offset, 2);
  host_rows_engine().read_rows(l.pieces, back_storage.data() + host_offset, l.host_bytes);
  CHECK(std::equal(back_storage.begin() + static_cast<std::ptrdiff_t>(host_offset), back_storage.end(), host));
}

}  // namespace

TEST_CASE("host rows: many pieces move the bytes one-buffer reads and writes see", "[sim][engine][unit]") {
  SECTION("small: odd column widths, whole rows, one row") {
    // Rows of 103 bytes: a band cut into 3, 16, 20, 5 and 59 bytes; a band of whole rows; a band of one row
    // cut in two; a band cut at vector boundaries.
    const Layout l = cut(103, {7, 4, 1, 9}, {{3, 19, 39, 44}, {}, {50}, {16, 32, 48, 64}}, 5);
    for (std::size_t offset : {0u, 4u}) check_round_trip(l, roomy_machine(8, 4096), offset);
  }
  SECTION("large: streamed to the host and spread over the host's cores") {
    // 17 MiB, above the streaming and threading thresholds. A band of 16-byte-aligned column blocks (the
    // vector path), one of odd widths (the general path), and one of whole rows (one run per piece).
    const std::int64_t row_bytes = 2176;
    std::vector<std::int64_t> aligned, odd;
    for (std::int64_t c = 128; c < row_bytes; c += 128) aligned.push_back(c);
    for (std::int64_t c = 37; c < row_bytes; c += 121) odd.push_back(c);
    const Layout l = cut(row_bytes, {4096, 3072, 1024}, {aligned, odd, {}}, 48);
    REQUIRE(l.host_bytes > (std::int64_t{16} << 20));
    for (std::size_t offset : {0u, 4u}) check_round_trip(l, roomy_machine(48, 4 << 20), offset);
  }
}

TEST_CASE("host rows: pieces outside the host array or their buffer are refused", "[sim][engine][unit]") {
  const Layout l = cut(16, {4}, {{8}}, 2);
  host_rows_engine().load(l.program, roomy_machine(2, 1024), Mode::functional);
  std::vector<std::byte> host(64);
  CHECK_NOTHROW(host_rows_engine().read_rows(l.pieces, host.data(), 64));
  CHECK_THROWS_AS(host_rows_engine().read_rows(l.pieces, host.data(), 63), std::logic_error);
  auto too_many_rows = l.pieces;
  too_many_rows[0].rows = 5;
  CHECK_THROWS_AS(host_rows_engine().write_rows(too_many_rows, host.data(), 1 << 10), std::logic_error);
  auto no_buffer = l.pieces;
  no_buffer[1].buffer = 9;
  CHECK_THROWS_AS(host_rows_engine().read_rows(no_buffer, host.data(), 64), std::logic_error);
}

TEST_CASE("engine: a large compute phase gives the bytes and the failure of a one-thread run", "[sim][engine][unit]") {
  // 64 tiles, each a vertex of 6 x 20000 worker cycles (above the threading threshold) writing its
  // tile's pattern into its buffer.
  constexpr std::int32_t tiles = 64;
  constexpr std::int64_t bytes = 4096;
  Program p;
  p.name = "wide compute";
  Superstep s;
  s.name = "fill";
  std::vector<BufferId> buffers;
  for (std::int32_t t = 0; t < tiles; ++t) {
    buffers.push_back(p.add_buffer("out", t, bytes));
    Vertex v;
    v.codelet = "Fill";
    v.worker_cycles.assign(6, 20000);
    v.buffers = {{buffers.back(), 0}};
    v.execute = [t](const VertexContext& ctx) {
      for (std::int64_t i = 0; i < bytes; ++i) ctx.data(0)[i] = static_cast<std::byte>(t * 7 + i);
    };
    s.compute.vertices.push_back({t, std::move(v)});
  }
  p.steps.push_back(s);
  const MachineConfig machine = roomy_machine(tiles, bytes);

  host_rows_engine().load(p, machine, Mode::functional);
  const RunStats stats = host_rows_engine().run();
  CHECK(stats.total_cycles == 3 + 6 * 20000);
  bool all_match = true;
  for (std::int32_t t = 0; t < tiles; ++t) {
    std::vector<std::byte> held(bytes);
    host_rows_engine().read(buffers[static_cast<std::size_t>(t)], 0, held.data(), bytes);
    for (std::int64_t i = 0; i < bytes; ++i) all_match &= held[static_cast<std::size_t>(i)] == static_cast<std::byte>(t * 7 + i);
  }
  CHECK(all_match);

  // Two tiles fail: the run reports the lower one's, as a one-thread run stops at it.
  for (std::int32_t t : {40, 10}) {
    p.steps[0].compute.vertices[static_cast<std::size_t>(t)].vertex.execute = [t](const VertexContext&) {
      throw std::runtime_error("tile " + std::to_string(t) + " failed on purpose");
    };
  }
  host_rows_engine().load(p, machine, Mode::functional);
  CHECK_THROWS_WITH(host_rows_engine().run(), "tile 10 failed on purpose");
}

TEST_CASE("host threads: every item of every run runs once, whatever the helpers' timing", "[sim][engine][unit]") {
  for (int threads : {1, 2, 4}) {
    HostThreads pool(threads);
    // Runs of every size back to back, so a helper that wakes late meets a later run.
    for (std::int64_t count : {0, 1, 2, 3, 7, 64, 1000, 5, 0, 2, 333}) {
      std::vector<std::atomic<int>> calls(static_cast<std::size_t>(count));
      for (auto& c : calls) c.store(0);
      pool.run(count, [&](std::int64_t i) { calls[static_cast<std::size_t>(i)].fetch_add(1); });
      bool once_each = true;
      for (auto& c : calls) once_each &= c.load() == 1;
      INFO(threads << " threads, " << count << " items");
      CHECK(once_each);
    }
  }
}
