// The window and the command line on one workspace at once: the window's controller and
// `scaledesk status --wait` both poll 20 local runs while they write (a line every 100 ms), and a
// third writer adds a note to every run's history every second (as actions would). At the end every
// mirror equals its file byte for byte, every note is in its run's history once, every run went
// queued → running → completed once, and the run index was never deleted.
// SCALEDESK_CONCURRENT_SECONDS sets how long the runs write (default 60; 300 for the long check, with
// QTEST_FUNCTION_TIMEOUT=1200000: QtTest stops a test function after 5 minutes by default).
#include "runs/runstore.h"
#include "workspace/workspacecontroller.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <atomic>
#include <thread>

using namespace scaledesk;
using namespace scaledesk::gui;

namespace {
QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}
ino_t inodeOf(const QString& path)
{
    struct stat st {};
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_ino : 0;
}
}  // namespace

class TestGuiConcurrent : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

private slots:
    void windowAndCommandLineTogether()
    {
        const int seconds = qEnvironmentVariableIntValue("SCALEDESK_CONCURRENT_SECONDS") > 0
            ? qEnvironmentVariableIntValue("SCALEDESK_CONCURRENT_SECONDS")
            : 60;
        const QString root = m_tmp.filePath(QStringLiteral("ws"));
        const Workspace ws(root);
        constexpr int kRuns = 20;
        QStringList ids;
        QList<QProcess*> writers;
        {
            auto store = RunStore::open(ws);
            QVERIFY(store);
            for (int i = 0; i < kRuns; ++i) {
                const QString id = QStringLiteral("w%1").arg(i);
                const QString dir = root + QStringLiteral("/local/runs/") + id;
                QVERIFY(QDir().mkpath(dir));
                // A job: writes a step line every 100 ms for `seconds` (by the clock, however
                // loaded the machine), then its exit code (as job.sh does).
                auto* p = new QProcess(this);
                p->setWorkingDirectory(dir);
                p->start(QStringLiteral("/bin/bash"),
                         {QStringLiteral("-c"),
                          QStringLiteral("sleep 1; end=$((SECONDS + %1)); i=0; while [ $SECONDS -lt $end ]; do i=$((i + 1)); "
                                         "echo \"{\\\"kind\\\":\\\"step\\\",\\\"step\\\":$i,\\\"t\\\":$i,\\\"loss\\\":0.5}\" >> "
                                         "metrics.jsonl; sleep 0.1; done; echo 0 > exit_code")
                              .arg(seconds)});
                QVERIFY(p->waitForStarted());
                writers << p;
                RunRecord r;
                r.id = id;
                r.profile = QStringLiteral("local");
                r.remoteDir = dir;
                r.jobId = QString::number(p->processId());
                r.submitStep = QStringLiteral("recorded");
                r.transition(RunState::Queued, QStringLiteral("local: job %1").arg(r.jobId));
                QVERIFY((*store)->save(r));
                ids << id;
            }
        }
        const ino_t index = inodeOf(ws.indexPath());
        QVERIFY(index != 0);
        std::atomic<bool> stop{false};
        std::atomic<bool> indexKept{true};
        std::atomic<int> notes{0};
        QHash<QString, int> noted;  // the noter's own count per run (read after it has stopped)
        // The index's inode, ten times a second: a rebuild that deleted the file would change it.
        std::thread indexWatch([&] {
            while (!stop) {
                if (inodeOf(ws.indexPath()) != index) indexKept = false;
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        });
        // A third writer of records, in this process but on its own thread and store.
        std::thread noter([&] {
            auto store = RunStore::open(ws);
            for (int k = 0; !stop; ++k) {
                for (const QString& id : ids)
                    if ((*store)->update(id, [&](RunRecord& r) {
                            r.history.append({r.state, QDateTime::currentDateTimeUtc(), QStringLiteral("note %1").arg(k)});
                            return Status(Done{});
                        })) {
                        ++notes;
                        ++noted[id];
                    }
                std::this_thread::sleep_for(std::chrono::milliseconds(1000));
            }
        });
        // A failed check returns early: the threads are stopped and joined on every way out.
        struct Joiner {
            std::atomic<bool>& stop;
            std::thread& a;
            std::thread& b;
            ~Joiner()
            {
                stop = true;
                if (a.joinable()) a.join();
                if (b.joinable()) b.join();
            }
        } joiner{stop, indexWatch, noter};
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        cli.setProcessEnvironment(env);
        cli.setProcessChannelMode(QProcess::MergedChannels);
        cli.start(QStringLiteral(SCALEDESK_CLI),
                  {QStringLiteral("--workspace"), root, QStringLiteral("status"), QStringLiteral("--wait"), QStringLiteral("--interval"),
                   QStringLiteral("1")});
        QVERIFY(cli.waitForStarted());
        {
            WorkspaceController controller(root);
            auto allDone = [&] {
                for (const QString& id : ids)
                    if (!controller.snapshot(id) || controller.snapshot(id)->record.state != RunState::Completed) return false;
                return true;
            };
            for (const QString& id : ids) controller.loadRun(id);
            QTRY_VERIFY_WITH_TIMEOUT(allDone(), (seconds + 120) * 1000);
        }
        // It may have ended first (waitForFinished is false for a process already finished).
        QVERIFY2(cli.state() == QProcess::NotRunning || cli.waitForFinished((seconds + 120) * 1000), "status --wait did not end");
        QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
        QCOMPARE(cli.exitCode(), 0);
        stop = true;
        noter.join();
        indexWatch.join();
        QVERIFY2(indexKept, "the run index was deleted while both were polling");
        QVERIFY(notes > kRuns);
        auto store = RunStore::open(ws);
        QVERIFY(store);
        for (const QString& id : ids) {
            const QString dir = root + QStringLiteral("/local/runs/") + id;
            QCOMPARE(slurp(ws.runDir(id) + QStringLiteral("/metrics.jsonl")), slurp(dir + QStringLiteral("/metrics.jsonl")));
            const RunRecord r = *(*store)->load(id);
            QCOMPARE(r.state, RunState::Completed);
            QStringList states;
            QSet<QString> seen;
            int noteCount = 0;
            for (const auto& h : r.history) {
                if (h.note.startsWith(QLatin1String("note "))) {
                    QVERIFY2(!seen.contains(h.note), qPrintable(id + QStringLiteral(": ") + h.note + QStringLiteral(" twice")));
                    seen.insert(h.note);
                    ++noteCount;
                    continue;
                }
                if (states.isEmpty() || states.last() != runStateName(h.state)) states << runStateName(h.state);
            }
            QCOMPARE(states.join(QLatin1Char(' ')), QStringLiteral("queued running completed"));
            // Every note the noter wrote is there, once: no update lost another's.
            QCOMPARE(noteCount, noted.value(id));
        }
        for (QProcess* p : writers) p->waitForFinished(10000);
    }
};

QTEST_MAIN(TestGuiConcurrent)
#include "tst_gui_concurrent.moc"
