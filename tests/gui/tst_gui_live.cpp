// The window's live loop, watched as a user would over whole runs: the real trainer on the local
// profile, the real controller and window (offscreen). A sampler thread compares every run's
// metrics.jsonl with its mirror ten times a second: each write must be mirrored within 2 s, until
// the run ends, and the window's states must equal the real outcome. Also: the same with a
// transport that fails one poll in three; Cancel pressed after a run completed; a requeue in a
// copied workspace.
#include "app/mainwindow.h"
#include "config/profiles.h"
#include "views/runview.h"
#include "views/scalingview.h"
#include "workspace/runlistmodel.h"
#include "workspace/workspacecontroller.h"

#include <QApplication>
#include <QDate>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QListWidget>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

using namespace scaledesk;
using namespace scaledesk::gui;

namespace {
double nowS() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Fails every `period`-th poll (the exec that carries "echo @files"), as a flaky network would.
class FlakyTransport final : public Transport {
public:
    FlakyTransport(std::unique_ptr<Transport> inner, std::atomic<int>* period) : m_inner(std::move(inner)), m_period(period) {}
    QString describe() const override { return m_inner->describe(); }
    Expected<ExecResult> exec(const QString& command, int timeoutMs, Idempotent idempotent) override
    {
        if (command.contains(QLatin1String("echo @files"))) {
            if (const int ms = hangMs.exchange(0); ms > 0) {  // one poll stops answering for a while
                hanging = true;
                std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            }
            const int period = m_period->load();
            if (period < 0 || (period > 0 && ++m_polls % period == 0)) {
                ++failed;
                return Error{ErrorCode::TransportIo, QStringLiteral("injected: the connection dropped"), describe()};
            }
        }
        return m_inner->exec(command, timeoutMs, idempotent);
    }
    Status writeFile(const QString& p, const QByteArray& d, int mode) override { return m_inner->writeFile(p, d, mode); }
    Expected<RemoteFileInfo> stat(const QString& p) override { return m_inner->stat(p); }
    Expected<QByteArray> readAt(const QString& p, qint64 o, qint64 n) override { return m_inner->readAt(p, o, n); }
    Status makeDirs(const QString& p) override { return m_inner->makeDirs(p); }
    Expected<QString> absolutePath(const QString& p) override { return m_inner->absolutePath(p); }
    TransportStats stats() const override { return m_inner->stats(); }
    static inline std::atomic<int> failed{0};
    static inline std::atomic<int> hangMs{0};
    static inline std::atomic<bool> hanging{false};

private:
    std::unique_ptr<Transport> m_inner;
    std::atomic<int>* m_period;  // 0: never fail; n: every n-th poll; -1: every poll
    int m_polls = 0;
};

// Samples each run's trainer file and mirror: for every size the trainer's file reached, how long
// the mirror took to reach it.
class Sampler {
public:
    Sampler(QString workspace) : m_ws(std::move(workspace)) {}
    ~Sampler() { stop(); }
    void follow(const QString& id)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_runs[id];
    }
    void start()
    {
        m_thread = std::thread([this] {
            while (!m_stop) {
                {
                    std::lock_guard<std::mutex> lock(m_mutex);
                    const double t = nowS();
                    for (auto& [id, run] : m_runs) {
                        const qint64 remote =
                            QFileInfo(m_ws + QStringLiteral("/local/runs/") + id + QStringLiteral("/metrics.jsonl")).size();
                        const qint64 mirror = QFileInfo(m_ws + QStringLiteral("/runs/") + id + QStringLiteral("/metrics.jsonl")).size();
                        if (remote > run.lastRemote) {
                            run.pending.push_back({remote, t});
                            run.lastRemote = remote;
                        }
                        while (!run.pending.empty() && mirror >= run.pending.front().first) {
                            run.worstLag = std::max(run.worstLag, t - run.pending.front().second);
                            ++run.writesSeen;
                            run.pending.erase(run.pending.begin());
                        }
                    }
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        });
    }
    void stop()
    {
        m_stop = true;
        if (m_thread.joinable()) m_thread.join();
    }
    struct Run {
        qint64 lastRemote = 0;
        std::vector<std::pair<qint64, double>> pending;
        double worstLag = 0;
        int writesSeen = 0;
    };
    Run run(const QString& id)
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_runs[id];
    }

private:
    QString m_ws;
    std::mutex m_mutex;
    std::map<QString, Run> m_runs;
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
};

QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}
}  // namespace

