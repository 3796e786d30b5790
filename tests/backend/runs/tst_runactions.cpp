// The lifecycle layer (RunActions) over the local transport and scheduler: which states allow
// which action, launch with both partial-failure policies, cancel and checkpoint-and-stop recorded
// and ended on evidence, requeue with its resubmit fallback and nothing else. The job is the
// local scheduler's real job.sh; the trainer is a small stand-in script (the real trainer runs in
// tests/backend/cli and tests/gui).
#include "config/profiles.h"
#include "remote/localtransport.h"
#include "runs/runactions.h"
#include "runs/runpoller.h"
#include "scheduler/localscheduler.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace scaledesk;

namespace {
// A scheduler that forwards to the local one, except for requeue, which fails as told.
class RequeueFails final : public Scheduler {
public:
    RequeueFails(Scheduler& inner, ErrorCode code) : m_inner(inner), m_code(code) {}
    QString kind() const override { return QStringLiteral("slurm"); }
    QString scriptName() const override { return m_inner.scriptName(); }
    QString renderScript(const JobRequest& r) const override { return m_inner.renderScript(r); }
    Expected<Submission> submit(const QString& dir) override
    {
        ++submits;
        return m_inner.submit(dir);
    }
    QString queryCommand(const QList<JobRef>& jobs) const override { return m_inner.queryCommand(jobs); }
    QHash<QString, JobStatus> parseQuery(const QByteArray& o, const QList<JobRef>& jobs) const override
    {
        return m_inner.parseQuery(o, jobs);
    }
    Expected<QString> findJob(const JobRef& ref) override { return m_inner.findJob(ref); }
    Status cancel(const JobRef& job, const QString& signal) override { return m_inner.cancel(job, signal); }
    Expected<QString> requeue(const JobRef& job) override
    {
        ++requeues;
        return Error{m_code, QStringLiteral("scontrol requeue failed: told to fail"), job.jobId};
    }
    int submits = 0;
    int requeues = 0;

private:
    Scheduler& m_inner;
    ErrorCode m_code;
};

QByteArray slurp(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

RunRecord withState(RunState s)
{
    RunRecord r;
    r.id = QStringLiteral("r");
    r.remoteDir = QStringLiteral("/far/runs/r");
    r.jobId = QStringLiteral("42");
    r.submitStep = QStringLiteral("recorded");
    r.transition(s);
    return r;
}
}  // namespace

class TestRunActions : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;
    std::unique_ptr<Workspace> m_ws;
    std::unique_ptr<RunStore> m_store;
    LocalTransport m_transport;
    LocalScheduler m_scheduler{m_transport};
    ClusterProfile m_profile;
    QString m_configs;
    int m_case = 0;

