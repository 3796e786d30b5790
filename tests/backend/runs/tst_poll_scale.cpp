// 1,000 active runs of 4 ranks each in the sandbox (held SLURM jobs, real sshd): every poll works,
// though its script is far larger than Linux's argv limit, every mirror equals its file, and the states
// follow SLURM (a few jobs released to run and end, the rest still queued).
#include "heldruns.h"
#include "remote/sshtransport.h"
#include "runs/runpoller.h"
#include "scheduler/slurmscheduler.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace scaledesk;
using namespace scaledesk::test;

namespace {
QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}
}  // namespace

class TestPollScale : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

private slots:
    void aThousandRunsOfFourRanks()
    {
        constexpr int kRuns = 1000, kRanks = 4;
        SshTransport ssh(sandboxSshOptions());
        SlurmScheduler slurm(ssh);
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        QVERIFY(store);
        auto held = setUpHeldRuns(ssh, **store, m_tmp.filePath(QStringLiteral("remote")), kRuns, kRanks);
        QVERIFY2(held, qPrintable(held ? QString() : held.error().text()));
        RunPoller poller(**store, ssh, slurm);
        auto mirrorsEqual = [&] {
            for (int i = 0; i < kRuns; ++i) {
                const QString mirror = (*store)->workspace().runDir(held->runIds[i]);
                for (QString f : {QStringLiteral("metrics.jsonl"), QStringLiteral("epochs.csv"), QStringLiteral("rank-1.log"),
                                  QStringLiteral("rank-3.log")})
                    if (slurp(mirror + QLatin1Char('/') + f) != slurp(held->dir(i) + QLatin1Char('/') + f)) {
                        qWarning("%s/%s differs", qPrintable(held->runIds[i]), qPrintable(f));
                        return false;
                    }
            }
            return true;
        };
        QElapsedTimer t;
        t.start();
        auto first = poller.poll(held->runIds);
        QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
        qInfo("first poll of %d runs: %lld ms, %d commands, %llu bytes back", kRuns, t.elapsed(), first->commands,
              (unsigned long long)first->bytesRead);
        QVERIFY(first->bytesSent > 128 * 1024);  // more than one argv string may hold: the script goes on stdin
        QCOMPARE(first->commands, 2);            // sizes, then the bytes (everything is new)
        QVERIFY(first->problems.isEmpty());
        QVERIFY(mirrorsEqual());
        QVERIFY(growAll(ssh, *held, kRanks));
        auto grown = poller.poll(held->runIds);
        QVERIFY2(grown, qPrintable(grown ? QString() : grown.error().text()));
        QCOMPARE(grown->bytesNew, quint64(kRuns) * quint64(kStepLine.size() + (kRanks - 1) * 5));
        QVERIFY(mirrorsEqual());
        // Three jobs are let go: they run and end; every other run stays queued.
        QProcess release;
        release.start(
            QStringLiteral("scontrol"),
            {QStringLiteral("release"),
             held->jobIds[3].trimmed() + QLatin1Char(',') + held->jobIds[500].trimmed() + QLatin1Char(',') + held->jobIds[999].trimmed()});
        QVERIFY(release.waitForFinished(30000));
        QElapsedTimer wait;
        wait.start();
        auto stateOf = [&](int i) { return (*store)->load(held->runIds[i])->state; };
        while (wait.elapsed() < 120000 && !(isFinal(stateOf(3)) && isFinal(stateOf(500)) && isFinal(stateOf(999)))) {
            auto p = poller.poll(held->runIds);
            QVERIFY2(p, qPrintable(p ? QString() : p.error().text()));
            QThread::msleep(500);
        }
        for (int i : {3, 500, 999}) QCOMPARE(stateOf(i), RunState::Completed);
        int queued = 0;
        for (int i = 0; i < kRuns; ++i) queued += stateOf(i) == RunState::Queued;
        QCOMPARE(queued, kRuns - 3);
        cancelAll(ssh, *held);
    }
};

QTEST_GUILESS_MAIN(TestPollScale)
#include "tst_poll_scale.moc"
