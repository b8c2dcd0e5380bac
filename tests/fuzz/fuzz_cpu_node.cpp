// Fuzz target: the described CPU node and cluster readers of the cpu-model backend
// (models/cpu/node/cpu_node.hpp, models/cpu/cluster/cpu_cluster.hpp): a file with a "cluster" section is
// read as a cluster (which reads the node it names, a shipped name or a path relative to it), any other
// as a node ("base" included). An accepted node's derived peaks must be positive and finite, and its
// provenance hashes as reports do.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "models/cpu/cluster/cpu_cluster.hpp"
#include "models/cpu/node/cpu_node.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim::cpu_model;
  const std::string path = tilesim::fuzz::write_scratch_file("cpu_node.json", data, size);
  return tilesim::fuzz::read_expecting_input_errors(path, [&] {
    if (is_cpu_cluster_file(path)) {
      const CpuCluster c = load_cpu_cluster(path);
      if (!(c.num_nodes >= 1 && c.fabric.bytes_per_s_per_node > 0 && c.fabric.latency_s >= 0))
        tilesim::fuzz::finding("an accepted cluster has a figure out of its range");
      (void)c.provenance.content_hash();
      return;
    }
    const CpuNode n = load_cpu_node(path);
    for (const double v : {n.stream_bytes_per_s(), n.fp32_vector_flops_per_s(), n.fp16_vector_flops_per_s(), n.bf16_amx_flops_per_s()})
      if (!(std::isfinite(v) && v > 0)) tilesim::fuzz::finding("an accepted node has a derived peak that is not positive and finite");
    (void)n.provenance.content_hash();
  });
}
