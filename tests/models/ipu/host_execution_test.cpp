// PopTorch's execution model of an epoch (models/ipu/host_execution): host calls per device iterations,
// the host link shared by the IPUs behind it, overlapped or serial, the stream copies, synthetic data,
// the epoch's sum; and the machine file's "host" section (its figures, sources and strict keys). Every
// expectation is derived from the shipped figures, none written down here.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "models/ipu/host_execution.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using Catch::Matchers::Contains;

namespace {

const HostFigures& shipped_bow_host() {
  static const IpuMachine machine = load_ipu_machine("bow");
  REQUIRE(machine.host.has_value());
  return *machine.host;
}

// An epoch of 100 micro-batches of 1 MB on one device, 1 ms of compute each, one per step.
EpochDriving host_exec_epoch() {
  EpochDriving run;
  run.micro_batches = 100;
  run.device_epoch_s = 100 * 1e-3;
  run.input_bytes_per_micro_batch = 1 << 20;
  return run;
}

}  // namespace

TEST_CASE("host execution: the shipped Bow states every host figure with a source, a system inherits it", "[ipu][host][unit]") {
  const IpuMachine bow = load_ipu_machine("bow");
  REQUIRE(bow.host.has_value());
  for (const char* key : {"host_call_s", "host_link_bits_per_s", "ipus_per_host_link", "stream_copy_bits_per_s", "epoch_fixed_s"}) {
    INFO(key);
    REQUIRE(bow.provenance.has(std::string("host.") + key));
    CHECK_FALSE(bow.provenance.figure(std::string("host.") + key).source.empty());
  }
  // Stated in bits per second, used in bytes.
  CHECK(bow.host->host_link_bytes_per_s * 8 == Approx(bow.provenance.figure("host.host_link_bits_per_s").value.get<double>()));
  CHECK(bow.host->stream_copy_bytes_per_s * 8 == Approx(bow.provenance.figure("host.stream_copy_bits_per_s").value.get<double>()));
  // A Pod's IPUs are the chip file's: the same host figures.
  const IpuMachine pod = load_ipu_machine("pod16");
  REQUIRE(pod.host.has_value());
  CHECK(pod.host->host_call_s == bow.host->host_call_s);
  CHECK(pod.host->ipus_per_host_link == bow.host->ipus_per_host_link);
  CHECK(pod.provenance.has("host.host_link_bits_per_s"));
  // A what-if machine sets a host figure like any other.
  const IpuMachine slow = load_ipu_machine("bow{host.host_call_s=0.25}");
  REQUIRE(slow.host.has_value());
  CHECK(slow.host->host_call_s == 0.25);
}

TEST_CASE("host execution: the host section's keys are checked like every other section's", "[ipu][host][unit]") {
  nlohmann::json doc = nlohmann::json::parse(tilesim_test::slurp(load_ipu_machine("bow").file));
  doc["host"]["host_calls_s"] = {{"value", 1}, {"source", "a typo"}};
  CHECK_THROWS_WITH(parse_ipu_machine(doc, "typo.json"), Contains("typo.json") && Contains("host_calls_s"));
  doc = nlohmann::json::parse(tilesim_test::slurp(load_ipu_machine("bow").file));
  doc["host"]["ipus_per_host_link"]["value"] = 0;
  CHECK_THROWS_WITH(parse_ipu_machine(doc, "zero.json"), Contains("host.ipus_per_host_link"));
  doc = nlohmann::json::parse(tilesim_test::slurp(load_ipu_machine("bow").file));
  doc["host"]["host_call_s"].erase("source");
  CHECK_THROWS_AS(parse_ipu_machine(doc, "unsourced.json"), InputError);
  // Without the section a machine states no execution model.
  doc = nlohmann::json::parse(tilesim_test::slurp(load_ipu_machine("bow").file));
  doc.erase("host");
  CHECK_FALSE(parse_ipu_machine(doc, "no-host.json").host.has_value());
}

TEST_CASE("host execution: a host call runs device_iterations x gradient_accumulation micro-batches", "[ipu][host][formula]") {
  const HostFigures& host = shipped_bow_host();
  EpochDriving run = host_exec_epoch();
  const EpochExecution one = poptorch_epoch(host, run);
  CHECK(one.micro_batches_per_host_call == 1);
  CHECK(one.host_calls == 100);
  run.device_iterations = 4;
  const EpochExecution four = poptorch_epoch(host, run);
  CHECK(four.micro_batches_per_host_call == 4);
  CHECK(four.host_calls == 25);
  run.gradient_accumulation = 2;
  run.micro_batches = 101;  // the last call takes the one left over
  const EpochExecution eight = poptorch_epoch(host, run);
  CHECK(eight.micro_batches_per_host_call == 8);
  CHECK(eight.host_calls == 13);
  CHECK(eight.host_calls_s == Approx(13 * host.host_call_s));
  // Fewer calls, a shorter epoch by exactly their cost.
  CHECK(four.epoch_s < one.epoch_s);
  CHECK(one.epoch_s - four.epoch_s == Approx(75 * host.host_call_s));
}

