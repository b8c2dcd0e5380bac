// The engine's pure cost rules against hand-computed values.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "sim/engine.hpp"

using namespace tilesim::sim;

namespace {

Vertex vertex(std::vector<Cycles> worker_cycles, Cycles supervisor_cycles) {
  Vertex v;
  v.codelet = "Test";
  v.worker_cycles = std::move(worker_cycles);
  v.supervisor_cycles = supervisor_cycles;
  return v;
}

Cycles compute(const std::vector<Vertex>& vertices, std::int32_t worker_contexts) {
  std::vector<const Vertex*> pointers;
  for (const auto& v : vertices) pointers.push_back(&v);
  return tile_compute_cycles(pointers, worker_contexts);
}

}  // namespace

TEST_CASE("tile_compute_cycles: no vertices cost nothing", "[sim][cost][formula]") { CHECK(compute({}, 6) == 0); }

TEST_CASE("tile_compute_cycles: a multi-worker vertex lasts contexts x slowest worker plus supervisor", "[sim][cost][formula]") {
  // 6 x 30 + 7
  CHECK(compute({vertex({10, 20, 30, 5, 5, 5}, 7)}, 6) == 187);
  // Multi-worker vertices run one after another: 187 + (6 x 2 + 3)
  CHECK(compute({vertex({10, 20, 30, 5, 5, 5}, 7), vertex({1, 1, 1, 1, 1, 2}, 3)}, 6) == 202);
  // 4 contexts: 4 x 9 + 0
  CHECK(compute({vertex({9, 1, 1, 1}, 0)}, 4) == 36);
}

TEST_CASE("tile_compute_cycles: single-worker vertices are packed longest first onto the contexts", "[sim][cost][formula]") {
  // One vertex: 6 x 9 + 1
  CHECK(compute({vertex({9}, 1)}, 6) == 55);
  // 7 vertices of 10 on 6 contexts: one context runs two, so 6 x 20 + 7 x 2
  std::vector<Vertex> seven(7, vertex({10}, 2));
  CHECK(compute(seven, 6) == 134);
  // 3 contexts, loads 7 5 4 3 3 given shortest first: LPT places 7 | 5 | 4, then 3 on the 4 (7),
  // then 3 on the 5 (8): busiest 8, so 3 x 8 + 5 x 1
  CHECK(compute({vertex({3}, 1), vertex({3}, 1), vertex({4}, 1), vertex({5}, 1), vertex({7}, 1)}, 3) == 29);
  // One context: everything in sequence, 1 x (4 + 5) + 2
  CHECK(compute({vertex({4}, 1), vertex({5}, 1)}, 1) == 11);
}

TEST_CASE("tile_compute_cycles: multi-worker vertices then the packed single-worker ones", "[sim][cost][formula]") {
  std::vector<Vertex> mixed(7, vertex({10}, 2));
  mixed.push_back(vertex({10, 20, 30, 5, 5, 5}, 7));
  // 187 (multi) + 134 (seven singles)
  CHECK(compute(mixed, 6) == 321);
}

TEST_CASE("barrel_tile_cycles: contexts x busiest context plus supervisor, the rule tile_compute_cycles applies",
          "[sim][cost][formula]") {
  CHECK(barrel_tile_cycles(30, 6, 7) == 187);
  CHECK(barrel_tile_cycles(0, 6, 5) == 5);
  CHECK(barrel_tile_cycles(9, 4, 0) == compute({vertex({9, 1, 1, 1}, 0)}, 4));
}

TEST_CASE("tile_compute_cycles: rejects worker cycle lists of the wrong size and negative costs", "[sim][cost][formula]") {
  CHECK_THROWS_AS(compute({vertex({}, 1)}, 6), std::logic_error);
  CHECK_THROWS_AS(compute({vertex({1, 2}, 1)}, 6), std::logic_error);
  CHECK_THROWS_AS(compute({vertex({1, 1, 1, 1, 1, 1, 1}, 1)}, 6), std::logic_error);
  CHECK_THROWS_WITH(compute({vertex({1, 2, 3}, 1)}, 6), Catch::Contains("3 worker cycle entries"));
  CHECK_THROWS_AS(compute({vertex({-1}, 1)}, 6), std::logic_error);
  CHECK_THROWS_AS(compute({vertex({1}, -1)}, 6), std::logic_error);
  CHECK_THROWS_AS(compute({vertex({1}, 1)}, 0), std::logic_error);
}

TEST_CASE("tile_exchange_cycles: the busier direction at the per-tile rate, rounded up", "[sim][cost][formula]") {
  CHECK(tile_exchange_cycles(100, 40.0, 4.0) == 25);
  CHECK(tile_exchange_cycles(40, 100.0, 4.0) == 25);
  CHECK(tile_exchange_cycles(10, 0.0, 4.0) == 3);  // 2.5 rounds up
  CHECK(tile_exchange_cycles(0, 17.5, 4.0) == 5);  // 4.375 rounds up
  CHECK(tile_exchange_cycles(0, 0.0, 4.0) == 0);
  CHECK(tile_exchange_cycles(64, 0.0, 8.0) == 8);
  // A supertile pair that both receive 64 bytes counts 32 each: 8 cycles, not 16
  CHECK(tile_exchange_cycles(0, 64.0 / 2, 4.0) == 8);
}

TEST_CASE("tile_exchange_cycles: rejects a non-positive rate and negative bytes", "[sim][cost][formula]") {
  CHECK_THROWS_AS(tile_exchange_cycles(1, 0.0, 0.0), std::logic_error);
  CHECK_THROWS_AS(tile_exchange_cycles(1, 0.0, -4.0), std::logic_error);
  CHECK_THROWS_AS(tile_exchange_cycles(-1, 0.0, 4.0), std::logic_error);
  CHECK_THROWS_AS(tile_exchange_cycles(0, -1.0, 4.0), std::logic_error);
}
