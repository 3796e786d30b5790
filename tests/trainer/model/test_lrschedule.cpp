#include "model/lrschedule.h"

#include <gtest/gtest.h>

#include <cmath>

using scaledesk::train::LrScaling;
using scaledesk::train::LrSchedule;

namespace {
// base_bs 64, start 2e-4, end 0, warm-up 128, sqrt scaling (spec §4).
LrSchedule nersc(int64_t global, int64_t epochs, int64_t nsamples = 65536)
{
    return LrSchedule{LrScaling::Sqrt, 2.0e-4, 0.0, 128, epochs * (nsamples / global), global, 64};
}
}  // namespace

TEST(LrSchedule, BaseMatchesTheExampleLog)
{
    const LrSchedule s = nersc(64, 10);
    EXPECT_EQ(s.totSteps, 10240);
    EXPECT_NEAR(s.at(1024), 1.951057e-4, 5e-11);
    EXPECT_NEAR(s.at(2048), 1.8090e-4, 5e-9);
    EXPECT_NEAR(s.at(5120), 1.0000e-4, 5e-9);
    EXPECT_NEAR(s.at(10240), 0.0, 1e-18);
    EXPECT_NEAR(s.at(1), 2.0e-4, 1e-10);  // cosine from step 1, no warm-up at G = B
    EXPECT_LT(s.at(1), 2.0e-4);
}

TEST(LrSchedule, Bs64OptDaliStepsMatchTheLog)
{
    const LrSchedule s = nersc(64, 10);
    EXPECT_NEAR(s.at(1023), 1.951151e-4, 5e-11);
    EXPECT_NEAR(s.at(10239), 4.7e-12, 1e-13);
}

struct TableRow {
    const char* name;
    int64_t global;
    int64_t epochs;
    int64_t totSteps;
    double initLr;
    double first;
    double last;
};

class LrTable : public ::testing::TestWithParam<TableRow> {};

// The derived-numbers table of spec §4, every row.
TEST_P(LrTable, MatchesSpecRow)
{
    const TableRow row = GetParam();
    const LrSchedule s = nersc(row.global, row.epochs);
    EXPECT_EQ(s.totSteps, row.totSteps) << row.name;
    EXPECT_NEAR(s.initLr(), row.initLr, row.initLr * 1e-3) << row.name;
    EXPECT_NEAR(s.at(1), row.first, row.first * 6e-3 + 1e-12) << row.name;
    EXPECT_NEAR(s.at(s.totSteps), row.last, row.last * 2e-2 + 1e-12) << row.name;
}

INSTANTIATE_TEST_SUITE_P(Spec, LrTable,
                         ::testing::Values(TableRow{"base", 64, 10, 10240, 2.0e-4, 2.0e-4, 0.0},
                                           TableRow{"bs256_opt", 256, 20, 5120, 4.0e-4, 3.13e-6, 6.2e-7},
                                           TableRow{"bs512_test", 512, 10, 1280, 5.657e-4, 4.42e-6, 1.38e-5},
                                           TableRow{"bs512_opt", 512, 40, 5120, 5.657e-4, 4.42e-6, 8.7e-7},
                                           TableRow{"bs2048_opt", 2048, 160, 5120, 1.131e-3, 8.84e-6, 1.74e-6},
                                           TableRow{"bs8192_opt", 8192, 320, 2560, 2.263e-3, 1.77e-5, 1.39e-5}),
                         [](const auto& info) {
                             std::string n = info.param.name;
                             for (auto& ch : n)
                                 if (ch == '_') ch = 'x';
                             return n;
                         });

TEST(LrSchedule, ShortUsesItsOwnSampleCount)
{
    const LrSchedule s = nersc(64, 4, 4096);
    EXPECT_EQ(s.totSteps, 256);
    EXPECT_NEAR(s.at(256), 0.0, 1e-18);
}

TEST(LrSchedule, WarmupIsLinearAndNeverZero)
{
    const LrSchedule s = nersc(512, 40);
    const double init = s.initLr();
    EXPECT_NEAR(s.at(1), init / 128.0, 1e-15);
    EXPECT_NEAR(s.at(64), init * 64.0 / 128.0, 1e-15);
    EXPECT_NEAR(s.at(127), init * 127.0 / 128.0, 1e-15);
    // At warmup_steps the cosine branch starts at its top.
    EXPECT_NEAR(s.at(128), init, 1e-15);
    // The cosine denominator is tot_steps, not tot_steps − warm-up: end_lr is never reached.
    const double pi = std::acos(-1.0);
    EXPECT_NEAR(s.at(5120), 0.5 * init * (1 + std::cos(pi * (5120.0 - 128.0) / 5120.0)), 1e-15);
    EXPECT_GT(s.at(5120), 0.0);
}

TEST(LrSchedule, ScalingRules)
{
    LrSchedule s = nersc(256, 20);
    s.scaling = LrScaling::Linear;
    EXPECT_DOUBLE_EQ(s.initLr(), 4 * 2.0e-4);
    s.scaling = LrScaling::None;
    EXPECT_DOUBLE_EQ(s.initLr(), 2.0e-4);
    // scaling none never warms up, even with G > B.
    EXPECT_NEAR(s.at(1), 0.5 * 2.0e-4 * (1 + std::cos(std::acos(-1.0) / 5120.0)), 1e-15);
}

// warmup_steps 0 means no warm-up: at G > B the cosine starts at the scaled start_lr at step 0,
// and no step divides by the zero warm-up length.
TEST(LrSchedule, ZeroWarmupStartsAtTheScaledStartLr)
{
    LrSchedule s = nersc(512, 40);
    s.warmupSteps = 0;
    const double init = s.initLr();
    ASSERT_NEAR(init, std::sqrt(8.0) * 2.0e-4, 1e-15);
    EXPECT_DOUBLE_EQ(s.at(0), init);
    const double pi = std::acos(-1.0);
    EXPECT_NEAR(s.at(1), 0.5 * init * (1 + std::cos(pi / 5120.0)), 1e-15);  // no ramp from init / warmup
    EXPECT_GT(s.at(1), 0.99 * init);
    EXPECT_NEAR(s.at(2560), 0.5 * init, 1e-15);
    EXPECT_NEAR(s.at(5120), 0.0, 1e-18);
    for (int64_t step : {0, 1, 2, 100, 5119, 5120}) EXPECT_TRUE(std::isfinite(s.at(step))) << step;
    // The same at G = B, where the original never warms up anyway.
    LrSchedule single = nersc(64, 10);
    single.warmupSteps = 0;
    EXPECT_DOUBLE_EQ(single.at(0), 2.0e-4);
    EXPECT_DOUBLE_EQ(single.at(1), nersc(64, 10).at(1));
}
