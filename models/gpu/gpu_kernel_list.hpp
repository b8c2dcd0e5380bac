#pragma once
// Internal to models/gpu: the kernel list every op's prediction is built from. A kernel costs
// launch latency + the largest of its memory and rate terms (+ contention); the op's limiter is the
// kind of term that cost it most over all its kernels.
#include <map>
#include <string>
#include <vector>

#include "ir/dtype.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"

namespace tilesim::gpu {

// A rate-limited term of a kernel: its time and what it is called in `limiter`.
struct Term {
  const char* what;
  double time_s;
};

// Builds the kernel list of one op and keeps, per limiter name, the time each kind of term
// contributed, so the op's limiter is the term that cost it most overall.
class KernelList {
 public:
  KernelList(const GpuMachine& m, double hit) : m_(m), hit_(hit) {}

  // traffic_bytes: every byte the kernel reads or writes. rates: its element-rate and FLOP terms.
  // serial_s: a chain that no parallelism hides (same-address updates); it bounds the work from below.
  // contention_s: retries of colliding updates, which cost throughput on top of the work.
  void add(const std::string& name, double traffic_bytes, std::vector<Term> rates, double serial_s = 0,
           double contention_s = 0) {
    add_launched(name, 1.0, traffic_bytes, std::move(rates), serial_s, contention_s);
  }

  // A kernel whose launch latencies the caller counts: a multi-tensor kernel that PyTorch launches
  // `launches` times for a whole list of tensors, or 0 times for an op whose tensors ride in launches
  // another op of the list already pays for (its bytes still cost their memory time).
  void add_launched(const std::string& name, double launches, double traffic_bytes, std::vector<Term> rates,
                    double serial_s = 0, double contention_s = 0) {
    const auto& c = m_.calibration;
    const double launch_s = launches * c.launch_latency_s;
    const double l2_s = traffic_bytes * hit_ / (m_.l2_bytes_per_s * c.l2_efficiency);
    const double dram_s = traffic_bytes * (1.0 - hit_) / (m_.hbm_bytes_per_s * c.dram_efficiency);
    // The memory term is the sum of its L2 and DRAM parts (a byte goes one way or the other); it is
    // named after the larger part.
    Term work{l2_s >= dram_s ? "l2" : "dram", l2_s + dram_s};
    for (const Term& t : rates) {
      if (t.time_s > work.time_s) work = t;
    }
    if (serial_s > work.time_s) work = Term{"contention", serial_s};

    GpuKernel k;
    k.name = name;
    k.time_s = launch_s + work.time_s + contention_s;
    k.hbm_bytes = traffic_bytes * (1.0 - hit_);
    k.l2_bytes = traffic_bytes;
    k.limiter = launch_s >= work.time_s && launch_s >= contention_s ? "launch"
                : contention_s > work.time_s                        ? "contention"
                                                                    : work.what;
    share_["launch"] += launch_s;
    share_[work.what] += work.time_s;
    share_["contention"] += contention_s;
    kernels_.push_back(std::move(k));
  }

  void finish(GpuPrediction& p) const {
    p.kernels = kernels_;
    p.kernel_s = 0;
    p.hbm_bytes = 0;
    p.l2_bytes = 0;
    for (const auto& k : kernels_) {
      p.kernel_s += k.time_s;
      p.hbm_bytes += k.hbm_bytes;
      p.l2_bytes += k.l2_bytes;
    }
    double most = -1;
    for (const auto& [what, t] : share_) {
      if (t > most) {
        most = t;
        p.limiter = what;
      }
    }
  }

 private:
  const GpuMachine& m_;
  double hit_;
  std::vector<GpuKernel> kernels_;
  std::map<std::string, double> share_;
};

// The vendor's dense float32 peak on the CUDA cores, the rate of every non-GEMM kernel's arithmetic
// for any value dtype (ATen computes half tensors' elementwise and scatter arithmetic in float32).
double peak_flops_per_s(DType dtype, const GpuMachine& m);
// The peak of a matrix product's multiply-adds in `dtype`, as cuBLAS runs PyTorch's mm: float32 on the
// CUDA cores (torch.backends.cuda.matmul.allow_tf32 is False by default since 1.12), float16 and
// bfloat16 on the tensor cores, accumulating in float32 (the machine file's fp16 and bf16 peaks).
double gemm_peak_flops_per_s(DType dtype, const GpuMachine& m);

// ATen's scatter_add_ over `rows` messages of `features` values into out_elements outputs (an index
// of torch int64, expanded over the features and read once per row): one fp32 atomicAdd per message
// element, output lines read and written back once each (at most once per message), and the chain of
// updates to one address serialised (updates_per_address of them).
void add_scatter_add_kernel(KernelList& ks, const GpuMachine& m, DType dtype, double rows, double features,
                            double out_elements, double updates_per_address);

// What predict_op needs from an op's model beside its kernels: the eager host floor, and whether the
// host overlaps the GPU (back-to-back calls: max of the two) or waits for it (a device-to-host copy
// inside the call: host + kernels).
struct HostSide {
  double floor_s = 0;
  bool overlaps_device = true;
};

// The dense products (gpu_gemm_model.cpp): fill p's call, flops, footprint, hit fraction and kernels.
// model_matmul covers the transposed products of a backward pass too (the same GEMM).
HostSide model_matmul(const Op& op, const GpuMachine& m, GpuPrediction& p);
HostSide model_segment_matmul(const Op& op, const GpuMachine& m, GpuPrediction& p);

// The backward and loss kinds of a training step (gpu_training_model.cpp).
HostSide model_unary_grad(const Op& op, const GpuMachine& m, GpuPrediction& p);
HostSide model_sum_to(const Op& op, const GpuMachine& m, GpuPrediction& p);
HostSide model_loss(const Op& op, const GpuMachine& m, GpuPrediction& p);
HostSide model_loss_grad(const Op& op, const GpuMachine& m, GpuPrediction& p);

// One parameter's share of torch.optim's foreach update (gpu_optimizer_model.cpp).
HostSide model_optimizer_step(const Op& op, const ForeachStep& step, const GpuMachine& m, GpuPrediction& p);

}  // namespace tilesim::gpu
