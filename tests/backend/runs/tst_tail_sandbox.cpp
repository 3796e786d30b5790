// Tailing over SSH with the connection cut again and again while a run writes: the local mirror
// ends equal to the remote files byte for byte, every step parsed exactly once, and each poll reads
// no more than the new bytes plus about a kilobyte per file. (bench_tail runs the full-size chaos
// test: 100 cuts while 10,000 lines are written.) A run whose last polls are cut ends complete.
#include "tailharness.h"

#include <QElapsedTimer>
#include <QTest>
#include <QThread>

#include <cmath>
#include <random>

using namespace scaledesk;
using namespace scaledesk::test;

class TestTailSandbox : public QObject {
    Q_OBJECT
private slots:
    void mirrorSurvivesRepeatedDisconnects()
    {
        TailHarness h;
        const QString why = h.setUp();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const int lines = 2000, cuts = 10;
        h.startWriter(lines, 5000);  // about 10 s of writing: the cuts land while it writes
        // Cuts at their own pace, so some land in the middle of a poll.
        std::atomic<int> cut{0};
        std::thread killer([&] {
            for (int i = 0; i < cuts; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(700 + 97 * (i % 3)));
                h.killSession();
                ++cut;
            }
        });
        int polls = 0, failed = 0;
        quint64 read = 0, grown = 0;
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 180000) {
            auto r = h.poll();
            ++polls;
            if (r) {
                read += r->bytesRead;
                grown += r->bytesNew;
            } else {
                ++failed;  // cut mid-poll: the next poll reconnects and resumes at the mirror's size
            }
            h.reader->read({QStringLiteral("slurm-%1.out").arg(h.jobId)});
            const bool done = h.written == lines && cut == cuts;
            if (done && h.mirrorBytes(QStringLiteral("metrics.jsonl")) == h.remoteBytes(QStringLiteral("metrics.jsonl")) &&
                h.mirrorBytes(QStringLiteral("slurm-%1.out").arg(h.jobId)) == h.remoteBytes(QStringLiteral("slurm-%1.out").arg(h.jobId)))
                break;
            QThread::msleep(50);
        }
        killer.join();
        QCOMPARE(cut.load(), cuts);
        QVERIFY2(h.ssh->stats().connects >= quint64(cuts), qPrintable(QStringLiteral("%1 connects").arg(h.ssh->stats().connects)));
        QCOMPARE(h.mirrorBytes(QStringLiteral("metrics.jsonl")), h.remoteBytes(QStringLiteral("metrics.jsonl")));
        QCOMPARE(h.mirrorBytes(QStringLiteral("slurm-%1.out").arg(h.jobId)), h.remoteBytes(QStringLiteral("slurm-%1.out").arg(h.jobId)));
        // Parsed as it arrived: every step once, in order, nothing warned about.
        h.reader->read({});
        const Series* loss = h.reader->metrics().series(QStringLiteral("step/loss"));
        QVERIFY(loss);
        QCOMPARE(loss->size(), std::size_t(lines));
        for (int i = 0; i < lines; ++i) QCOMPARE(loss->steps()[std::size_t(i)], double(i + 1));
        QVERIFY(h.reader->metrics().warnings.isEmpty());
        // Per poll: the new bytes plus headers of at most ~1 KB per followed file (two files here).
        QVERIFY2(read <= grown + quint64(polls) * 2 * 1024,
                 qPrintable(QStringLiteral("%1 read for %2 new in %3 polls").arg(read).arg(grown).arg(polls)));
        qInfo("%d polls (%d cut mid-way), %llu connects, %llu bytes read for %llu new", polls, failed,
              (unsigned long long)h.ssh->stats().connects, (unsigned long long)read, (unsigned long long)grown);
    }

    // The job ends while 100 MB of its output are still to be fetched, and the SSH session is cut
    // during the polls that follow, at random points. A run that says it ended has its whole mirror
    // after every poll; in the end it is completed, its mirror byte-identical to the cluster's files.
    void aRunCutDuringItsLastPollsEndsCompleteAndIdentical()
    {
        TailHarness h;
        const QString why = h.setUp();
        QVERIFY2(why.isEmpty(), qPrintable(why));
        {
            QFile f(h.remoteDir + QStringLiteral("/metrics.jsonl"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            QByteArray block;
            for (int i = 0; i < 10000; ++i)
                block +=
                    "{\"kind\":\"step\",\"step\":" + QByteArray::number(i) + ",\"loss\":0.5,\"pad\":\"" + QByteArray(60, 'p') + "\"}\n";
            while (f.size() < 100 * 1000 * 1000) f.write(block);
        }
        auto released = h.ssh->exec(QStringLiteral("scontrol release %1").arg(shellQuote(h.jobId)));
        QVERIFY(released && released->exitCode == 0);
        QElapsedTimer t;
        t.start();
        for (;;) {  // until SLURM says the job ended
            auto q = h.ssh->exec(QStringLiteral("squeue -h -j %1 -t PD,R,CG -o %T").arg(shellQuote(h.jobId)));
            QVERIFY(q);
            if (QString::fromUtf8(q->out).trimmed().isEmpty()) break;
            QVERIFY2(t.elapsed() < 60000, "the released job did not end");
            QThread::msleep(300);
        }
        // The first poll sees the end and brings back what its budget allows; the next ones are cut
        // part-way (the kill lands while the poll runs), until the run has every byte.
        int polls = 0, cutWhileSyncing = 0;
        bool syncing = false;
        RunState state = RunState::Queued;
        std::mt19937 rng(11);
        while (isActive(state) && t.elapsed() < 240000) {
            std::atomic<bool> pollDone{false}, killed{false};
            std::thread killer;
            if (syncing && polls < 8)
                killer = std::thread([&, delay = 30 + int(rng() % 400)] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
                    if (pollDone) return;
                    h.killSession();
                    killed = true;
                });
            auto r = h.poll();
            pollDone = true;
            if (killer.joinable()) killer.join();
            ++polls;
            state = h.store->load(h.runId)->state;
            if (killed && isActive(state)) ++cutWhileSyncing;
            syncing = syncing || (r && r->problems.join(QLatin1Char('\n')).contains(QStringLiteral("fetching the rest of its files")));
            if (!isActive(state))
                QVERIFY2(h.mirrorBytes(QStringLiteral("metrics.jsonl")) == h.remoteBytes(QStringLiteral("metrics.jsonl")),
                         qPrintable(QStringLiteral("ended %1 after poll %2 with %3 of %4 bytes")
                                        .arg(runStateName(state))
                                        .arg(polls)
                                        .arg(h.mirrorBytes(QStringLiteral("metrics.jsonl")).size())
                                        .arg(h.remoteBytes(QStringLiteral("metrics.jsonl")).size())));
        }
        QCOMPARE(state, RunState::Completed);
        QVERIFY(h.mirrorBytes(QStringLiteral("metrics.jsonl")) == h.remoteBytes(QStringLiteral("metrics.jsonl")));
        QVERIFY2(cutWhileSyncing >= 1, qPrintable(QStringLiteral("no cut landed while the ended run was syncing (%1 polls)").arg(polls)));
        qInfo("%d polls, %d cut while the ended run synced, %llu connects", polls, cutWhileSyncing,
              (unsigned long long)h.ssh->stats().connects);
    }
};

QTEST_GUILESS_MAIN(TestTailSandbox)
#include "tst_tail_sandbox.moc"