class TestGuiLive : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    std::atomic<int> m_failEvery{0};

    LaunchRequest request(const QString& root, const QString& sweep, int points, const QString& config)
    {
        LaunchRequest r;
        r.profile = builtinLocalProfile(Workspace(root));
        for (int i = 1; i <= points; ++i) {
            RunPoint p;
            p.sweep = sweep;
            p.strategy = QStringLiteral("ddp");
            p.repetition = i;
            p.runId = QStringLiteral("%1-ddp-1x1-r%2").arg(sweep).arg(i);
            r.points << p;
        }
        r.options.configFile = QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml");
        r.options.configName = config;
        r.makeData = true;
        return r;
    }
    // The run selected in the navigator (empty: none).
    static QString selectedRun(MainWindow& w)
    {
        const auto rows = w.runTable()->selectionModel()->selectedRows();
        return rows.isEmpty() ? QString() : w.runTable()->model()->data(rows.first(), Qt::UserRole).toString();
    }
    RunState state(const WorkspaceController& c, const QString& id)
    {
        for (const RunSummary& s : c.runs())
            if (s.id == id) return s.state;
        return RunState::Draft;
    }
    QString navigatorState(MainWindow& w, const QString& id)
    {
        for (int r = 0; r < w.runModel()->rowCount(); ++r)
            if (w.runModel()->data(w.runModel()->index(r, 0), Qt::UserRole).toString() == id)
                return w.runModel()->data(w.runModel()->index(r, RunListModel::State)).toString();
        return QString();
    }

    // Four cpu-demo runs, two at once and two more while the first runs, followed live to their end.
    void followFourRuns(const QString& root, bool flaky)
    {
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        WorkspaceController controller(root);
        m_failEvery = flaky ? 3 : 0;
        FlakyTransport::failed = 0;
        controller.setTransportWrapper(
            [this](std::unique_ptr<Transport> t) { return std::unique_ptr<Transport>(new FlakyTransport(std::move(t), &m_failEvery)); });
        MainWindow w(controller);
        w.resize(1600, 1000);
        w.show();
        QList<bool> profileStates;
        connect(&controller, &WorkspaceController::profileState, this, [&](const QString&, bool ok) { profileStates << ok; });
        Sampler sampler(root);
        const LaunchRequest first = request(root, QStringLiteral("a"), 2, QStringLiteral("cpu-demo"));
        const LaunchRequest second = request(root, QStringLiteral("b"), 2, QStringLiteral("cpu-demo"));
        QStringList ids;
        for (const auto* r : {&first, &second})
            for (const RunPoint& p : r->points) {
                ids << p.runId;
                sampler.follow(p.runId);
            }
        sampler.start();
        QSignalSpy launched(&controller, &WorkspaceController::launchFinished);
        // As the Launch dialog's OK does: what was launched is selected, and Scaling shows its sweep.
        w.launchAndFollow(first);
        QTRY_COMPARE_WITH_TIMEOUT(state(controller, ids[0]), RunState::Running, 120000);
        QTRY_COMPARE(w.scalingView()->currentSweep(), QStringLiteral("a"));
        QTRY_VERIFY(selectedRun(w) == ids[0]);
        w.launchAndFollow(second);
        QTRY_COMPARE_WITH_TIMEOUT(launched.size(), 2, 120000);
        QTRY_COMPARE(w.scalingView()->currentSweep(), QStringLiteral("b"));
        QTRY_VERIFY(selectedRun(w) == second.points.first().runId);
        // Watch the first one in the run view meanwhile, as a user would.
        w.runView()->showRun(ids[0]);
        auto allEnded = [&] {
            for (const QString& id : ids)
                if (isActive(state(controller, id)) || state(controller, id) == RunState::Draft) return false;
            return true;
        };
        QTRY_VERIFY_WITH_TIMEOUT(allEnded(), 900000);
        QTest::qWait(300);
        sampler.stop();
        // The Scaling tab followed its sweep's runs to their end with no user action: every run in
        // the report, none left out as queued or without epochs (issue 34: it kept "no data").
        auto everyRunReported = [&] {
            const ScalingReport& rep = w.scalingView()->report();
            if (rep.sweep != QStringLiteral("b") || rep.runs.size() != 2) return false;
            for (const QString& warning : rep.warnings)
                if (warning.contains(QStringLiteral("left out")) || warning.contains(QStringLiteral("no epochs"))) return false;
            return true;
        };
        QTRY_VERIFY_WITH_TIMEOUT(everyRunReported(), 20000);
        QVERIFY(w.scalingView()->chartCount() > 0);
        for (const QString& id : ids) {
            const QString remote = root + QStringLiteral("/local/runs/") + id;
            const QString mirror = root + QStringLiteral("/runs/") + id;
            QCOMPARE(state(controller, id), RunState::Completed);  // the real outcome: exit 0 and a finished manifest
            QVERIFY(slurp(remote + QStringLiteral("/exit_code")).startsWith("0"));
            QCOMPARE(slurp(mirror + QStringLiteral("/metrics.jsonl")), slurp(remote + QStringLiteral("/metrics.jsonl")));
            QCOMPARE(navigatorState(w, id), QStringLiteral("completed"));
            const Sampler::Run r = sampler.run(id);
            qInfo("%s: %d writes followed, the slowest mirrored after %.2f s", qPrintable(id), r.writesSeen, r.worstLag);
            QVERIFY(r.writesSeen > 5);
            QVERIFY(r.pending.empty());
            if (!flaky) QVERIFY2(r.worstLag <= 2.0, qPrintable(QStringLiteral("%1: a write took %2 s to mirror").arg(id).arg(r.worstLag)));
            w.runView()->showRun(id);
            QTRY_VERIFY(w.runView()->headerText().contains(QStringLiteral("completed")));
            QVERIFY2(w.runView()->headerText().contains(QStringLiteral("ran for")), qPrintable(w.runView()->headerText()));
            QVERIFY(!w.runView()->headerText().contains(QStringLiteral("running for")));
            // Where it ran and in what precision, from its manifest.
            QVERIFY2(w.runView()->headerText().contains(QStringLiteral(" on cpu, fp32")), qPrintable(w.runView()->headerText()));
        }
        if (flaky) {
            // Polls failed and the next ones worked: the Profiles panel showed the error, then the recovery.
            QVERIFY(FlakyTransport::failed > 2);
            QVERIFY(profileStates.contains(false));
            QVERIFY(profileStates.last());
            const ProfileStatus st = controller.profileStatus(QStringLiteral("local"));
            QVERIFY(st.polledOk);
            QVERIFY(st.lastError.contains(QStringLiteral("injected")));
            QString panel;
            for (int i = 0; i < w.profileList()->count(); ++i) panel += w.profileList()->item(i)->text();
            QVERIFY2(panel.contains(QStringLiteral("connected, polled at")) && panel.contains(QStringLiteral("last error at")),
                     qPrintable(panel));
        }
    }

