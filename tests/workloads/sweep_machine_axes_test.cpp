// A sweep backend's machine axes (workloads/sweep_machine_axes.hpp): crossed into one what-if backend
// per combination, named in a fixed order, and their errors naming the file and JSON path.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "workloads/sweep_spec.hpp"

using namespace tilesim;
using namespace tilesim::analysis;
using Catch::Matchers::Contains;

namespace {

nlohmann::json machine_sweep(const nlohmann::json& backend) {
  return {{"name", "m"},
          {"ops", {"gather"}},
          {"sizes", {{"num_inputs", {64}}, {"num_features", {16, 32}}, {"num_outputs", {128}}}},
          {"backends", {"cpu", backend}}};
}

std::string machine_sweep_error(const nlohmann::json& backend) {
  try {
    parse_sweep(machine_sweep(backend), "m.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("machine axes: one what-if backend per combination, figures in path order, the last fastest", "[sweep][unit]") {
  const nlohmann::json backend = nlohmann::json::parse(R"({"backend": "gpu-model:a100-40gb:eager", "sizes": {"num_features": [32]},
      "machine": {"chip.sm_count": [54, 108], "chip.hbm_bytes_per_s": {"scale": [0.5, 2]}}})");
  const SweepSpec s = parse_sweep(machine_sweep(backend), "m.json");
  REQUIRE(s.backends.size() == 5);
  CHECK(s.backends[0].name == "cpu");
  CHECK(s.backends[1].name == "gpu-model:a100-40gb{chip.hbm_bytes_per_s*=0.5;chip.sm_count=54}:eager");
  CHECK(s.backends[2].name == "gpu-model:a100-40gb{chip.hbm_bytes_per_s*=0.5;chip.sm_count=108}:eager");
  CHECK(s.backends[3].name == "gpu-model:a100-40gb{chip.hbm_bytes_per_s*=2;chip.sm_count=54}:eager");
  CHECK(s.backends[4].name == "gpu-model:a100-40gb{chip.hbm_bytes_per_s*=2;chip.sm_count=108}:eager");
  for (std::size_t b = 1; b < 5; ++b) {
    CHECK(s.backends[b].num_features == std::vector<std::int64_t>{32});  // each keeps the entry's subset
    CHECK(s.backends[b].json_path == "backends[1].machine");
  }
  // A range of figure values, geometric and arithmetic, and a name without a mode.
  const SweepSpec r = parse_sweep(machine_sweep(nlohmann::json::parse(
                                      R"({"backend": "ipu:bow", "machine": {"chip.tile_clock_hz": {"from": 1e9, "to": 4e9, "times": 2}}})")),
                                  "m.json");
  REQUIRE(r.backends.size() == 4);
  CHECK(r.backends[1].name == "ipu:bow{chip.tile_clock_hz=1000000000}");
  CHECK(r.backends[3].name == "ipu:bow{chip.tile_clock_hz=4000000000}");
  const SweepSpec a = parse_sweep(machine_sweep(nlohmann::json::parse(
                                      R"({"backend": "ipu:bow:static", "machine": {"chip.sync_cycles": {"from": 100, "to": 300, "step": 100}}})")),
                                  "m.json");
  REQUIRE(a.backends.size() == 4);
  CHECK(a.backends[2].name == "ipu:bow{chip.sync_cycles=200}:static");
  // The resolved sweep (sweep.json) lists the machines, so a resume compares them.
  CHECK_THAT(to_json(a).dump(), Contains("ipu:bow{chip.sync_cycles=300}:static"));
}

TEST_CASE("machine axis errors name the file, the JSON path, what was expected and found", "[sweep][unit]") {
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu", "machine": {"chip.num_tiles": [736]}})")),
             Contains("m.json: backends[1].backend: expected a backend that names its machine"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {}})")),
             Contains("m.json: backends[1].machine: expected an object of machine figures"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {"chip num tiles": [1]}})")),
             Contains("backends[1].machine[\"chip num tiles\"]: expected a figure's JSON path"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {"chip.num_tiles": []}})")),
             Contains("backends[1].machine[\"chip.num_tiles\"]: expected a non-empty array of numbers"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {"chip.num_tiles": [736, 736]}})")),
             Contains("machine[\"chip.num_tiles\"][1]: expected each value once, found 736 twice"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {"chip.num_tiles": ["736"]}})")),
             Contains("machine[\"chip.num_tiles\"][0]: expected a finite number, found \"736\""));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {"chip.num_tiles": {"scale": [1], "x": 2}}})")),
             Contains("machine[\"chip.num_tiles\"].x: expected one of the known keys"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {"chip.num_tiles": {"from": 2, "to": 1, "step": 1}}})")),
             Contains("machine[\"chip.num_tiles\"].to: expected a number >= from (2), found 1"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(R"({"backend": "ipu:bow", "machine": {"chip.num_tiles": {"from": 0, "to": 8, "times": 2}}})")),
             Contains("machine[\"chip.num_tiles\"].from: expected a number above 0 for a geometric range"));
  CHECK_THAT(machine_sweep_error(nlohmann::json::parse(
                 R"({"backend": "ipu:bow", "machine": {"chip.num_tiles": {"from": 1, "to": 200, "step": 1}, "chip.sync_cycles": {"from": 1, "to": 200, "step": 1}}})")),
             Contains("backends[1].machine: expected at most 10000 machines (the axes crossed), found more"));
}
