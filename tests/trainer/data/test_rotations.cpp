#include "data/rotations.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <set>

using namespace scaledesk::train;

namespace {
// The signed permutation matrix M with out[i] = ±in[perm[i]], i.e. where each unit vector goes.
std::array<std::array<int, 3>, 3> matrixOf(const SpatialTransform& t)
{
    std::array<std::array<int, 3>, 3> m{};
    for (int i = 0; i < 3; ++i) m[i][t.perm[i]] = t.flip[i] ? -1 : 1;
    return m;
}
}  // namespace

TEST(Rotations, TwentyFourDistinctEntries)
{
    std::set<std::array<std::array<int, 3>, 3>> seen;
    for (const auto& t : rotatorTable()) seen.insert(matrixOf(t));
    EXPECT_EQ(seen.size(), 24u);
}

TEST(Rotations, SixteenProperAndEightImproper)
{
    int proper = 0, improper = 0;
    for (const auto& t : rotatorTable()) {
        const auto m = matrixOf(t);
        const int det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
            m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
        EXPECT_EQ(det, t.determinant());
        (det == 1 ? proper : improper)++;
    }
    EXPECT_EQ(proper, 16);
    EXPECT_EQ(improper, 8);
}

TEST(Rotations, LastEntryIsIdentity)
{
    const auto sample = torch::arange(2 * 3 * 4 * 5, torch::kFloat).view({2, 3, 4, 5});
    EXPECT_TRUE(torch::equal(applyTransform(sample, rotatorTable()[23]), sample));
}

// Every entry moves voxel (a0, a1, a2) to the position the table says, for every channel alike.
TEST(Rotations, ApplyMatchesTheTableVoxelByVoxel)
{
    const int64_t n = 4;
    const auto sample = torch::rand({3, n, n, n});
    for (std::size_t r = 0; r < 24; ++r) {
        const SpatialTransform& t = rotatorTable()[r];
        const auto out = applyTransform(sample, t);
        ASSERT_EQ(out.sizes(), sample.sizes());
        for (int64_t o0 = 0; o0 < n; ++o0)
            for (int64_t o1 = 0; o1 < n; ++o1)
                for (int64_t o2 = 0; o2 < n; ++o2) {
                    const int64_t o[3] = {o0, o1, o2};
                    int64_t in[3];
                    for (int i = 0; i < 3; ++i) in[t.perm[i]] = t.flip[i] ? n - 1 - o[i] : o[i];
                    for (int64_t c = 0; c < 3; ++c)
                        ASSERT_EQ(out[c][o0][o1][o2].item<float>(), sample[c][in[0]][in[1]][in[2]].item<float>()) << "entry " << r + 1;
                }
    }
}

TEST(Rotations, NonCubicCropsPermuteTheirSides)
{
    const auto sample = torch::zeros({1, 2, 3, 4});
    const auto out = applyTransform(sample, rotatorTable()[15]);  // r = 16: perm (1, 2, 0)
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{1, 3, 4, 2}));
}
