#pragma once

#include <array>

namespace at {
class Tensor;
}

namespace scaledesk::train {

/// One entry of the NERSC RandomRotator table (spec §2.4): output spatial axis i comes from
/// input axis perm[i]; then the listed output axes are reversed.
struct SpatialTransform {
    std::array<int, 3> perm;
    std::array<bool, 3> flip;
    /// Determinant of the 3×3 signed permutation matrix (+1 proper, −1 improper).
    int determinant() const;
};

/// The 24 entries, indexed by r − 1 for r in 1…24 as the original draws them.
const std::array<SpatialTransform, 24>& rotatorTable();

/// Applies `t` to the three trailing spatial dims of a (C, A0, A1, A2) tensor and returns a
/// new tensor (a permuted view, flipped); channels are untouched.
at::Tensor applyTransform(const at::Tensor& sample, const SpatialTransform& t);

}  // namespace scaledesk::train
