// Poll cost against the sandbox (sshd + SLURM): for 1, 10 and 100 active runs, the round trips and
// bytes of one RunPoller poll, against a naive peer measured in the same run (per run: `squeue -j`,
// then `cat` of each followed file, the ssh + tail -f habit), plus the poller's idle CPU.
//
//   tests/sandbox/slurm-sandbox.sh start && tests/sandbox/ssh-sandbox.sh start
//   ninja -C build bench-poll
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

const QByteArray kLine = R"({"kind":"step","step":1,"epoch":1,"t":1764480000.0,"loss":0.123456,"lr":0.001,"step_s":0.2})"
                         "\n";
}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const QString sandbox = qEnvironmentVariable("SCALEDESK_SSH_SANDBOX_DIR", QStringLiteral("/tmp/scaledesk-ssh-sandbox"));
    SshOptions o;
    o.host = QStringLiteral("sandbox");
    o.sshConfigFile = sandbox + QStringLiteral("/ssh_config");
    o.knownHostsFile = sandbox + QStringLiteral("/known_hosts");
    SshTransport ssh(o);
    SlurmScheduler slurm(ssh);
    QTemporaryDir local;
    const QString remoteRoot = QStringLiteral("/tmp/scaledesk-bench-poll");

    std::printf("%-6s %-22s %12s %12s %14s %14s %12s\n", "runs", "poll", "round trips", "bytes read", "new bytes", "bytes/new", "wall ms");
    for (int n : {1, 10, 100}) {
        auto store = RunStore::open(Workspace(local.filePath(QStringLiteral("ws%1").arg(n))));
        if (!store) die(store.error().text());
        // n held jobs (PENDING, so active) with a run folder each; one exec sets them all up.
        QString setup = QStringLiteral("rm -rf %1; ").arg(shellQuote(remoteRoot));
        for (int i = 0; i < n; ++i) {
            const QString dir = remoteRoot + QStringLiteral("/runs/r%1").arg(i);
            setup += QStringLiteral("mkdir -p %1 && printf '%s' %2 > %1/metrics.jsonl && printf 'epoch,loss\\n' > %1/epochs.csv && "
                                    "sbatch --hold --parsable --chdir=%1 --job-name=r%3 --output=/dev/null --wrap 'sleep 1'; ")
                         .arg(shellQuote(dir), shellQuote(QString::fromUtf8(kLine)))
                         .arg(i);
        }
        auto made = ssh.exec(setup, 300000);
        if (!made || made->exitCode != 0) die(made ? QString::fromUtf8(made->err) : made.error().text());
        const QStringList ids = QString::fromUtf8(made->out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        if (ids.size() != n) die(QStringLiteral("expected %1 job ids, got: %2").arg(n).arg(QString::fromUtf8(made->out)));
        QStringList runIds;
        for (int i = 0; i < n; ++i) {
            RunRecord r;
            r.id = QStringLiteral("r%1").arg(i);
            r.profile = QStringLiteral("sandbox");
            r.remoteDir = remoteRoot + QStringLiteral("/runs/r%1").arg(i);
            r.jobId = ids[i].trimmed();
            r.transition(RunState::Queued, QStringLiteral("bench"));
            if (auto ok = (*store)->save(r); !ok) {
                std::fprintf(stderr, "bench_poll: %s\n", qPrintable(ok.error().text()));
                return 1;
            }
            runIds << r.id;
        }
        RunPoller poller(**store, ssh, slurm);
        auto report = [&](const char* what, const PollReport& p, qint64 ms) {
            std::printf("%-6d %-22s %12llu %12llu %14llu %14.3f %12lld\n", n, what, (unsigned long long)p.roundTrips,
                        (unsigned long long)p.bytesRead, (unsigned long long)p.bytesNew,
                        p.bytesNew ? double(p.bytesRead) / double(p.bytesNew) : 0.0, (long long)ms);
        };
        QElapsedTimer t;
        t.start();
        auto first = poller.poll(runIds);
        if (!first) die(first.error().text());
        report("first (mirror all)", *first, t.elapsed());
        // Every run's metrics.jsonl grows by one line, as a training step would add.
        QString grow;
        for (int i = 0; i < n; ++i)
            grow += QStringLiteral("printf '%s' %1 >> %2/metrics.jsonl; ")
                        .arg(shellQuote(QString::fromUtf8(kLine)), shellQuote(remoteRoot + QStringLiteral("/runs/r%1").arg(i)));
        if (auto g = ssh.exec(grow, 60000); !g) die(g.error().text());
        t.restart();
        auto grown = poller.poll(runIds);
        if (!grown) die(grown.error().text());
        const qint64 grownMs = t.elapsed();
        report("one line per run", *grown, grownMs);
        t.restart();
        auto idle = poller.poll(runIds);
        if (!idle) die(idle.error().text());
        report("nothing new", *idle, t.elapsed());
        for (const QString& id : runIds)
            if ((*store)->load(id)->state != RunState::Queued) die(QStringLiteral("%1 is not queued any more").arg(id));

        // The naive peer: per run, squeue -j and a full read of each followed file, one exec each.
        const TransportStats before = ssh.stats();
        quint64 naiveBytes = 0;
        t.restart();
        for (int i = 0; i < n; ++i) {
            const QString dir = remoteRoot + QStringLiteral("/runs/r%1").arg(i);
            if (auto q = ssh.exec(QStringLiteral("squeue -h -j %1 -o %%T").arg(ids[i].trimmed()))) naiveBytes += quint64(q->out.size());
            for (const char* f : {"metrics.jsonl", "epochs.csv"}) {
                auto c = ssh.exec(QStringLiteral("cat %1/%2").arg(shellQuote(dir), QLatin1String(f)));
                if (c) naiveBytes += quint64(c->out.size());
            }
        }
        const qint64 naiveMs = t.elapsed();
        const quint64 naiveTrips = ssh.stats().roundTrips - before.roundTrips;
        std::printf("%-6d %-22s %12llu %12llu %14s %14s %12lld\n", n, "naive peer", (unsigned long long)naiveTrips,
                    (unsigned long long)naiveBytes, "-", "-", (long long)naiveMs);
        std::printf("%-6d ratio naive/ours (grown poll): round trips %.1fx, bytes %.1fx, wall %.1fx\n", n,
                    double(naiveTrips) / double(grown->roundTrips), double(naiveBytes) / double(std::max<quint64>(1, grown->bytesRead)),
                    double(naiveMs) / double(std::max<qint64>(1, grownMs)));

        if (n == 10) {
            // Idle CPU: poll every second for 10 s with nothing new.
            const double cpu0 = cpuSeconds();
            QElapsedTimer wall;
            wall.start();
            for (int k = 0; k < 10; ++k) {
                if (auto polled = poller.poll(runIds); !polled) std::fprintf(stderr, "bench_poll: %s\n", qPrintable(polled.error().text()));
                QThread::msleep(1000);
            }
            std::printf("%-6d idle poller, 1 s interval: %.2f%% of one core (%.3f s CPU in %.1f s)\n", n,
                        100.0 * (cpuSeconds() - cpu0) / (wall.elapsed() / 1000.0), cpuSeconds() - cpu0, wall.elapsed() / 1000.0);
        }
        QString cancel = QStringLiteral("scancel");
        for (const QString& id : ids) cancel += QLatin1Char(' ') + shellQuote(id.trimmed());
        if (auto done = ssh.exec(cancel, 60000); !done) std::fprintf(stderr, "bench_poll: cleanup: %s\n", qPrintable(done.error().text()));
    }
    if (auto done = ssh.exec(QStringLiteral("rm -rf %1").arg(shellQuote(remoteRoot))); !done)
        std::fprintf(stderr, "bench_poll: cleanup: %s\n", qPrintable(done.error().text()));
    return 0;
}
