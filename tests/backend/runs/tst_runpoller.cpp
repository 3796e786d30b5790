// RunPoller over the local transport and scheduler: one exec per poll, one read per grown file,
// exact mirrors across restarts, shrinking logs, interrupted submits and deleted run folders.
#include "remote/localtransport.h"
#include "runs/runpoller.h"
#include "scheduler/localscheduler.h"
#include "scheduler/shellquote.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

namespace {
void append(const QString& path, const QByteArray& data)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::Append));
    f.write(data);
}
QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}
// The local transport; the stand-ins below change one part of it each.
class LocalForwarding : public Transport {
public:
    QString describe() const override { return m_local.describe(); }
    Expected<ExecResult> exec(const QString& command, int timeoutMs, Idempotent idempotent) override
    {
        return m_local.exec(command, timeoutMs, idempotent);
    }
    Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs, Idempotent idempotent) override
    {
        return m_local.execScript(script, timeoutMs, idempotent);
    }
    Status writeFile(const QString& p, const QByteArray& d, int mode) override { return m_local.writeFile(p, d, mode); }
    Expected<RemoteFileInfo> stat(const QString& p) override { return m_local.stat(p); }
    Expected<QByteArray> readAt(const QString& p, qint64 o, qint64 n) override { return m_local.readAt(p, o, n); }
    Status makeDirs(const QString& p) override { return m_local.makeDirs(p); }
    Expected<QString> absolutePath(const QString& p) override { return m_local.absolutePath(p); }
    TransportStats stats() const override { return m_local.stats(); }

protected:
    LocalTransport m_local;
};
// Every command run by bash (an SSH login shell), not /bin/sh.
class BashTransport final : public LocalForwarding {
public:
    Expected<ExecResult> exec(const QString& command, int timeoutMs, Idempotent idempotent) override
    {
        return m_local.exec(QStringLiteral("exec /bin/bash -c ") + shellQuote(command), timeoutMs, idempotent);
    }
    Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs, Idempotent idempotent) override
    {
        return Transport::execScript(script, timeoutMs, idempotent);  // through exec(), as before
    }
};
// A login node without Perl: the poll's reads fall back to one dd per file.
class NoPerlTransport final : public LocalForwarding {
public:
    Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs, Idempotent idempotent) override
    {
        QByteArray s = script;
        s.replace("command -v perl", "false");
        return m_local.execScript(s, timeoutMs, idempotent);
    }
};
// Every script a poll sends, as sent.
class RecordingTransport final : public LocalForwarding {
public:
    QList<QByteArray> scripts;
    Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs, Idempotent idempotent) override
    {
        scripts << script;
        return m_local.execScript(script, timeoutMs, idempotent);
    }
};
// A poll's file half that can fall short (the data exec times out and every read at an offset
// fails, as over a link that broke), and the largest answer of any exec.
class ShortReadsTransport final : public LocalForwarding {
public:
    bool failing = false;
    qsizetype largestAnswer = 0;
    Expected<ExecResult> execScript(const QByteArray& script, int timeoutMs, Idempotent idempotent) override
    {
        if (failing && script.contains("SD_READS"))
            return Error{ErrorCode::TransportTimeout, QStringLiteral("timed out after 60 s"), describe()};
        auto r = m_local.execScript(script, timeoutMs, idempotent);
        if (r) largestAnswer = std::max(largestAnswer, r->out.size());
        return r;
    }
    Expected<QByteArray> readAt(const QString& p, qint64 o, qint64 n) override
    {
        if (failing) return Error{ErrorCode::TransportTimeout, QStringLiteral("read timed out"), p};
        return m_local.readAt(p, o, n);
    }
};
}  // namespace