    LaunchRequest request(const QStringList& ids, const QString& config)
    {
        LaunchRequest req;
        req.profile = m_profile;
        for (const QString& id : ids) {
            RunPoint p;
            p.runId = id;
            p.sweep = QStringLiteral("s");
            p.strategy = QStringLiteral("ddp");
            req.points << p;
        }
        req.options.configFile = m_configs;
        req.options.configName = config;
        return req;
    }
    RunRecord load(const QString& id)
    {
        auto r = m_store->load(id);
        if (!r) qFatal("%s", qPrintable(r.error().text()));
        return *r;
    }
    // Polls until the run satisfies `pred` (30 s at most).
    bool pollUntil(const QString& id, const std::function<bool(const RunRecord&)>& pred)
    {
        QElapsedTimer t;
        t.start();
        RunPoller poller(*m_store, m_transport, m_scheduler);
        while (t.elapsed() < 30000) {
            auto report = poller.poll({id});
            if (!report) qWarning() << report.error().text();
            if (pred(load(id))) return true;
            QThread::msleep(200);
        }
        return false;
    }
    static bool hasNote(const RunRecord& r, const QString& text)
    {
        for (const auto& h : r.history)
            if (h.note.contains(text)) return true;
        return false;
    }
    static bool wentThrough(const RunRecord& r, RunState s)
    {
        for (const auto& h : r.history)
            if (h.state == s) return true;
        return false;
    }
    QString id(const QString& name) { return QStringLiteral("%1-%2").arg(name).arg(m_case); }

private slots:
    void initTestCase()
    {
        m_ws = std::make_unique<Workspace>(m_tmp.filePath(QStringLiteral("ws")));
        auto s = RunStore::open(*m_ws);
        QVERIFY(s);
        m_store = std::move(s).value();
        // The stand-in trainer: "quick" finishes at once; "slow" runs until USR1 or TERM, then
        // checkpoints (exit 75) as the real one does.
        const QString trainer = m_tmp.filePath(QStringLiteral("fake-train"));
        QFile f(trainer);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("#!/bin/bash\n"
                "config=$4\n"
                "echo \"$MASTER_PORT\" > master_port\n"
                "echo '{\"status\":\"running\",\"start_utc\":\"2026-01-01T00:00:00.000Z\"}' > manifest.json\n"
                "if [ \"$config\" = slow ]; then\n"
                "  trap 'echo \"{\\\"status\\\":\\\"preempted\\\"}\" > manifest.json; exit 75' USR1 TERM\n"
                "  for i in $(seq 1 600); do sleep 0.1; done\n"
                "fi\n"
                "echo '{\"status\":\"finished\"}' > manifest.json\n");
        f.close();
        QFile::setPermissions(trainer, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        m_configs = m_tmp.filePath(QStringLiteral("configs.yaml"));
        QFile c(m_configs);
        QVERIFY(c.open(QIODevice::WriteOnly));
        c.write("quick: {}\nslow: {}\n");
        c.close();
        m_profile = builtinLocalProfile(*m_ws);
        m_profile.trainerPath = trainer;
    }
    void init() { ++m_case; }

    void eachActionAppliesOnlyWhereItMakesSense_data()
    {
        QTest::addColumn<int>("state");
        QTest::addColumn<bool>("cancel");
        QTest::addColumn<bool>("stop");
        QTest::addColumn<bool>("requeue");
        QTest::addColumn<bool>("requeueAsks");
        QTest::newRow("draft") << int(RunState::Draft) << false << false << false << false;
        QTest::newRow("submitting") << int(RunState::Submitting) << false << false << false << false;
        QTest::newRow("queued") << int(RunState::Queued) << true << false << false << false;
        QTest::newRow("running") << int(RunState::Running) << true << true << false << false;
        QTest::newRow("requeued") << int(RunState::Requeued) << true << false << false << false;
        QTest::newRow("completed") << int(RunState::Completed) << false << false << true << true;
        QTest::newRow("failed") << int(RunState::Failed) << false << false << true << false;
        QTest::newRow("cancelled") << int(RunState::Cancelled) << false << false << true << false;
        QTest::newRow("timeout") << int(RunState::Timeout) << false << false << true << false;
        QTest::newRow("lost") << int(RunState::Lost) << false << false << true << false;
        QTest::newRow("submit-failed") << int(RunState::SubmitFailed) << false << false << true << false;
    }
    void eachActionAppliesOnlyWhereItMakesSense()
    {
        QFETCH(int, state);
        QFETCH(bool, cancel);
        QFETCH(bool, stop);
        QFETCH(bool, requeue);
        QFETCH(bool, requeueAsks);
        RunRecord r = withState(RunState(state));
        if (r.state == RunState::SubmitFailed) r.submitStep = QStringLiteral("sbatch");  // the script is there
        for (auto [action, expected] :
             {std::pair{RunAction::Cancel, cancel}, std::pair{RunAction::CheckpointStop, stop}, std::pair{RunAction::Requeue, requeue}}) {
            const ActionCheck c = checkAction(action, r);
            QCOMPARE(c.allowed, expected);
            QCOMPARE(c.reason.isEmpty(), expected);  // every refusal says why
        }
        QCOMPARE(!checkAction(RunAction::Requeue, r).confirm.isEmpty(), requeueAsks);
        QVERIFY(checkAction(RunAction::Cancel, r).confirm.isEmpty() != cancel);  // a cancel is always asked first
        // A submit that failed while uploading has nothing on the cluster to run again.
        RunRecord uploading = withState(RunState::SubmitFailed);
        uploading.submitStep = QStringLiteral("upload");
        QVERIFY(!checkAction(RunAction::Requeue, uploading).allowed);
    }

    void launchRecordsEveryPointAndRefusesIdsThatExist()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QStringList ids{id(QStringLiteral("a")), id(QStringLiteral("b"))};
        auto r = actions.launch(request(ids, QStringLiteral("quick")));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QVERIFY(r->complete());
        QCOMPARE(r->submitted().size(), 2);
        for (const QString& i : ids) {
            QCOMPARE(load(i).state, RunState::Queued);
            QVERIFY(pollUntil(i, [](const RunRecord& x) { return x.state == RunState::Completed; }));
        }
        // Launched again: refused before anything is recorded or sent.
        const QString other = id(QStringLiteral("c"));
        auto again = actions.launch(request({other, ids.first()}, QStringLiteral("quick")));
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::RunExists);
        QVERIFY(!m_store->exists(other));
        // An unknown config is refused the same way.
        auto bad = actions.launch(request({other}, QStringLiteral("no-such-config")));
        QVERIFY(!bad);
        QVERIFY(!m_store->exists(other));
        // A second workspace on the same remote_root (another laptop's): a launch of ids whose run
        // folders are there is refused whole, each folder left as it was, nothing recorded.
        QTemporaryDir otherWs;
        auto otherStore = RunStore::open(Workspace(otherWs.path()));
        QVERIFY(otherStore);
        const QString folder = m_profile.remoteRoot + QStringLiteral("/runs/") + ids.first();
        const QByteArray manifest = slurp(folder + QStringLiteral("/manifest.json"));
        QVERIFY(!manifest.isEmpty());
        RunActions elsewhere(**otherStore, m_transport, m_scheduler);
        auto taken = elsewhere.launch(request({other, ids.first(), ids.last()}, QStringLiteral("quick")));
        QVERIFY(!taken);
        QCOMPARE(taken.error().code, ErrorCode::RunExists);
        QVERIFY2(taken.error().message.startsWith(QStringLiteral("2 run folder(s) of this launch exist already")) &&
                     taken.error().message.contains(folder),
                 qPrintable(taken.error().text()));
        for (const QString& i : {other, ids.first(), ids.last()}) QVERIFY(!(*otherStore)->exists(i));
        QVERIFY(!QFileInfo::exists(m_profile.remoteRoot + QStringLiteral("/runs/") + other));
        QCOMPARE(slurp(folder + QStringLiteral("/manifest.json")), manifest);
    }

    void aSweepFollowsItsPartialFailurePolicy_data()
    {
        QTest::addColumn<bool>("stop");
        QTest::newRow("continue") << false;
        QTest::newRow("stop") << true;
    }
    void aSweepFollowsItsPartialFailurePolicy()
    {
        QFETCH(bool, stop);
        const QStringList ids{id(QStringLiteral("p1")), id(QStringLiteral("p2")), id(QStringLiteral("p3"))};
        // The second point's run folder is taken on the far side after the launch's own check (a
        // file put where it would be just before that point's submit, as another workspace's launch
        // racing this one would): that point is refused before anything of it is recorded; the
        // others follow the policy.
        QDir().mkpath(m_profile.remoteRoot + QStringLiteral("/runs"));
        const auto takeSecondFolder = [&](const ProgressStep& step) {
            if (!step.text.startsWith(QStringLiteral("submitting ") + ids[1] + QLatin1Char(' '))) return;
            QFile blocker(m_profile.remoteRoot + QStringLiteral("/runs/") + ids[1]);
            QVERIFY(blocker.open(QIODevice::WriteOnly));
        };
        LaunchRequest req = request(ids, QStringLiteral("quick"));
        req.onFailure = stop ? OnSubmitFailure::Stop : OnSubmitFailure::Continue;
        RunActions actions(*m_store, m_transport, m_scheduler);
        auto r = actions.launch(req, takeSecondFolder);
        QVERIFY(r);
        QVERIFY(!r->complete());
        QCOMPARE(r->failed().size(), 1);
        QCOMPARE(r->failed().first().first, ids[1]);
        QCOMPARE(load(ids[0]).state, RunState::Queued);
        QVERIFY(!m_store->exists(ids[1]));
        const Error& why = r->failed().first().second;
        QCOMPARE(why.code, ErrorCode::RunExists);
        QVERIFY2(why.location.endsWith(QStringLiteral("/runs/") + ids[1]), qPrintable(why.text()));  // the folder named
        if (stop) {
            QCOMPARE(r->submitted().size(), 1);
            QCOMPARE(r->notTried(), QStringList{ids[2]});
            QVERIFY(!m_store->exists(ids[2]));
            QVERIFY(r->summary().contains(QStringLiteral("1 not tried")));
        } else {
            QCOMPARE(r->submitted().size(), 2);
            QVERIFY(r->notTried().isEmpty());
            QCOMPARE(load(ids[2]).state, RunState::Queued);
        }
        QVERIFY(r->summary().contains(QStringLiteral("1 failed")));
        for (const QString& i : {ids[0], ids[2]})
            if (m_store->exists(i)) QVERIFY(pollUntil(i, [](const RunRecord& x) { return !isActive(x.state); }));
    }

    // A run reads its config's data paths in its new folder: a relative path with nothing linked
    // there is refused before anything is recorded, naming the config's line; a link to a folder
    // without the file names that file; the synthetic loader reads nothing.
    void aLaunchWhoseRunsCannotFindTheirDataIsRefused()
    {
        const QString yaml = m_tmp.filePath(QStringLiteral("data-configs.yaml"));
        QFile c(yaml);
        QVERIFY(c.open(QIODevice::WriteOnly));
        c.write("base: &base\n  data_loader_config: 'lowmem'\n  train_path: 'data/train.h5'\n  val_path: 'data/valid.h5'\n"
                "rel:\n  <<: *base\n"
                "abs:\n  <<: *base\n  train_path: '/no/such/place/train.h5'\n  val_path: '/no/such/place/valid.h5'\n"
                "syn:\n  <<: *base\n  data_loader_config: 'synthetic'\n");
        c.close();
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("nodata"));
        LaunchRequest req = request({run}, QStringLiteral("rel"));
        req.options.configFile = yaml;
        auto r = actions.launch(req);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::DataMissing);
        QCOMPARE(r.error().location, yaml + QStringLiteral(":3"));  // base's train_path, merged into rel
        QVERIFY2(r.error().message.contains(QStringLiteral("train_path 'data/train.h5' (config rel)")), qPrintable(r.error().text()));
        QVERIFY2(r.error().message.contains(QStringLiteral("--make-data")), qPrintable(r.error().text()));
        QVERIFY(!m_store->exists(run));

        // Linked to a folder that holds train.h5 only: val_path is the one named.
        const QString data = m_tmp.filePath(QStringLiteral("some-data"));
        QVERIFY(QDir().mkpath(data));
        QFile train(data + QStringLiteral("/train.h5"));
        QVERIFY(train.open(QIODevice::WriteOnly));
        train.close();
        req.options.dataDir = data;
        r = actions.launch(req);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::DataMissing);
        QCOMPARE(r.error().location, yaml + QStringLiteral(":4"));
        QVERIFY2(r.error().message.contains(data + QStringLiteral("/valid.h5")), qPrintable(r.error().text()));
        QVERIFY(!m_store->exists(run));

        // The check alone: both files there, nothing to say; a synthetic loader (by the config or
        // by the trainer's arguments) reads nothing; absolute paths the far side lacks are warned of.
        QFile valid(data + QStringLiteral("/valid.h5"));
        QVERIFY(valid.open(QIODevice::WriteOnly));
        valid.close();
        auto ok = checkRunData(m_transport, req.options, m_profile.remoteRoot + QStringLiteral("/runs/") + run);
        QVERIFY2(ok && ok->isEmpty(), qPrintable(ok ? ok->join(QLatin1Char('\n')) : ok.error().text()));
        SubmitOptions none = req.options;
        none.dataDir.clear();
        none.configName = QStringLiteral("syn");
        ok = checkRunData(m_transport, none, QString());
        QVERIFY2(ok && ok->isEmpty(), qPrintable(ok ? ok->join(QLatin1Char('\n')) : ok.error().text()));
        none.configName = QStringLiteral("rel");
        none.trainerArgs = QStringList{QStringLiteral("--data_loader_config"), QStringLiteral("synthetic")};
        ok = checkRunData(m_transport, none, QString());
        QVERIFY2(ok && ok->isEmpty(), qPrintable(ok ? ok->join(QLatin1Char('\n')) : ok.error().text()));
        none.trainerArgs = QStringList{QStringLiteral("--data_loader_config=lowmem")};
        QVERIFY(!checkRunData(m_transport, none, QString()));
        none.trainerArgs.clear();
        none.configName = QStringLiteral("abs");
        ok = checkRunData(m_transport, none, QString());
        QVERIFY2(ok && ok->size() == 2, qPrintable(ok ? ok->join(QLatin1Char('\n')) : ok.error().text()));
        QVERIFY2(ok->first().startsWith(yaml + QStringLiteral(":9: train_path '/no/such/place/train.h5'")), qPrintable(ok->first()));
    }

    void cancelOfARunningRunIsRecordedAndEndsOnEvidence()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("cancel"));
        QVERIFY(actions.launch(request({run}, QStringLiteral("slow"))));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        auto done = actions.cancel(run);
        QVERIFY2(done, qPrintable(done ? QString() : done.error().text()));
        QVERIFY(hasNote(load(run), QStringLiteral("cancel requested by the user")));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return !isActive(x.state); }));
        QCOMPARE(load(run).state, RunState::Cancelled);  // the trainer checkpointed on TERM: exit 75
        // Ended: a second cancel is refused, with why, and changes nothing.
        const auto history = load(run).history.size();
        auto again = actions.cancel(run);
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::ActionRefused);
        QVERIFY(again.error().message.contains(QStringLiteral("already ended")));
        QCOMPARE(load(run).history.size(), history);
    }

    // ~/work → /data/work: /proc names the job's physical folder; the run is followed and
    // cancelled all the same (it was once recorded lost while it trained).
    void aRunFolderBehindASymlinkIsFollowed()
    {
        const QString real = m_tmp.filePath(QStringLiteral("data/work"));
        const QString link = m_tmp.filePath(QStringLiteral("work"));
        QVERIFY(QDir().mkpath(real));
        QVERIFY(QFile::exists(link) || QFile::link(real, link));
        LaunchRequest req = request({id(QStringLiteral("linked"))}, QStringLiteral("slow"));
        req.profile.remoteRoot = link + QStringLiteral("/remote");
        const QString run = req.points.first().runId;
        RunActions actions(*m_store, m_transport, m_scheduler);
        QVERIFY(actions.launch(req));
        QVERIFY2(load(run).remoteDir.startsWith(link + QLatin1Char('/')), qPrintable(load(run).remoteDir));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        RunPoller poller(*m_store, m_transport, m_scheduler);
        for (int i = 0; i < 5; ++i) {
            QVERIFY(poller.poll({run}));
            QCOMPARE(load(run).state, RunState::Running);
            QThread::msleep(200);
        }
        auto done = actions.cancel(run);
        QVERIFY2(done, qPrintable(done ? QString() : done.error().text()));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return !isActive(x.state); }));
        QCOMPARE(load(run).state, RunState::Cancelled);
    }

    // Three runs at once on one machine (a profile of 3 slots): each job binds a port of its own (a
    // sweep's 2-rank points once all rendezvoused at 29500, and two of three timed out).
    void concurrentLocalRunsGetPortsOfTheirOwn()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QStringList runs{id(QStringLiteral("port-a")), id(QStringLiteral("port-b")), id(QStringLiteral("port-c"))};
        LaunchRequest req = request(runs, QStringLiteral("slow"));
        req.profile.localSlots = 3;
        QVERIFY(actions.launch(req));
        QSet<int> ports;
        for (const QString& run : runs) {
            QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
            const QString file = load(run).remoteDir + QStringLiteral("/master_port");
            QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(file).size() > 0, 10000);
            QFile f(file);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const int port = f.readAll().trimmed().toInt();
            QVERIFY2(port >= 20000 && port < 30000, qPrintable(QString::number(port)));
            ports << port;
        }
        QCOMPARE(ports.size(), 3);
        for (const QString& run : runs) QVERIFY(actions.cancel(run));
        for (const QString& run : runs) QVERIFY(pollUntil(run, [](const RunRecord& x) { return !isActive(x.state); }));
    }

    void cancelAfterTheJobEndedRecordsHowItEnded()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("late"));
        QVERIFY(actions.launch(request({run}, QStringLiteral("quick"))));
        // The job ends before any poll sees it: the record still says queued.
        const QString exitCode = load(run).remoteDir + QStringLiteral("/exit_code");
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(exitCode), 30000);
        QCOMPARE(load(run).state, RunState::Queued);
        auto done = actions.cancel(run);
        QVERIFY2(done, qPrintable(done ? QString() : done.error().text()));
        QCOMPARE(done->state, RunState::Completed);
        QVERIFY(!wentThrough(load(run), RunState::Cancelled));
        QVERIFY(!QFile::exists(load(run).remoteDir + QStringLiteral("/cancel_requested")));
    }

    void checkpointStopWaitsForTheJobToRun()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("stop"));
        QVERIFY(actions.launch(request({run}, QStringLiteral("slow"))));
        auto early = actions.checkpointStop(run);  // queued: nothing to checkpoint yet
        QVERIFY(!early);
        QCOMPARE(early.error().code, ErrorCode::ActionRefused);
        QVERIFY(early.error().message.contains(QStringLiteral("not running yet")));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        QVERIFY(actions.checkpointStop(run));
        QVERIFY(hasNote(load(run), QStringLiteral("SIGUSR1")));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return !isActive(x.state); }));
        QCOMPARE(load(run).state, RunState::Cancelled);
        QVERIFY(load(run).message.contains(QStringLiteral("requeue resumes it")));
    }

    // Requeue from the window and from the CLI at once: one of them waits its turn. While another
    // process holds the run's submit lock (its requeue is under way), this requeue is refused and
    // starts nothing; once it is free, the requeue runs.
    void concurrentRequeuesOfOneRunAreSerialised()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("requeue2"));
        QVERIFY(actions.launch(request({run}, QStringLiteral("slow"))));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        QVERIFY(actions.checkpointStop(run));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Cancelled; }));
        const QString job = load(run).jobId;
        {
            QLockFile other(m_ws->runDir(run) + QStringLiteral("/.submitting"));
            QVERIFY(other.tryLock(0));
            auto refused = actions.requeue(run);
            QVERIFY(!refused);
            QCOMPARE(refused.error().code, ErrorCode::ActionRefused);
            QVERIFY2(refused.error().message.contains(QStringLiteral("being requeued or submitted by another process")),
                     qPrintable(refused.error().text()));
            QCOMPARE(load(run).jobId, job);
            QCOMPARE(load(run).state, RunState::Cancelled);
        }
        auto again = actions.requeue(run);
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QVERIFY(again->jobId != job);
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        QVERIFY(actions.cancel(run));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return !isActive(x.state); }));
    }

    void requeueRunsStoppedRunsAgainAndAsksForCompletedOnes()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("requeue"));
        QVERIFY(actions.launch(request({run}, QStringLiteral("slow"))));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        auto busy = actions.requeue(run);  // running: one folder never gets two jobs
        QVERIFY(!busy);
        QCOMPARE(busy.error().code, ErrorCode::ActionRefused);
        QVERIFY(actions.checkpointStop(run));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Cancelled; }));
        const QString firstJob = load(run).jobId;
        auto again = actions.requeue(run);
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->state, RunState::Queued);
        QVERIFY(again->jobId != firstJob);
        QVERIFY(again->message.contains(QStringLiteral("requeued by the user")));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        QVERIFY(actions.checkpointStop(run));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Cancelled; }));

        const QString quick = id(QStringLiteral("completed"));
        QVERIFY(actions.launch(request({quick}, QStringLiteral("quick"))));
        QVERIFY(pollUntil(quick, [](const RunRecord& x) { return x.state == RunState::Completed; }));
        auto unasked = actions.requeue(quick);
        QVERIFY(!unasked);
        QVERIFY(unasked.error().message.contains(QStringLiteral("confirm")));
        QCOMPARE(load(quick).state, RunState::Completed);
        auto asked = actions.requeue(quick, true);
        QVERIFY(asked);
        QVERIFY(pollUntil(quick, [](const RunRecord& x) { return x.state == RunState::Completed; }));
    }

    // Whatever asks (a requeue racing a poll, a second app), one run folder never runs two job.sh.
    void aRunFolderNeverRunsTwoJobs()
    {
        RunActions actions(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("twice"));
        QVERIFY(actions.launch(request({run}, QStringLiteral("slow"))));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        const QString dir = load(run).remoteDir;
        auto second = m_scheduler.submit(dir);  // below the layer, which would refuse it
        QVERIFY(second);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                QFile out(dir + QStringLiteral("/job.out"));
                return out.open(QIODevice::ReadOnly) && out.readAll().contains("another job.sh runs");
            }(),
            10000);
        QFile pid(dir + QStringLiteral("/job.pid"));
        QVERIFY(pid.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(pid.readAll()).trimmed(), load(run).jobId);  // the first one's
        QVERIFY(!QFile::exists(dir + QStringLiteral("/exit_code")));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Running; }));
        QVERIFY(actions.checkpointStop(run));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Cancelled; }));
    }

    void requeueResubmitsOnlyWhenTheSchedulerForgotTheJob_data()
    {
        QTest::addColumn<int>("code");
        QTest::addColumn<bool>("resubmits");
        QTest::newRow("forgotten") << int(ErrorCode::SchedulerUnknownJob) << true;
        QTest::newRow("timeout") << int(ErrorCode::TransportTimeout) << false;
        QTest::newRow("refused") << int(ErrorCode::SchedulerRejected) << false;
    }
    void requeueResubmitsOnlyWhenTheSchedulerForgotTheJob()
    {
        QFETCH(int, code);
        QFETCH(bool, resubmits);
        RunActions launcher(*m_store, m_transport, m_scheduler);
        const QString run = id(QStringLiteral("forgot"));
        QVERIFY(launcher.launch(request({run}, QStringLiteral("quick"))));
        QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Completed; }));
        RequeueFails scheduler(m_scheduler, ErrorCode(code));
        RunActions actions(*m_store, m_transport, scheduler);
        auto r = actions.requeue(run, true);
        QCOMPARE(scheduler.requeues, 1);
        QCOMPARE(scheduler.submits, resubmits ? 1 : 0);
        QCOMPARE(bool(r), resubmits);
        if (resubmits) {
            QCOMPARE(load(run).state, RunState::Queued);
            QVERIFY(load(run).message.contains(QStringLiteral("resubmitted by the user")));
            QVERIFY(pollUntil(run, [](const RunRecord& x) { return x.state == RunState::Completed; }));
        } else {
            QCOMPARE(load(run).state, RunState::Completed);  // unchanged, and the failure is in its history
            QVERIFY(hasNote(load(run), QStringLiteral("requeue failed")));
        }
    }
};

QTEST_GUILESS_MAIN(TestRunActions)
#include "tst_runactions.moc"
