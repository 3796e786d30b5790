// StopAgreement (dist/smallcollectives.h): a stop request agreed by all ranks at the same step with
// an allreduce only every --stop_check_s seconds of steps. Two ranks in threads of this process,
// over a real gloo communicator on loopback.
#include "dist/comm.h"
#include "dist/smallcollectives.h"
#include "testutil.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

using namespace scaledesk::train;

namespace {

struct RankTrace {
    int64_t stoppedAfter = -1;  ///< the step after which the rank stopped (-1: ran all steps)
    int64_t checks = 0;
};

// Each rank runs up to `steps` steps of `stepSeconds(rank, step)` seconds (given, not slept),
// requesting a stop from step `requestAt(rank)` on (0: never).
std::vector<RankTrace> runRanks(double interval, int64_t steps, const std::function<double(int, int64_t)>& stepSeconds,
                                const std::function<int64_t(int)>& requestAt)
{
    const int port = scaledesk::test::nextPort();
    std::vector<RankTrace> traces(2);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < 2; ++rank)
        threads.emplace_back([&, rank] {
            DistEnv env;
            env.rank = rank;
            env.size = 2;
            env.localSize = 2;
            env.localRank = rank;
            env.masterPort = port;
            env.source = "env";
            auto comm = makeCommunicator("gloo", env, std::chrono::seconds(30), c10::Device(c10::DeviceType::CPU));
            StopAgreement agreement(interval);
            for (int64_t step = 1; step <= steps; ++step) {
                const bool requested = requestAt(rank) > 0 && step >= requestAt(rank);
                if (agreement.afterStep(*comm, requested, stepSeconds(rank, step))) {
                    traces[rank].stoppedAfter = step;
                    break;
                }
            }
            traces[rank].checks = agreement.checks();
        });
    for (auto& t : threads) t.join();
    return traces;
}

}  // namespace

TEST(StopAgreement, StepsBetweenChecksFollowTheMeanStepTime)
{
    EXPECT_EQ(StopAgreement::stepsBetweenChecks(1.0, 0.625, 5), 8);    // 0.125 s steps
    EXPECT_EQ(StopAgreement::stepsBetweenChecks(1.0, 3.0, 1), 1);      // steps longer than the interval
    EXPECT_EQ(StopAgreement::stepsBetweenChecks(0.0, 0.5, 5), 1);      // 0: after every step
    EXPECT_EQ(StopAgreement::stepsBetweenChecks(1.0, 1e-6, 1), 1000);  // bounded
    EXPECT_EQ(StopAgreement::stepsBetweenChecks(1.0, 0.0, 0), 1);      // nothing measured yet
}

// Rank 0 proposes the cadence: its 0.125 s steps and a 0.5 s interval give a check after step 1,
// then every 4 steps (5, 9, 13, …), whatever rank 1's own step times say. Rank 1 asks to stop at
// step 7; both stop after step 9, the first check after it.
TEST(StopAgreement, RanksStopTogetherAtTheFirstCheckAfterTheRequest)
{
    const auto traces = runRanks(
        0.5, 40, [](int rank, int64_t) { return rank == 0 ? 0.125 : 0.37; }, [](int rank) { return rank == 1 ? 7 : 0; });
    EXPECT_EQ(traces[0].stoppedAfter, 9);
    EXPECT_EQ(traces[1].stoppedAfter, 9);
    EXPECT_EQ(traces[0].checks, 3);  // after steps 1, 5 and 9
    EXPECT_EQ(traces[1].checks, 3);
}

// 0 checks after every step: the old behaviour, a stop at the very step of the request.
TEST(StopAgreement, ZeroIntervalChecksAfterEveryStep)
{
    const auto traces = runRanks(
        0.0, 20, [](int, int64_t) { return 0.125; }, [](int rank) { return rank == 0 ? 4 : 0; });
    EXPECT_EQ(traces[0].stoppedAfter, 4);
    EXPECT_EQ(traces[1].stoppedAfter, 4);
    EXPECT_EQ(traces[0].checks, 4);
}

// No request: the checks follow rank 0's step time as it changes (slow first steps, then fast).
TEST(StopAgreement, CadenceFollowsRankZerosStepTime)
{
    const auto traces = runRanks(
        1.0, 60, [](int rank, int64_t step) { return rank == 0 && step <= 2 ? 0.5 : 0.0625; }, [](int) { return int64_t(0); });
    EXPECT_EQ(traces[0].stoppedAfter, -1);
    EXPECT_EQ(traces[1].stoppedAfter, -1);
    // After step 1 (0.5 s: propose 2 steps), after step 3 (0.5625 s over 2: propose 3), after 6
    // (0.1875 s over 3: 16 steps), after 22, 38 and 54: six checks in 60 steps.
    EXPECT_EQ(traces[0].checks, 6);
    EXPECT_EQ(traces[1].checks, 6);
}

// One rank: no collective, the request is read after every step.
TEST(StopAgreement, OneRankReadsTheRequestEveryStep)
{
    auto comm = makeCommunicator("auto", DistEnv{}, std::chrono::seconds(5), c10::Device(c10::DeviceType::CPU));
    StopAgreement agreement(1.0);
    EXPECT_FALSE(agreement.afterStep(*comm, false, 0.01));
    EXPECT_TRUE(agreement.afterStep(*comm, true, 0.01));
    EXPECT_TRUE(agreement.now(*comm, true));
    EXPECT_EQ(agreement.checks(), 0);
}