private slots:
    void initTestCase()
    {
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_tmp.filePath(QStringLiteral("settings")));
        if (qEnvironmentVariableIsSet("SCALEDESK_KEEP_TEST_DIRS")) m_tmp.setAutoRemove(false);
    }

    void fourRunsAreFollowedLiveToTheirEnd() { followFourRuns(m_tmp.filePath(QStringLiteral("live")), false); }

    void updatesResumeAfterFailedPolls() { followFourRuns(m_tmp.filePath(QStringLiteral("flaky")), true); }

    // The record said running while the job had already completed (no poll saw it end); Cancel
    // then records how it really ended.
    void cancelAfterCompletionKeepsTheRunCompleted()
    {
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        const QString root = m_tmp.filePath(QStringLiteral("late-cancel"));
        WorkspaceController controller(root);
        controller.setTransportWrapper(
            [this](std::unique_ptr<Transport> t) { return std::unique_ptr<Transport>(new FlakyTransport(std::move(t), &m_failEvery)); });
        m_failEvery = 0;
        const LaunchRequest r = request(root, QStringLiteral("late"), 1, QStringLiteral("cpu-tiny"));
        const QString id = r.points.first().runId;
        controller.launch(r);
        QTRY_COMPARE_WITH_TIMEOUT(state(controller, id), RunState::Running, 120000);
        m_failEvery = -1;  // from now on no poll gets through: the window does not see the end
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(root + QStringLiteral("/local/runs/") + id + QStringLiteral("/exit_code")), 300000);
        QCOMPARE(state(controller, id), RunState::Running);
        QVERIFY(controller.check(RunAction::Cancel, id).allowed);
        m_failEvery = 0;
        QSignalSpy acted(&controller, &WorkspaceController::actionFinished);
        controller.cancel(id);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 1, 60000);
        QCOMPARE(controller.snapshot(id)->record.state, RunState::Completed);
        QVERIFY2(controller.snapshot(id)->record.message.contains(QStringLiteral("exit 0")),
                 qPrintable(controller.snapshot(id)->record.message));
        for (const auto& h : controller.snapshot(id)->record.history) QVERIFY(h.state != RunState::Cancelled);
    }

    // A poll stops answering while the user presses Cancel: the watchdog gives up on that poll
    // alone (counting from when it started), polls go on over a fresh connection, and the Cancel,
    // queued behind the stuck poll, is carried out and reported, never dropped.
    void aStuckPollDropsNoUserAction()
    {
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        const QString root = m_tmp.filePath(QStringLiteral("stuck"));
        WorkspaceController controller(root);
        m_failEvery = 0;
        controller.setTransportWrapper(
            [this](std::unique_ptr<Transport> t) { return std::unique_ptr<Transport>(new FlakyTransport(std::move(t), &m_failEvery)); });
        PollScheduler::Settings settings;
        settings.timeoutMs = 3000;
        controller.setPollSettings(settings);
        const LaunchRequest r = request(root, QStringLiteral("stuck"), 1, QStringLiteral("cpu-short"));  // minutes
        const QString id = r.points.first().runId;
        controller.launch(r);
        QTRY_COMPARE_WITH_TIMEOUT(state(controller, id), RunState::Running, 120000);
        QStringList messages;
        connect(&controller, &WorkspaceController::message, this, [&](const QString& m) { messages << m; });
        FlakyTransport::hanging = false;
        FlakyTransport::hangMs = 10000;
        QTRY_VERIFY_WITH_TIMEOUT(FlakyTransport::hanging.load(), 60000);
        QSignalSpy acted(&controller, &WorkspaceController::actionFinished);
        controller.cancel(id);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 1, 60000);
        QVERIFY2(acted.first().at(2).toBool(), qPrintable(acted.first().at(3).toString()));
        QVERIFY2(messages.join(QLatin1Char('\n')).contains(QStringLiteral("wait for the connection that stopped answering")),
                 qPrintable(messages.join(QLatin1Char('\n'))));
        QTRY_COMPARE_WITH_TIMEOUT(state(controller, id), RunState::Cancelled, 120000);
    }

    // A copied workspace opens with its runs, and a requeue there runs in the copy.
    void aCopiedWorkspaceActsOnItself()
    {
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        const QString original = m_tmp.filePath(QStringLiteral("original"));
        const LaunchRequest r = request(original, QStringLiteral("moved"), 1, QStringLiteral("cpu-tiny"));
        const QString id = r.points.first().runId;
        {
            WorkspaceController controller(original);
            controller.launch(r);
            QTRY_COMPARE_WITH_TIMEOUT(state(controller, id), RunState::Completed, 300000);
        }
        const QString copy = m_tmp.filePath(QStringLiteral("the copy"));
        QCOMPARE(QProcess::execute(QStringLiteral("cp"), {QStringLiteral("-a"), original, copy}), 0);
        const QByteArray originalExit = slurp(original + QStringLiteral("/local/runs/") + id + QStringLiteral("/job.pid"));
        WorkspaceController controller(copy);
        QTRY_COMPARE(controller.runs().size(), 1);
        controller.loadRun(id);
        QTRY_VERIFY(controller.snapshot(id));
        QCOMPARE(controller.snapshot(id)->record.remoteDir, copy + QStringLiteral("/local/runs/") + id);
        QSignalSpy acted(&controller, &WorkspaceController::actionFinished);
        controller.requeue(id, true);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 1, 60000);
        QVERIFY2(acted.at(0).at(2).toBool(), qPrintable(acted.at(0).at(3).toString()));
        QTRY_COMPARE_WITH_TIMEOUT(state(controller, id), RunState::Completed, 300000);
        // The requeued job ran in the copy, resumed from the copy's checkpoint; the original is untouched.
        QVERIFY(slurp(copy + QStringLiteral("/local/runs/") + id + QStringLiteral("/job.pid")) != originalExit);
        QCOMPARE(slurp(original + QStringLiteral("/local/runs/") + id + QStringLiteral("/job.pid")), originalExit);
        QVERIFY(slurp(copy + QStringLiteral("/runs/") + id + QStringLiteral("/metrics.jsonl")).contains("\"event\":\"resumed\""));
        QVERIFY(!slurp(original + QStringLiteral("/runs/") + id + QStringLiteral("/metrics.jsonl")).contains("\"event\":\"resumed\""));
    }
};

QTEST_MAIN(TestGuiLive)
#include "tst_gui_live.moc"
