// Poll cost against the sandbox (sshd + SLURM): for 1, 100 and 1,000 active runs of 4 ranks each,
// the time, commands, round trips and bytes of one RunPoller poll, against a naive peer measured in
// the same run at 1 and 100 runs (per run: `squeue -j`, then `cat` of each followed file, the
// ssh + tail -f habit), plus the poller's idle CPU.
//
//   tests/sandbox/slurm-sandbox.sh start && tests/sandbox/ssh-sandbox.sh start
//   ninja -C build bench-poll              (or: build/tests/bench_poll 1000, for some sizes only)
#include "heldruns.h"
#include "remote/sshtransport.h"
#include "runs/runpoller.h"
#include "scheduler/shellquote.h"
#include "scheduler/slurmscheduler.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>
#include <sys/resource.h>

using namespace scaledesk;

namespace {
double cpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

[[noreturn]] void die(const QString& what)
{
    std::fprintf(stderr, "bench_poll: %s\n", qPrintable(what));
    std::exit(1);
}

}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    SshTransport ssh(test::sandboxSshOptions());
    SlurmScheduler slurm(ssh);
    QTemporaryDir local;
    constexpr int kRanks = 4;

    std::printf("%-6s %-22s %9s %11s %12s %12s %12s %10s %12s\n", "runs", "poll", "commands", "round trips", "bytes sent", "bytes back",
                "new bytes", "wall ms", "far side ms");
    QList<int> sizes{1, 100, 1000};
    if (argc > 1) {
        sizes.clear();
        for (int i = 1; i < argc; ++i) sizes << QByteArray(argv[i]).toInt();
    }
    for (int n : sizes) {
        auto store = RunStore::open(Workspace(local.filePath(QStringLiteral("ws%1").arg(n))));
        if (!store) die(store.error().text());
        auto held = test::setUpHeldRuns(ssh, **store, QStringLiteral("/tmp/scaledesk-bench-poll"), n, kRanks);
        if (!held) die(held.error().text());
        RunPoller poller(**store, ssh, slurm);
        auto report = [&](const char* what, const PollReport& p, qint64 ms) {
            std::printf("%-6d %-22s %9d %11llu %12llu %12llu %12llu %10lld %12lld\n", n, what, p.commands, (unsigned long long)p.roundTrips,
                        (unsigned long long)p.bytesSent, (unsigned long long)p.bytesRead, (unsigned long long)p.bytesNew, (long long)ms,
                        (long long)p.farSideMs);
        };
        QElapsedTimer t;
        t.start();
        auto first = poller.poll(held->runIds);
        if (!first) die(first.error().text());
        report("first (mirror all)", *first, t.elapsed());
        if (auto g = test::growAll(ssh, *held, kRanks); !g) die(g.error().text());
        t.restart();
        auto grown = poller.poll(held->runIds);
        if (!grown) die(grown.error().text());
        const qint64 grownMs = t.elapsed();
        report("a line per file", *grown, grownMs);
        t.restart();
        auto idle = poller.poll(held->runIds);
        if (!idle) die(idle.error().text());
        report("nothing new", *idle, t.elapsed());
        for (const QString& id : held->runIds)
            if ((*store)->load(id)->state != RunState::Queued) die(QStringLiteral("%1 is not queued any more").arg(id));

        if (n <= 100) {
            // The naive peer: per run, squeue -j and a full read of each followed file, one exec each.
            const TransportStats before = ssh.stats();
            quint64 naiveBytes = 0;
            t.restart();
            for (int i = 0; i < n; ++i) {
                if (auto q = ssh.exec(QStringLiteral("squeue -h -j %1 -o %%T").arg(held->jobIds[i].trimmed())))
                    naiveBytes += quint64(q->out.size());
                QStringList files{QStringLiteral("metrics.jsonl"), QStringLiteral("epochs.csv")};
                for (int rank = 1; rank < kRanks; ++rank) files << QStringLiteral("rank-%1.log").arg(rank);
                for (const QString& f : files)
                    if (auto c = ssh.exec(QStringLiteral("cat %1/%2").arg(shellQuote(held->dir(i)), f)))
                        naiveBytes += quint64(c->out.size());
            }
            const qint64 naiveMs = t.elapsed();
            const quint64 naiveTrips = ssh.stats().roundTrips - before.roundTrips;
            std::printf("%-6d %-22s %9s %11llu %12s %12llu %12s %10lld\n", n, "naive peer", "-", (unsigned long long)naiveTrips, "-",
                        (unsigned long long)naiveBytes, "-", (long long)naiveMs);
            std::printf("%-6d ratio naive/ours (a line per file): round trips %.1fx, wall %.1fx\n", n,
                        double(naiveTrips) / double(grown->roundTrips), double(naiveMs) / double(std::max<qint64>(1, grownMs)));
        }
        if (n == 100) {
            // Idle CPU: poll every second for 10 s with nothing new.
            const double cpu0 = cpuSeconds();
            QElapsedTimer wall;
            wall.start();
            for (int k = 0; k < 10; ++k) {
                if (auto polled = poller.poll(held->runIds); !polled)
                    std::fprintf(stderr, "bench_poll: %s\n", qPrintable(polled.error().text()));
                QThread::msleep(1000);
            }
            std::printf("%-6d idle poller, 1 s interval: %.2f%% of one core (%.3f s CPU in %.1f s)\n", n,
                        100.0 * (cpuSeconds() - cpu0) / (wall.elapsed() / 1000.0), cpuSeconds() - cpu0, wall.elapsed() / 1000.0);
        }
        test::cancelAll(ssh, *held);
    }
    std::printf("target: one poll of 1,000 runs (4 ranks each) within 3 s on loopback\n");
    return 0;
}