class TestRunPoller : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    QString m_remote;  // the "cluster" side run folder
    QProcess m_job;    // stands in for job.sh: a process whose working directory is the run folder

    RunRecord runningRecord(RunStore& store)
    {
        RunRecord r;
        r.id = QStringLiteral("poll 'me' $(x)");
        r.profile = QStringLiteral("local");
        r.remoteDir = m_remote;
        r.ranksPerNode = 2;  // rank-1.log is followed
        r.transition(RunState::Submitting, QStringLiteral("uploading"));
        r.transition(RunState::Queued, QStringLiteral("local: job"));
        r.jobId = QString::number(m_job.processId());
        r.submitStep = QStringLiteral("recorded");
        if (auto ok = store.save(r); !ok) qFatal("%s", qPrintable(ok.error().text()));
        return r;
    }

private slots:
    void init()
    {
        QDir(m_tmp.path()).removeRecursively();
        m_remote = m_tmp.filePath(QStringLiteral("remote/run 'one'"));
        QVERIFY(QDir().mkpath(m_remote));
        m_job.setWorkingDirectory(m_remote);
        m_job.start(QStringLiteral("sleep"), {QStringLiteral("120")});
        QVERIFY(m_job.waitForStarted());
    }
    void cleanup()
    {
        m_job.kill();
        m_job.waitForFinished();
    }

    // A run folder on a shared file system may hold files anyone named: nothing in a name ever
    // reaches the shell, the real files' mirror stays exact, and the odd names are reported.
    void hostileFileNamesNeverExecute()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        const QString mirror = (*store)->workspace().runDir(rec.id);
        // Anything that ran would leave its file in the run folder (the poll's shell works there).
        const QString pwned = m_remote + QStringLiteral("/pwned");
        const QList<QByteArray> names = {
            "metrics.jsonl\n123 456 metrics.jsonl",
            "$(touch pwned-dollar)",
            "`touch pwned-tick`",
            "a[$(touch pwned-arith)]",
            // The shape that ran a command under bash through the old `stat | while read`: a name that
            // matches a followed pattern and puts an arithmetic subscript where a size is read.
            "rank-1\na[$(>pwned-subscript)] 0 x.log",
            "-rf",
            "rank-1.log\n@data 9223372036854775807",
            QByteArray(255, 'x'),
            "bad-\xff\xfe-utf8",
            "slurm-$(id).out",
        };
        for (const QByteArray& n : names) {
            QFile f(QFile::decodeName(m_remote.toLocal8Bit() + '/' + n));
            QVERIFY2(f.open(QIODevice::WriteOnly), n.constData());
            f.write("5 6 7\n");
        }
        append(m_remote + QStringLiteral("/metrics.jsonl"), "{\"kind\":\"step\",\"step\":1,\"t\":1}\n");
        append(m_remote + QStringLiteral("/rank-1.log"), "rank one\n");
        BashTransport t;  // a login shell that is bash, as on most clusters
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        auto r = poller.poll({rec.id});
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        for (const char* suffix : {"-dollar", "-tick", "-arith", "-subscript"})
            QVERIFY2(!QFile::exists(pwned + QLatin1String(suffix)), suffix);
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), slurp(m_remote + QStringLiteral("/metrics.jsonl")));
        QCOMPARE(slurp(mirror + QStringLiteral("/rank-1.log")), QByteArray("rank one\n"));
        // Only the files it asked for are in the mirror.
        const QStringList mirrored = QDir(mirror).entryList(QDir::Files | QDir::Hidden);
        for (const QString& m : mirrored)
            QVERIFY2(QStringList({QStringLiteral("metrics.jsonl"), QStringLiteral("rank-1.log"), QStringLiteral("run.json"),
                                  QStringLiteral(".lock")})
                         .contains(m),
                     qPrintable(m));
        QVERIFY2(r->problems.join(QLatin1Char('\n')).contains(QStringLiteral("entries with unusual names in the run folder are ignored")),
                 qPrintable(r->problems.join(QLatin1Char('\n'))));
    }

    // The answers are parsed with bounds: huge or negative lengths, paths not asked for, a read cut
    // short, a forged sentinel, a cut-off answer; nothing loops, nothing is read out of bounds.
    void parsingTheSizesIsBounded()
    {
        const QList<RunPoller::AskedFile> asked{{0, QStringLiteral("metrics.jsonl"), QStringLiteral("/r/a b/metrics.jsonl")},
                                                {1, QStringLiteral("rank-1.log"), QStringLiteral("/r/c/rank-1.log")}};
        const QByteArray answer = "12 1700 /r/a b/metrics.jsonl\n"
                                  "5 6 /r/a b/config.yaml\n"     // not asked
                                  "-3 6 /r/c/rank-1.log\n"       // not a size
                                  "1e9 6 /r/c/rank-1.log\n"      // not a size
                                  "7 8 /r/c/rank-1.log extra\n"  // not the path asked
                                  "9223372036854775807 1 /r/c/rank-1.log\n"
                                  "@gone 7\n@gone 1\n@odd /r/a b\n@odd /r/a b\n@odd /r/a b\n@odd /elsewhere\n";
        const auto seen = RunPoller::parseSizes(answer, asked);
        QCOMPARE(seen.value(0).files.size(), 1);
        QCOMPARE(seen.value(0).files[0].size, qint64(12));
        QCOMPARE(seen.value(0).oddNames, 3);
        QCOMPARE(seen.value(1).files.size(), 1);
        QCOMPARE(seen.value(1).files[0].size, qint64(9223372036854775807LL));
        QVERIFY(seen.value(1).gone);
        QVERIFY(!seen.contains(7));
    }

    void parsingTheDataIsBounded_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<QByteArray>("expect");  // what key 0 gets, "-" for nothing
        QTest::newRow("exact") << QByteArray("@data 0 3\nabc\n@end n0nce 0\n") << QByteArray("abc");
        QTest::newRow("overflowing length") << QByteArray("@data 0 9223372036854775807\nabc\n@end n0nce 0\n") << QByteArray("-");
        QTest::newRow("negative length") << QByteArray("@data 0 -5\nabc\n@end n0nce 0\n") << QByteArray("-");
        QTest::newRow("cut short") << QByteArray("@data 0 3\nab\n@end n0nce 0\n") << QByteArray("-");
        QTest::newRow("forged sentinel") << QByteArray("@data 0 3\nabc\n@end other 0\n") << QByteArray("-");
        QTest::newRow("cut off") << QByteArray("@data 0 3\nab") << QByteArray("-");
        QTest::newRow("unknown key") << QByteArray("@data 5 3\nabc\n@end n0nce 5\n") << QByteArray("-");
        QTest::newRow("framing inside the data")
            << QByteArray("@data 0 14\n@data 0 3\nabc\n\n@end n0nce 0\n") << QByteArray("@data 0 3\nabc\n");
    }
    void parsingTheDataIsBounded()
    {
        QFETCH(QByteArray, answer);
        QFETCH(QByteArray, expect);
        const QHash<int, qint64> expected{{0, expect == "-" ? 3 : expect.size()}};
        const auto data = RunPoller::parseData(answer, QByteArrayLiteral("n0nce"), expected);
        if (expect == "-")
            QVERIFY(!data.contains(0));
        else
            QCOMPARE(data.value(0), expect);
    }

    void mirrorsExactlyWithOneRoundTripForSizesAndOneForBytes()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        QVERIFY(store);
        const RunRecord rec = runningRecord(**store);
        const QString mirror = (*store)->workspace().runDir(rec.id);
        append(m_remote + QStringLiteral("/metrics.jsonl"), "{\"step\":1}\n{\"step\":2}\n{\"st");  // partial last line
        append(m_remote + QStringLiteral("/epochs.csv"), "epoch,loss\n");
        LocalTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);

        auto r1 = poller.poll({rec.id});
        QVERIFY2(r1, qPrintable(r1 ? QString() : r1.error().text()));
        QCOMPARE(r1->runs, 1);
        QCOMPARE(r1->roundTrips, quint64(2));  // states and sizes, then the new bytes
        QCOMPARE(r1->changed, QStringList{rec.id});
        QCOMPARE((*store)->load(rec.id)->state, RunState::Running);
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), slurp(m_remote + QStringLiteral("/metrics.jsonl")));

        // Only the new bytes come back: what was appended, plus a few header lines per file.
        const QByteArray more = "ep\":3}\n{\"step\":4}\n";
        append(m_remote + QStringLiteral("/metrics.jsonl"), more);
        auto r2 = poller.poll({rec.id});
        QVERIFY(r2);
        QCOMPARE(r2->roundTrips, quint64(2));
        QCOMPARE(r2->bytesNew, quint64(more.size()));
        QVERIFY2(r2->bytesRead >= quint64(more.size()) && r2->bytesRead <= quint64(more.size()) + 2 * 1024,
                 qPrintable(QString::number(r2->bytesRead)));
        QVERIFY(r2->changed.isEmpty());
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), slurp(m_remote + QStringLiteral("/metrics.jsonl")));

        // Nothing new: one round trip, nothing read.
        auto r3 = poller.poll({rec.id});
        QVERIFY(r3);
        QCOMPARE(r3->roundTrips, quint64(1));
        QCOMPARE(r3->bytesNew, quint64(0));
        QVERIFY(r3->bytesRead < 1024);

        // A new poller (an app restart) resumes at the mirror's size: nothing duplicated.
        append(m_remote + QStringLiteral("/metrics.jsonl"), "{\"step\":5}\n");
        LocalTransport t2;
        LocalScheduler s2(t2);
        RunPoller restarted(**store, t2, s2);
        QVERIFY(restarted.poll({rec.id}));
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), slurp(m_remote + QStringLiteral("/metrics.jsonl")));
    }

    // Bytes that look like the poll's own framing, binary data, and growth beyond the inline limit
    // (read over the transport instead) all arrive exactly.
    void anyBytesArriveExactly()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        const QString mirror = (*store)->workspace().runDir(rec.id);
        LocalTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        QByteArray tricky("@run 0\n@data 5\n@end 0\n@file 1 2 x\n@gone\n");
        for (int b = 0; b < 256; ++b) tricky.append(char(b));
        append(m_remote + QStringLiteral("/metrics.jsonl"), tricky);
        append(m_remote + QStringLiteral("/rank-1.log"), "no newline at the end");
        auto r1 = poller.poll({rec.id});
        QVERIFY(r1);
        QCOMPARE(r1->roundTrips, quint64(2));
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), tricky);
        QCOMPARE(slurp(mirror + QStringLiteral("/rank-1.log")), QByteArray("no newline at the end"));
        QByteArray big;
        for (int i = 0; i < 60000; ++i) big += "{\"kind\":\"step\",\"step\":" + QByteArray::number(i) + "}\n";
        QVERIFY(big.size() > (1 << 20));
        append(m_remote + QStringLiteral("/metrics.jsonl"), big);
        auto r2 = poller.poll({rec.id});
        QVERIFY(r2);
        QVERIFY(r2->roundTrips > 1);  // beyond 1 MiB the bytes come by read-at-offset
        QCOMPARE(r2->bytesNew, quint64(big.size()));
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), tricky + big);
    }

    // The poll that sees the job end brings back only part of its files: the run stays active
    // until a poll has mirrored every byte, then ends. A finished run is a complete run.
    void aFinishedRunEndsOnlyWithItsWholeMirror()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        const QString mirror = (*store)->workspace().runDir(rec.id);
        ShortReadsTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        QVERIFY(poller.poll({rec.id}));
        QCOMPARE((*store)->load(rec.id)->state, RunState::Running);
        QByteArray tail;
        for (int i = 0; i < 20000; ++i) tail += "{\"kind\":\"step\",\"step\":" + QByteArray::number(i) + "}\n";
        append(m_remote + QStringLiteral("/metrics.jsonl"), tail);
        append(m_remote + QStringLiteral("/exit_code"), "0\n");
        t.failing = true;
        auto shortPoll = poller.poll({rec.id});
        QVERIFY(shortPoll);  // the states are this poll's all the same
        QCOMPARE((*store)->load(rec.id)->state, RunState::Running);
        QVERIFY2(shortPoll->problems.join(QLatin1Char('\n')).contains(QStringLiteral("fetching the rest of its files")),
                 qPrintable(shortPoll->problems.join(QLatin1Char('\n'))));
        QVERIFY(slurp(mirror + QStringLiteral("/metrics.jsonl")) != slurp(m_remote + QStringLiteral("/metrics.jsonl")));
        t.failing = false;
        QVERIFY(poller.poll({rec.id}));
        QCOMPARE((*store)->load(rec.id)->state, RunState::Completed);
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), slurp(m_remote + QStringLiteral("/metrics.jsonl")));
        QCOMPARE(slurp(mirror + QStringLiteral("/exit_code")), QByteArray("0\n"));
    }

    // What one poll brings back is bounded: the inline answer of all runs together, and per run
    // (the rest comes with the next polls). A run that prints 80 MB between two polls stalls no one.
    void whatAPollBringsBackIsBounded()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        QStringList ids;
        for (int i = 0; i < 12; ++i) {
            RunRecord r;
            r.id = QStringLiteral("busy-%1").arg(i);
            r.remoteDir = m_tmp.filePath(QStringLiteral("remote/busy-%1").arg(i));
            QVERIFY(QDir().mkpath(r.remoteDir));
            r.transition(RunState::Queued, QStringLiteral("waiting"));  // no job: only the files are followed
            QVERIFY((*store)->save(r));
            append(r.remoteDir + QStringLiteral("/job.out"), QByteArray(900 * 1024, 'x'));  // each under the inline limit
            ids << r.id;
        }
        QByteArray flood;
        for (int i = 0; flood.size() < 80 * 1000 * 1000; ++i) flood += "rank 0: a line that a run prints " + QByteArray::number(i) + '\n';
        append(m_tmp.filePath(QStringLiteral("remote/busy-0/job.out")), flood);
        ShortReadsTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        QVERIFY(poller.poll(ids));
        QVERIFY2(t.largestAnswer <= (8 << 20) + (64 << 10), qPrintable(QString::number(t.largestAnswer)));
        for (int i = 1; i < 12; ++i)  // the others are whole after one poll
            QCOMPARE(slurp((*store)->workspace().runDir(ids[i]) + QStringLiteral("/job.out")).size(), 900 * 1024);
        const QString flooded = (*store)->workspace().runDir(ids[0]) + QStringLiteral("/job.out");
        QCOMPARE(QFileInfo(flooded).size(), qint64(32 << 20));
        int polls = 1;
        while (QFileInfo(flooded).size() < 900 * 1024 + flood.size() && polls < 10) {
            QVERIFY(poller.poll(ids));
            ++polls;
        }
        QCOMPARE(polls, 3);
        QCOMPARE(slurp(flooded), QByteArray(900 * 1024, 'x') + flood);
    }

    // Without Perl on the far side the same bytes arrive (one dd per file).
    void withoutPerlTheBytesArriveTheSame()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        const QString mirror = (*store)->workspace().runDir(rec.id);
        QByteArray tricky("@data 0 5\n@end x 0\n");
        for (int b = 0; b < 256; ++b) tricky.append(char(b));
        append(m_remote + QStringLiteral("/metrics.jsonl"), tricky);
        append(m_remote + QStringLiteral("/rank-1.log"), "no newline at the end");
        NoPerlTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        auto r = poller.poll({rec.id});
        QVERIFY(r);
        QCOMPARE(r->commands, 2);
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), tricky);
        QCOMPARE(slurp(mirror + QStringLiteral("/rank-1.log")), QByteArray("no newline at the end"));
        append(m_remote + QStringLiteral("/metrics.jsonl"), "more\n");
        QVERIFY(poller.poll({rec.id}));
        QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), tricky + "more\n");
    }

    // The poll's nonce (what a file cannot forge) never reaches a command line that `ps` shows other
    // users on the login node: perl reads it from its standard input, and the dd fallback echoes it
    // with the shell's builtin.
    void thePollsNonceIsNotInAnyArgv()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        append(m_remote + QStringLiteral("/metrics.jsonl"), "{\"kind\":\"step\"}\n");
        RecordingTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        QVERIFY(poller.poll({rec.id}));
        QCOMPARE(slurp((*store)->workspace().runDir(rec.id) + QStringLiteral("/metrics.jsonl")), QByteArray("{\"kind\":\"step\"}\n"));
        QByteArray data;
        for (const auto& script : t.scripts)
            if (script.contains("SD_READS")) data = script;
        QVERIFY(!data.isEmpty());
        // The here-document's first line is the nonce; the answer's sentinels carry it.
        const auto nonce = QRegularExpression(QStringLiteral("' <<'SD_READS'\n([0-9a-f]+)\n")).match(QString::fromLatin1(data));
        QVERIFY2(nonce.hasMatch(), data.constData());
        const qsizetype program = data.indexOf("perl -e '"), programEnd = data.indexOf("' <<'SD_READS'");
        QVERIFY(program >= 0 && programEnd > program);
        QVERIFY2(!data.mid(program, programEnd - program).contains(nonce.captured(1).toLatin1()), data.constData());
        QVERIFY2(!data.contains("dd if="), "the script carries the fallback for a login node without Perl as well");
    }

    void shrunkFileIsKeptAndMirroredAgain()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        const QString mirror = (*store)->workspace().runDir(rec.id);
        const QString log = QStringLiteral("slurm-%1.out").arg(rec.jobId);  // the job's own output
        append(m_remote + QLatin1Char('/') + log, "first attempt, a long line of log output\n");
        LocalTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        QVERIFY(poller.poll({rec.id}));
        QFile f(m_remote + QLatin1Char('/') + log);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));  // the requeued job reopens its log
        f.write("second\n");
        f.close();
        auto r = poller.poll({rec.id});
        QVERIFY(r);
        QCOMPARE(r->problems.size(), 1);
        QVERIFY2(r->problems[0].contains(log + QStringLiteral(" was restarted")), qPrintable(r->problems[0]));
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log), QByteArray("second\n"));
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log + QStringLiteral(".prev")),
                 QByteArray("first attempt, a long line of log output\n"));
    }

    // A log truncated and grown past its old size between two polls (a requeued job writes more
    // than the last attempt did) is mirrored anew, not spliced onto the old one; each earlier
    // attempt's copy is kept (.prev, .prev-2). Both inline reads and reads over the transport.
    void aRestartedFileThatGrewPastItsOldSizeIsNotSpliced_data()
    {
        QTest::addColumn<bool>("perl");
        QTest::newRow("inline (perl)") << true;
        QTest::newRow("dd fallback") << false;
    }
    void aRestartedFileThatGrewPastItsOldSizeIsNotSpliced()
    {
        QFETCH(bool, perl);
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        const QString mirror = (*store)->workspace().runDir(rec.id);
        const QString log = QStringLiteral("slurm-%1.out").arg(rec.jobId);
        const QString remote = m_remote + QLatin1Char('/') + log;
        LocalTransport local;
        NoPerlTransport noPerl;
        Transport& t = perl ? static_cast<Transport&>(local) : static_cast<Transport&>(noPerl);
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        auto rewrite = [&](const QByteArray& text) {
            QFile f(remote);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(text);
        };
        rewrite("attempt 1: step 1\n");
        QVERIFY(poller.poll({rec.id}));
        rewrite("attempt 2: step 1\nattempt 2: step 2\n");
        auto r = poller.poll({rec.id});
        QVERIFY(r);
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log), QByteArray("attempt 2: step 1\nattempt 2: step 2\n"));
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log + QStringLiteral(".prev")), QByteArray("attempt 1: step 1\n"));
        QVERIFY2(r->problems.join(QLatin1Char('\n')).contains(log + QStringLiteral(" was restarted")),
                 qPrintable(r->problems.join(QLatin1Char('\n'))));
        rewrite("attempt 3: step 1\nattempt 3: step 2\nattempt 3: step 3\n");
        QVERIFY(poller.poll({rec.id}));
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log), QByteArray("attempt 3: step 1\nattempt 3: step 2\nattempt 3: step 3\n"));
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log + QStringLiteral(".prev")), QByteArray("attempt 1: step 1\n"));
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log + QStringLiteral(".prev-2")), QByteArray("attempt 2: step 1\nattempt 2: step 2\n"));
        // A file that only grows is appended to, as before: no copy, no problem.
        append(remote, "attempt 3: step 4\n");
        r = poller.poll({rec.id});
        QVERIFY(r);
        QVERIFY2(r->problems.isEmpty(), qPrintable(r->problems.join(QLatin1Char('\n'))));
        QCOMPARE(slurp(mirror + QLatin1Char('/') + log),
                 QByteArray("attempt 3: step 1\nattempt 3: step 2\nattempt 3: step 3\nattempt 3: step 4\n"));
        QVERIFY(!QFile::exists(mirror + QLatin1Char('/') + log + QStringLiteral(".prev-3")));
    }

    void finishedJobTakesItsExitCode()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        LocalTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        QVERIFY(poller.poll({rec.id}));
        append(m_remote + QStringLiteral("/exit_code"), "3\n");
        auto r = poller.poll({rec.id});
        QVERIFY(r);
        const auto back = (*store)->load(rec.id);
        QCOMPARE(back->state, RunState::Failed);
        QCOMPARE(back->message, QStringLiteral("local: FAILED (exit 3)"));
        QCOMPARE(back->history.last().state, RunState::Failed);
        QCOMPARE(back->history[back->history.size() - 2].state, RunState::Running);
        QCOMPARE(slurp((*store)->workspace().runDir(rec.id) + QStringLiteral("/exit_code")), QByteArray("3\n"));
    }

    void deletedRunFolderIsReported()
    {
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        const RunRecord rec = runningRecord(**store);
        m_job.kill();
        m_job.waitForFinished();
        QVERIFY(QDir(m_remote).removeRecursively());
        LocalTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        auto r = poller.poll({rec.id});
        QVERIFY(r);
        QVERIFY(r->problems.join(QLatin1Char('\n')).contains(QStringLiteral("was deleted on the cluster")));
        const auto back = (*store)->load(rec.id);
        QCOMPARE(back->state, RunState::Lost);
        QVERIFY2(back->message.contains(QStringLiteral("run folder was deleted")), qPrintable(back->message));
    }

    // The app was killed during a submit: before the scheduler saw the job, or after.
    void interruptedSubmitsAreReconciled_data()
    {
        QTest::addColumn<QString>("step");
        QTest::addColumn<bool>("jobStarted");
        QTest::addColumn<int>("state");
        QTest::newRow("during upload") << "upload" << false << int(RunState::SubmitFailed);
        QTest::newRow("before the scheduler started it") << "sbatch" << false << int(RunState::SubmitFailed);
        QTest::newRow("after the scheduler started it") << "sbatch" << true << int(RunState::Running);
    }
    void interruptedSubmitsAreReconciled()
    {
        QFETCH(QString, step);
        QFETCH(bool, jobStarted);
        QFETCH(int, state);
        auto store = RunStore::open(Workspace(m_tmp.filePath(QStringLiteral("ws"))));
        RunRecord r;
        r.id = QStringLiteral("interrupted");
        r.profile = QStringLiteral("local");
        r.remoteDir = m_remote;
        r.submitStep = step;
        r.transition(RunState::Submitting, QStringLiteral("handing the job to local"));
        QVERIFY((*store)->save(r));
        if (jobStarted) append(m_remote + QStringLiteral("/job.pid"), QByteArray::number(m_job.processId()) + '\n');
        LocalTransport t;
        LocalScheduler s(t);
        RunPoller poller(**store, t, s);
        QVERIFY(poller.poll({r.id}));
        const auto back = (*store)->load(r.id);
        QCOMPARE(int(back->state), state);
        if (jobStarted) {
            QCOMPARE(back->jobId, QString::number(m_job.processId()));
            bool found = false;
            for (const auto& h : back->history) found = found || h.note.contains(QStringLiteral("after an interrupted submit"));
            QVERIFY(found);
        } else {
            QVERIFY2(back->message.startsWith(QStringLiteral("failed to submit")), qPrintable(back->message));
        }
    }
};

QTEST_GUILESS_MAIN(TestRunPoller)
#include "tst_runpoller.moc"