TEST_CASE("host execution: the epoch adds calls, the host link, the stream copies and the fixed cost to the steps",
          "[ipu][host][formula]") {
  const HostFigures& host = shipped_bow_host();
  const EpochDriving run = host_exec_epoch();
  const EpochExecution e = poptorch_epoch(host, run);
  const double bytes = static_cast<double>(run.input_bytes_per_micro_batch);
  CHECK(e.input_bytes_per_micro_batch == run.input_bytes_per_micro_batch);
  CHECK(e.devices_per_host_link == 1);  // one IPU in use has its link to itself
  CHECK(e.host_link_s_per_micro_batch == Approx(bytes / host.host_link_bytes_per_s));
  CHECK(e.stream_copy_s_per_micro_batch == Approx(bytes / host.stream_copy_bytes_per_s));
  // The synchronous loader: every micro-batch's transfer is serial.
  CHECK_FALSE(e.host_link_overlaps_compute);
  CHECK(e.host_link_exposed_s == Approx(100 * e.host_link_s_per_micro_batch));
  CHECK(e.stream_copy_s == Approx(100 * e.stream_copy_s_per_micro_batch));
  CHECK(e.device_epoch_s == run.device_epoch_s);
  CHECK(e.epoch_fixed_s == host.epoch_fixed_s);
  CHECK(e.epoch_s == Approx(run.device_epoch_s + 100 * host.host_call_s + e.host_link_exposed_s + e.stream_copy_s + host.epoch_fixed_s));
  // The report's object carries the terms and the old figure beside the new one.
  const nlohmann::json j = e.to_json();
  CHECK(j["host_calls_per_epoch"] == 100);
  CHECK(j["device_only_epoch_time_s"].get<double>() == run.device_epoch_s);
  CHECK(j["epoch_time_s"].get<double>() == Approx(e.epoch_s));
  CHECK(j["host_link"]["overlaps_compute"] == false);
}

TEST_CASE("host execution: an asynchronous loader hides the host link behind compute, up to the compute", "[ipu][host][formula]") {
  const HostFigures& host = shipped_bow_host();
  EpochDriving run = host_exec_epoch();
  run.asynchronous_loader = true;
  const EpochExecution hidden = poptorch_epoch(host, run);
  CHECK(hidden.host_link_overlaps_compute);
  // A link time below a micro-batch's compute and copy is hidden whole; the copy still blocks.
  REQUIRE(hidden.host_link_s_per_micro_batch < 1e-3 + hidden.stream_copy_s_per_micro_batch);
  CHECK(hidden.host_link_exposed_s == 0);
  CHECK(hidden.stream_copy_s > 0);
  // Inputs large enough that the link is the slower: the IPU waits for the difference.
  run.input_bytes_per_micro_batch = static_cast<std::int64_t>(host.host_link_bytes_per_s * 20e-3);
  const EpochExecution exposed = poptorch_epoch(host, run);
  const double per_micro_batch = exposed.host_link_s_per_micro_batch - (1e-3 + exposed.stream_copy_s_per_micro_batch);
  REQUIRE(per_micro_batch > 0);
  CHECK(exposed.host_link_exposed_s == Approx(100 * per_micro_batch));
  run.asynchronous_loader = false;
  CHECK(poptorch_epoch(host, run).host_link_exposed_s == Approx(100 * exposed.host_link_s_per_micro_batch));
}

TEST_CASE("host execution: the IPUs in use behind one link share it, synthetic data sends nothing", "[ipu][host][formula]") {
  const HostFigures& host = shipped_bow_host();
  EpochDriving run = host_exec_epoch();
  run.devices_used = 64;
  const EpochExecution pod = poptorch_epoch(host, run);
  CHECK(pod.devices_per_host_link == host.ipus_per_host_link);
  CHECK(pod.host_link_bytes_per_s == Approx(host.host_link_bytes_per_s / host.ipus_per_host_link));
  CHECK(pod.host_link_s_per_micro_batch ==
        Approx(static_cast<double>(run.input_bytes_per_micro_batch) * host.ipus_per_host_link / host.host_link_bytes_per_s));
  run.synthetic_data = true;
  const EpochExecution synthetic = poptorch_epoch(host, run);
  CHECK(synthetic.input_bytes_per_micro_batch == 0);
  CHECK(synthetic.host_link_exposed_s == 0);
  CHECK(synthetic.stream_copy_s == 0);
  // The calls remain.
  CHECK(synthetic.epoch_s == Approx(run.device_epoch_s + synthetic.host_calls_s + host.epoch_fixed_s));
}
