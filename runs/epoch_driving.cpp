#include "runs/epoch_driving.hpp"

namespace tilesim::runs {

EpochDriving loader_driving(const workloads::Workload& workload) {
  EpochDriving run;
  if (!workload.model || !workload.model->loader) return run;
  const workloads::loaders::LoaderSpec& loader = *workload.model->loader;
  run.device_iterations = loader.device_iterations;
  run.synthetic_data = loader.synthetic_data;
  run.asynchronous_loader = loader.asynchronous;
  return run;
}

}  // namespace tilesim::runs
