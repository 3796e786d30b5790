#pragma once

#include <cstdint>
#include <string>

namespace scaledesk::train {

/// Options of `scaledesk-train make-data`.
struct MakeDataOptions {
    std::string outDir;
    int64_t trainBox = 128;
    int64_t valBox = 96;
    uint64_t seed = 1;
    double correlationLength = 4.0;  ///< voxels; smoothness of the random fields
};

/// Writes `train.h5` and `valid.h5` in the NERSC layout (Nbody (4,L,L,L), Hydro (5,L,L,L),
/// float32): periodic Gaussian random fields smoothed in Fourier space for the inputs, and
/// targets that are a fixed pointwise function of them, so the mapping is learnable and
/// commutes with every axis permutation and flip of the augmentation. Values lie in [−1, 1].
/// Each file is written under a temporary name and renamed when complete.
void makeData(const MakeDataOptions& options);

}  // namespace scaledesk::train
