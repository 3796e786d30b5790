#include "data/rotations.h"

#include <ATen/ATen.h>

namespace scaledesk::train {

int SpatialTransform::determinant() const
{
    // Sign of the permutation times (−1) per flipped axis.
    int inversions = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j)
            if (perm[i] > perm[j]) ++inversions;
    int det = (inversions % 2 == 0) ? 1 : -1;
    for (bool f : flip)
        if (f) det = -det;
    return det;
}

const std::array<SpatialTransform, 24>& rotatorTable()
{
    constexpr bool T = true, F = false;
    static const std::array<SpatialTransform, 24> table = {{
        {{0, 1, 2}, {T, T, F}},  // 1
        {{0, 1, 2}, {T, F, T}},  // 2
        {{0, 1, 2}, {F, T, T}},  // 3
        {{1, 0, 2}, {T, F, F}},  // 4
        {{1, 0, 2}, {T, F, T}},  // 5
        {{1, 0, 2}, {F, T, F}},  // 6
        {{1, 0, 2}, {F, T, T}},  // 7
        {{2, 1, 0}, {T, F, F}},  // 8
        {{2, 1, 0}, {T, T, F}},  // 9
        {{2, 1, 0}, {F, F, T}},  // 10
        {{2, 1, 0}, {F, T, T}},  // 11
        {{0, 2, 1}, {F, T, F}},  // 12
        {{0, 2, 1}, {T, T, F}},  // 13
        {{0, 2, 1}, {F, F, T}},  // 14
        {{0, 2, 1}, {T, F, T}},  // 15
        {{1, 2, 0}, {T, T, F}},  // 16
        {{1, 2, 0}, {F, T, T}},  // 17
        {{1, 2, 0}, {T, F, T}},  // 18
        {{1, 2, 0}, {T, T, T}},  // 19
        {{2, 0, 1}, {T, T, F}},  // 20
        {{2, 0, 1}, {T, F, T}},  // 21
        {{2, 0, 1}, {F, T, T}},  // 22
        {{2, 0, 1}, {T, T, T}},  // 23
        {{0, 1, 2}, {F, F, F}},  // 24: identity
    }};
    return table;
}

at::Tensor applyTransform(const at::Tensor& sample, const SpatialTransform& t)
{
    at::Tensor out = sample.permute({0, 1 + t.perm[0], 1 + t.perm[1], 1 + t.perm[2]});
    std::vector<int64_t> dims;
    for (int i = 0; i < 3; ++i)
        if (t.flip[i]) dims.push_back(1 + i);
    return dims.empty() ? out : out.flip(dims);
}

}  // namespace scaledesk::train
