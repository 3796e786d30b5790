// Tail latency and robustness over SSH to the sandbox (sshd + SLURM running):
//  1. latency: a writer appends one step record every 100 ms (200 in all); the poller follows with
//     the live schedule (1 s while the run writes); for each point, the time from its write to its
//     arrival in the series store; p50 and p95. Also bytes read per poll against the new bytes.
//  2. chaos: 100 cuts of the SSH session while 10,000 lines are written; the mirror must equal the
//     remote file byte for byte. The peer for (1) is the same loop polling every 5 s, the interval
//     TensorBoard and W&B users describe.
//
//   tests/sandbox/slurm-sandbox.sh start; tests/sandbox/ssh-sandbox.sh start; ninja -C build bench-tail
#include "runs/pollscheduler.h"
#include "tailharness.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>

#include <algorithm>
#include <cstdio>

using namespace scaledesk;
using namespace scaledesk::test;

namespace {
double nowS() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

struct Latency {
    double p50 = 0, p95 = 0, max = 0;
    int points = 0, polls = 0;
    quint64 read = 0, grown = 0;
};

Latency follow(int writes, int gapMs, int fixedIntervalMs)
{
    TailHarness h;
    const QString why = h.setUp();
    if (!why.isEmpty()) {
        std::fprintf(stderr, "bench_tail: %s\n", qPrintable(why));
        std::exit(1);
    }
    h.startWriter(writes, gapMs * 1000);
    PollScheduler schedule;
    QElapsedTimer clock;
    clock.start();
    std::vector<double> lat;
    Latency out;
    std::size_t seen = 0;
    while (true) {
        schedule.started(clock.elapsed());
        auto r = h.poll();
        ++out.polls;
        if (r) {
            out.read += r->bytesRead;
            out.grown += r->bytesNew;
        }
        const auto news = h.reader->read({});
        const double arrived = nowS();
        const Series* loss = h.reader->metrics().series(QStringLiteral("step/loss"));
        for (; loss && seen < loss->size(); ++seen) lat.push_back(arrived - loss->times()[seen]);
        if (seen >= std::size_t(writes)) break;
        schedule.finished(clock.elapsed(), PollScheduler::Outcome{bool(r), news.newPoints > 0, false, true, true});
        const qint64 wait = fixedIntervalMs > 0 ? fixedIntervalMs : qMax<qint64>(0, schedule.nextAt() - clock.elapsed());
        QThread::msleep(static_cast<unsigned long>(wait));
    }
    std::sort(lat.begin(), lat.end());
    out.points = int(lat.size());
    out.p50 = lat[lat.size() / 2];
    out.p95 = lat[std::min(lat.size() - 1, std::size_t(double(lat.size()) * 0.95))];
    out.max = lat.back();
    return out;
}
}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const Latency live = follow(200, 100, 0);
    std::printf("tail latency, live schedule (1 s while writing): p50 %.3f s, p95 %.3f s, max %.3f s over %d points, %d polls\n", live.p50,
                live.p95, live.max, live.points, live.polls);
    std::printf("  bytes read %llu for %llu new bytes: %.0f bytes of overhead per poll (2 files followed)\n", (unsigned long long)live.read,
                (unsigned long long)live.grown, double(live.read - live.grown) / live.polls);
    const Latency slow = follow(200, 100, 5000);
    std::printf("peer, fixed 5 s interval: p50 %.3f s, p95 %.3f s; ratio of p95 (peer / live) %.1fx\n", slow.p50, slow.p95,
                slow.p95 / live.p95);

    // Chaos: 100 cuts while 10,000 lines are written.
    TailHarness h;
    if (const QString why = h.setUp(); !why.isEmpty()) return 1;
    const int lines = 10000, cuts = 100;
    h.startWriter(lines, 3000);
    std::atomic<int> cut{0};
    std::thread killer([&] {
        for (int i = 0; i < cuts; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(250 + 37 * (i % 5)));
            h.killSession();
            ++cut;
        }
    });
    int polls = 0, failed = 0;
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 600000) {
        auto r = h.poll();
        ++polls;
        failed += r ? 0 : 1;
        if (h.written == lines && cut == cuts &&
            h.mirrorBytes(QStringLiteral("metrics.jsonl")) == h.remoteBytes(QStringLiteral("metrics.jsonl")))
            break;
        QThread::msleep(100);
    }
    killer.join();
    const bool equal = h.mirrorBytes(QStringLiteral("metrics.jsonl")) == h.remoteBytes(QStringLiteral("metrics.jsonl")) &&
        h.mirrorBytes(QStringLiteral("slurm-%1.out").arg(h.jobId)) == h.remoteBytes(QStringLiteral("slurm-%1.out").arg(h.jobId));
    h.reader->read({});
    const Series* loss = h.reader->metrics().series(QStringLiteral("step/loss"));
    std::printf("chaos: %d cuts during %d lines, %d polls (%d failed), %llu connects; mirror %s the remote files; %zu steps parsed, %lld "
                "warnings\n",
                cut.load(), lines, polls, failed, (unsigned long long)h.ssh->stats().connects, equal ? "EQUALS" : "DIFFERS FROM",
                loss ? loss->size() : std::size_t(0), (long long)h.reader->metrics().warnings.size());
    return equal ? 0 : 1;
}
