#pragma once

#include "model/unet.h"

#include <torch/optim/adam.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace scaledesk::train {

class CheckpointError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Loop position and the settings a resume must match.
struct CheckpointState {
    int64_t epoch = 0;                            ///< 0-based epoch to continue in
    int64_t batchInEpoch = 0;                     ///< batches of that epoch already done
    int64_t iters = 0;                            ///< global step count so far
    double epochLossSum = 0.0;                    ///< sum of this epoch's step losses so far (rank 0's mean needs it)
    std::map<std::string, std::string> settings;  ///< keys that must match on resume
    double lossScale = 0.0;                       ///< fp16: the loss scale reached (0: the run has none)
    int64_t lossScaleGrowth = 0;                  ///< fp16: clean steps since the scale last changed
};

/// Writes model, Adam state and loop position to `path` atomically (temporary name, then rename),
/// so a crash never leaves a partial checkpoint.
void saveCheckpoint(const std::string& path, UNet& model, torch::optim::Adam& optimizer, const CheckpointState& state);

/// Loads a checkpoint into `model` and `optimizer` (onto the model's device). Throws CheckpointError naming the file when it
/// is corrupt, or naming every setting that differs from `expected`.
CheckpointState loadCheckpoint(const std::string& path, UNet& model, torch::optim::Adam& optimizer,
                               const std::map<std::string, std::string>& expected);

}  // namespace scaledesk::train
