#pragma once

#include "amp/ampmode.h"
#include "run/config.h"

#include <c10/core/Device.h>

#include <cstdint>

namespace scaledesk::train {

/// `scaledesk-train bench-step`: the throughput of a config's training step alone, as the trainer
/// runs it (TrainStep: autocast, the fp16 loss scale, backward, fused Adam) on one fixed random
/// batch that stays on the device, so neither data loading nor the host's copies are in it: the
/// number to set against a framework's own step on the same model (tests/gpu/pytorch_step_peer.py).
struct BenchStepOptions {
    TrainConfig config;
    int64_t localBatch = 1;
    AmpMode amp = AmpMode::None;
    c10::Device device{c10::DeviceType::CPU};
    int steps = 20;  ///< timed steps
    int warmup = 5;  ///< untimed steps before them (cuDNN benchmark mode picks its kernels here)
    uint64_t seed = 1;
};

/// Runs the steps and prints one JSON line: {"kind": "bench_step", "config", "parameters",
/// "local_batch", "amp_mode", "device", "gpu_name", "steps", "seconds", "samples_per_s",
/// "step_s_median", "step_s_min", "loss_first", "loss_last", "peak_mem_mib"}.
void runBenchStep(const BenchStepOptions& options);

}  // namespace scaledesk::train
