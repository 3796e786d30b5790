// The planner tests' synthetic inputs: a 1-rank run, a 2-rank plan's options, an α–β ring, a
// bench-comm timing line and exact ring timings (tst_planner, tst_planfit, tst_planuncertainty,
// tst_plangaps, tst_planlimits).
#pragma once

#include "analysis/planner.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace scaledesk::planfixture {
// An allreduce-equivalent α–β (n ranks, S bytes): 2(n−1)α + 2(n−1)/n · S/β.
inline double ring(double alpha, double beta, int n, double bytes) { return 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / beta; }

inline QByteArray line(const char* kind, double bytes, double seconds)
{
    return QStringLiteral("{\"kind\":\"%1\",\"backend\":\"mpi\",\"ranks\":2,\"nodes\":1,\"bytes\":%2,\"seconds\":%3,\"min_s\":%3}\n")
        .arg(QLatin1String(kind))
        .arg(bytes, 0, 'g', 17)
        .arg(seconds, 0, 'g', 17)
        .toUtf8();
}
// Allreduce timings at 2 ranks of 1 MB and 40 MB, exactly on a ring of α = 0.1 ms, β = 2 GB/s: the
// allreduce fit leaves no residual.
inline QList<CommSample> exactRingTimings()
{
    QList<CommSample> bench;
    for (double bytes : {1e6, 4e7}) {
        CommSample c;
        c.bytes = bytes;
        c.seconds = ring(1e-4, 2e9, 2, bytes);
        bench << c;
    }
    return bench;
}
// Φ⁻¹(0.95): the 90 % range's z.
inline constexpr double kZ90 = 1.6448536269514722;

// A 1-rank ddp run: 0.2 s of compute (half of it backward) and 0.01 s of data wait per step at a
// local batch of 2, 64 samples per epoch, epochs 1 % apart, 40 MB of gradients.
inline PlanRunInput oneRankRun()
{
    PlanRunInput r;
    r.runId = QStringLiteral("one-rank");
    r.strategy = QStringLiteral("ddp");
    r.localBatch = 2;
    r.samplesPerEpoch = 64;
    r.computeS = 0.2;
    r.backwardS = 0.1;
    r.dataS = 0.01;
    r.epochS = 6.72;
    r.epochCv = 0.01;
    r.gradientBytes = 40e6;
    r.bucketBytes = 25.0 * (1 << 20);
    r.steps = 10;
    return r;
}
// A plan of one strategy at 2 ranks on one node.
inline PlanOptions twoRanksOnOneNode(const QString& strategy)
{
    PlanOptions o;
    o.nodes = {1};
    o.ranksPerNode = 2;
    o.strategies = {strategy};
    return o;
}
}  // namespace scaledesk::planfixture
