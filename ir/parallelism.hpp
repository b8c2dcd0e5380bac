#pragma once
// The forms of multi-chip parallelism a workload's "parallel" section names and the systems' models
// cost (workloads/parallel/, models/*/system): here, below both, so that a model need not include the
// workload language to know them.
#include <string>

namespace tilesim {

// How the replicas' gradients are summed each step.
enum class AllreduceAlgorithm {
  ring,          // one ring over every replica: reduce-scatter then all-gather, 2(R-1) steps of bytes/R
  hierarchical,  // reduce-scatter inside each machine (Bow-2000, DGX node, CPU node), a ring all-reduce of
                 // the 1/k shards across machines, all-gather inside each machine (Graphcore's GCL form)
};
std::string to_string(AllreduceAlgorithm algorithm);  // "ring", "hierarchical"

enum class PipelineSchedule {
  gpipe,        // every micro-batch's forward, then every backward (activations of all M kept)
  one_f_one_b,  // "1f1b": after S-1 warm-up forwards, one forward and one backward in turn (at most S kept)
};
std::string to_string(PipelineSchedule schedule);  // "gpipe", "1f1b"

}  // namespace tilesim
