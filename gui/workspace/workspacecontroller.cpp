#include "workspace/workspacecontroller.h"

#include "workspace/pool.h"

#include "config/profiles.h"
#include "runs/clusterprobe.h"
#include "runs/deploy.h"

namespace scaledesk::gui {

namespace {
QString actionName(RunAction a)
{
    switch (a) {
    case RunAction::Cancel: return QStringLiteral("cancel");
    case RunAction::CheckpointStop: return QStringLiteral("checkpoint and stop");
    case RunAction::Requeue: return QStringLiteral("requeue");
    }
    return QString();
}

}  // namespace

WorkspaceController::WorkspaceController(const QString& root, QObject* parent)
    : QObject(parent), m_workspace(root), m_prompter(new Prompter(this)), m_loops(std::make_unique<ProfileLoops>(m_workspace, *m_prompter))
{
    qRegisterMetaType<scaledesk::Error>();
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &WorkspaceController::tick);
    connect(m_loops.get(), &ProfileLoops::polled, this, [this](const PollResult& result) {
        takeSnapshots(result.runs);
        emit runsUpdated(result.polled);
    });
    connect(m_loops.get(), &ProfileLoops::profileState, this, &WorkspaceController::profileState);
    connect(m_loops.get(), &ProfileLoops::message, this, &WorkspaceController::message);
    connect(m_loops.get(), &ProfileLoops::timingChanged, this, &WorkspaceController::schedule);
    m_nextIndexRead = m_loops->settings().idleMs;
    refresh();
}

WorkspaceController::~WorkspaceController()
{
    m_prompter->close();  // a worker waiting for an answer gives up now
    m_loops.reset();      // each session waits for its running operation
}

const RunSnapshot* WorkspaceController::snapshot(const QString& runId) const
{
    auto it = m_snapshots.constFind(runId);
    return it == m_snapshots.constEnd() ? nullptr : &it.value();
}

ActionCheck WorkspaceController::check(RunAction action, const QString& runId) const
{
    if (runId.isEmpty()) return ActionCheck{false, tr("Select a run first."), QString()};
    const RunSnapshot* s = snapshot(runId);
    if (!s) return ActionCheck{false, tr("Reading the run…"), QString()};
    return checkAction(action, s->record);
}

MirrorReader& WorkspaceController::reader(const QString& runId)
{
    auto& r = m_readers[runId];
    if (!r) r = std::make_unique<MirrorReader>(m_workspace.runDir(runId));
    return *r;
}

void WorkspaceController::loadRun(const QString& runId)
{
    if (hasReader(runId) || m_loading.contains(runId)) return;
    m_loading.insert(runId);
    const Workspace ws = m_workspace;
    // A large run's first read is a task with a progress bar and Cancel (what was read stays; the
    // next poll's read goes on from there).
    const QString task = QStringLiteral("read:") + runId;
    auto stop = std::make_shared<std::atomic_bool>(false);
    const QPointer<WorkspaceController> self(this);
    auto progress = [self, task, runId](const ProgressStep& step) {
        constexpr qint64 large = 32 << 20;  // smaller runs read too fast for a bar to help
        if (step.total < large) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, task, runId, step] {
                if (!self) return;
                if (self->m_tasks.contains(task))
                    emit self->taskProgress(task, tr("Reading %1: %2 of %3 MB").arg(runId).arg(step.done >> 20).arg(step.total >> 20),
                                            step.done, step.total);
            },
            Qt::QueuedConnection);
    };
    m_tasks.insert(task, [stop] { *stop = true; });
    // The reader is touched by the pool thread only until the result is handed over.
    onPool<LoadedRun>(
        this, [ws, runId, progress, stop] { return readRun(ws, runId, progress, [stop] { return stop->load(); }); },
        [this, runId, task](LoadedRun loaded) {
            std::unique_ptr<MirrorReader> reader(loaded.reader);
            m_loading.remove(runId);
            endTask(task);
            if (!hasReader(runId)) m_readers[runId] = std::move(reader);
            if (loaded.snapshot && !m_snapshots.contains(runId)) takeSnapshots({*loaded.snapshot});
            emit readerReady(runId);
        });
}

void WorkspaceController::refresh()
{
    const int generation = ++m_indexGeneration;
    const Workspace ws = m_workspace;
    onPool<IndexRead>(
        this, [ws] { return readIndex(ws); },
        [this, generation](const IndexRead& read) {
            if (generation != m_indexGeneration) return;  // a newer read is on its way
            m_openError = read.error;
            if (!read.error.isEmpty()) {
                emit message(tr("The workspace cannot be read: %1").arg(read.error));
                return;
            }
            // A poll or an action may have brought a newer record than this read saw; another
            // process (the command line) may have brought a newer one than the snapshot shows.
            m_runs = read.runs;
            QStringList stale;
            for (RunSummary& s : m_runs)
                if (const RunSnapshot* snap = snapshot(s.id)) {
                    const RunSummary shown = RunSummary::of(snap->record);
                    if (shown.updated > s.updated)
                        s = shown;
                    else if (s.updated > shown.updated || s.state != shown.state)
                        stale << s.id;
                }
            emit runsChanged(m_runs);
            if (!stale.isEmpty()) reloadSnapshots(stale);
            schedule();
        });
}

QStringList WorkspaceController::activeProfiles() const
{
    QStringList profiles;
    for (const RunSummary& s : m_runs)
        if (isActive(s.state) && !profiles.contains(s.profile)) profiles << s.profile;
    return profiles;
}

void WorkspaceController::setPollSettings(const PollScheduler::Settings& settings) { applyPollSettings(settings, true); }

void WorkspaceController::applyPollSettings(const PollScheduler::Settings& settings, bool exact)
{
    m_loops->setSettings(settings, exact);
    schedule();
}

void WorkspaceController::setPollIntervals(int activeMs, int maxIdleMs)
{
    PollScheduler::Settings s = m_loops->settings();
    s.growingMs = activeMs;
    s.fastMs = qMin<qint64>(1000, activeMs);
    s.idleMs = maxIdleMs;
    s.runningMaxMs = qMin<qint64>(5000, maxIdleMs);
    s.queuedMaxMs = qMin<qint64>(15000, maxIdleMs);
    applyPollSettings(s, false);
}

ProfileStatus WorkspaceController::profileStatus(const QString& profile) const { return m_loops->status(profile); }

void WorkspaceController::pollNow()
{
    for (const QString& p : activeProfiles()) m_loops->kick(p);
    refresh();
    tick();
}

void WorkspaceController::reloadSnapshots(const QStringList& runIds)
{
    const Workspace ws = m_workspace;
    onPool<QList<RunSnapshot>>(
        this, [ws, runIds] { return readSnapshots(ws, runIds); },
        [this, runIds](const QList<RunSnapshot>& runs) {
            takeSnapshots(runs);
            emit runsUpdated(runIds);
        });
}

void WorkspaceController::schedule()
{
    const qint64 now = m_loops->now();
    qint64 next = m_nextIndexRead;
    for (const QString& p : activeProfiles()) next = qMin(next, m_loops->nextAt(p));
    m_timer.start(int(qBound(qint64(0), next - now, qint64(60000))));
}

void WorkspaceController::tick()
{
    const qint64 now = m_loops->now();
    if (now >= m_nextIndexRead) {
        m_nextIndexRead = now + m_loops->settings().idleMs;  // runs launched elsewhere (the command line)
        refresh();
    }
    m_loops->tick(activeProfiles(), m_runs);
    schedule();
}

void WorkspaceController::takeSnapshots(const QList<RunSnapshot>& runs)
{
    bool listChanged = false;
    for (const RunSnapshot& snap : runs) {
        const QString& id = snap.record.id;
        m_snapshots.insert(id, snap);
        const RunSummary fresh = RunSummary::of(snap.record);
        auto it = std::find_if(m_runs.begin(), m_runs.end(), [&](const RunSummary& s) { return s.id == id; });
        if (it == m_runs.end()) {
            m_runs << fresh;
            listChanged = true;
        } else if (it->state != fresh.state || it->jobId != fresh.jobId || it->updated != fresh.updated) {
            *it = fresh;
            listChanged = true;
        }
    }
    if (listChanged) {
        emit runsChanged(m_runs);
        schedule();
    }
    if (m_demo && !m_demo->current.isEmpty())
        for (const RunSnapshot& snap : runs)
            if (snap.record.id == m_demo->current && !isActive(snap.record.state)) {
                QTimer::singleShot(0, this, &WorkspaceController::advanceDemo);
                break;
            }
}

void WorkspaceController::act(const QString& runId, RunAction action, bool confirmed)
{
    const RunSnapshot* snap = snapshot(runId);
    if (!snap) {
        emit actionFinished(runId, action, false, tr("%1: the run has not been read yet").arg(runId));
        return;
    }
    QString error;
    ClusterSession* session = m_loops->session(snap->record.profile, &error);
    if (!session) {
        emit message(error);
        emit actionFinished(runId, action, false, error);
        return;
    }
    const Workspace ws = m_workspace;
    const QString what = actionName(action);
    emit message(tr("%1: %2…").arg(runId, what));
    RemoteOperation* op = session->run(what, [ws, runId, action, confirmed](Transport& t, Scheduler& s, const auto&, const auto&) {
        auto store = RunStore::forThisThread(ws);
        if (!store) return Expected<QVariant>(store.error());
        RunActions actions(**store, t, s);
        Expected<RunRecord> r = action == RunAction::Cancel ? actions.cancel(runId)
            : action == RunAction::CheckpointStop           ? actions.checkpointStop(runId)
                                                            : actions.requeue(runId, confirmed);
        if (!r) return Expected<QVariant>(r.error());
        return Expected<QVariant>(QVariant::fromValue(snapshotOf(ws, *r)));
    });
    const QString profile = snap->record.profile;
    connect(op, &RemoteOperation::succeeded, this, [this, runId, action, what, profile](const QVariant& v) {
        const RunSnapshot s = v.value<RunSnapshot>();
        takeSnapshots({s});
        const QString text = tr("%1: %2 done; the run is %3 (%4)").arg(runId, what, runStateName(s.record.state), s.record.message);
        emit message(text);
        emit actionFinished(runId, action, true, text);
        emit runsUpdated({runId});
        m_loops->kick(profile);
        schedule();
    });
    connect(op, &RemoteOperation::failed, this, [this, runId, action, what](const Error& e) {
        const QString text = tr("%1: %2 failed: %3").arg(runId, what, e.text());
        emit message(text);
        emit actionFinished(runId, action, false, text);
    });
    connect(op, &RemoteOperation::cancelled, this, [this, runId, action, what] {
        const QString text = tr("%1: %2 was not carried out (the connection was closed first)").arg(runId, what);
        emit message(text);
        emit actionFinished(runId, action, false, text);
    });
}

void WorkspaceController::cancel(const QString& runId) { act(runId, RunAction::Cancel, true); }
void WorkspaceController::checkpointStop(const QString& runId) { act(runId, RunAction::CheckpointStop, true); }
void WorkspaceController::requeue(const QString& runId, bool confirmed) { act(runId, RunAction::Requeue, confirmed); }

void WorkspaceController::launch(const LaunchRequest& request) { startLaunch(request); }

RemoteOperation* WorkspaceController::startLaunch(const LaunchRequest& request)
{
    QString error;
    ClusterSession* session = m_loops->session(request.profile.name, &error);
    if (!session) {
        emit message(error);
        emit launchFinished(false, error);
        return nullptr;
    }
    const Workspace ws = m_workspace;
    RemoteOperation* op =
        session->run(QStringLiteral("launch"),
                     [ws, request](Transport& t, Scheduler& s, const ClusterSession::Progress& progress, const RemoteOperation& self) {
                         auto store = RunStore::forThisThread(ws);
                         if (!store) return Expected<QVariant>(store.error());
                         RunActions actions(**store, t, s);
                         auto r = actions.launch(request, progress, [&self] { return self.cancelRequested(); });
                         if (!r) return Expected<QVariant>(r.error());
                         return Expected<QVariant>(QVariant::fromValue(*r));
                     });
    const QString profile = request.profile.name;
    const QString task = QStringLiteral("launch-%1").arg(++m_launches);
    QPointer<RemoteOperation> guard(op);
    startTask(task, tr("Launching %n run(s) on %1", nullptr, int(request.points.size())).arg(profile), [guard] {
        if (guard) guard->cancel();
    });
    connect(op, &RemoteOperation::progress, this, [this, task](const QString& m, qint64 done, qint64 total) {
        emit taskProgress(task, m, done, total);
        emit message(m);
    });
    connect(op, &RemoteOperation::succeeded, this, [this, profile, ws](const QVariant& v) {
        const LaunchResult r = v.value<LaunchResult>();
        QList<RunSnapshot> snaps;
        for (const RunRecord& rec : r.submitted()) snaps << RunSnapshot{rec, QJsonObject()};
        m_loops->kick(profile);
        takeSnapshots(snaps);
        emit message(r.summary());
        emit launchFinished(r.complete(), r.summary());
        refresh();  // failed points are recorded too
        tick();
    });
    connect(op, &RemoteOperation::failed, this, [this](const Error& e) {
        emit message(tr("launch failed: %1").arg(e.text()));
        emit launchFinished(false, tr("launch failed: %1").arg(e.text()));
        refresh();
    });
    connect(op, &RemoteOperation::cancelled, this, [this] {
        // Points submitted before the cancel are recorded runs; the index read shows them.
        emit message(tr("launch cancelled: no further points were submitted"));
        emit launchFinished(false, tr("launch cancelled: no further points were submitted"));
        refresh();
    });
    connect(op, &RemoteOperation::finished, this, [this, task] { endTask(task); });
    return op;
}

void WorkspaceController::startTask(const QString& task, const QString& text, std::function<void()> cancel)
{
    m_tasks.insert(task, std::move(cancel));
    emit taskProgress(task, text, 0, 0);
}

void WorkspaceController::endTask(const QString& task)
{
    if (m_tasks.remove(task)) emit taskEnded(task);
}

void WorkspaceController::cancelTask(const QString& task)
{
    auto it = m_tasks.find(task);
    if (it == m_tasks.end()) return;
    const std::function<void()> cancel = it.value();
    if (cancel) cancel();
}

void WorkspaceController::runDemo()
{
    if (m_demo) return;
    auto demo = demoSweep(m_workspace);
    if (!demo) {
        emit message(demo.error().text());
        emit demoFinished(false, demo.error().text());
        return;
    }
    m_demo = Demo{*demo, QString(), false};
    startTask(QStringLiteral("demo"), tr("Demo sweep: starting"), [this] {
        if (!m_demo) return;
        m_demo->cancelled = true;
        const RunSnapshot* s = m_demo->current.isEmpty() ? nullptr : snapshot(m_demo->current);
        if (s && isActive(s->record.state))
            cancel(m_demo->current);  // the demo ends when the run does
        else
            endDemo(false, tr("Demo sweep cancelled"));
    });
    advanceDemo();
}

void WorkspaceController::advanceDemo()
{
    if (!m_demo) return;
    if (!m_demo->current.isEmpty()) {
        const RunSnapshot* s = snapshot(m_demo->current);
        if (!s || isActive(s->record.state)) return;  // still going
        if (m_demo->cancelled) {
            endDemo(false, tr("Demo sweep cancelled"));
            return;
        }
        if (s->record.state != RunState::Completed) {
            endDemo(false,
                    tr("Demo sweep stopped: %1 ended %2 (%3)").arg(m_demo->current, runStateName(s->record.state), s->record.message));
            return;
        }
    }
    if (m_demo->cancelled) {
        endDemo(false, tr("Demo sweep cancelled"));
        return;
    }
    const qsizetype next = nextDemoRun(m_demo->sweep, m_workspace);
    const auto total = m_demo->sweep.runs.size();
    if (next < 0) {
        endDemo(true, tr("Demo sweep finished: %1 runs; its report is on the Scaling tab").arg(total));
        return;
    }
    const LaunchRequest& req = m_demo->sweep.runs[next];
    m_demo->current = req.points.first().runId;
    emit taskProgress(QStringLiteral("demo"), tr("Demo sweep: run %1 of %2 (%3)").arg(next + 1).arg(total).arg(m_demo->current), next,
                      total);
    emit demoRunLaunched(m_demo->current);
    RemoteOperation* op = startLaunch(req);
    if (!op) {
        endDemo(false, tr("Demo sweep stopped: the local profile cannot be used"));
        return;
    }
    connect(op, &RemoteOperation::succeeded, this, [this](const QVariant& v) {
        const LaunchResult r = v.value<LaunchResult>();
        if (!r.complete()) endDemo(false, tr("Demo sweep stopped: %1").arg(r.summary()));
    });
    connect(op, &RemoteOperation::failed, this, [this](const Error& e) { endDemo(false, tr("Demo sweep stopped: %1").arg(e.text())); });
    connect(op, &RemoteOperation::cancelled, this, [this] { endDemo(false, tr("Demo sweep cancelled")); });
}

void WorkspaceController::endDemo(bool ok, const QString& text)
{
    if (!m_demo) return;
    m_demo.reset();
    endTask(QStringLiteral("demo"));
    emit message(text);
    emit demoFinished(ok, text);
}

RemoteOperation* WorkspaceController::startDeploy(ClusterSession& session, const ClusterProfile& profile)
{
    return session.run(QStringLiteral("deploy"),
                       [profile](Transport& t, Scheduler&, const ClusterSession::Progress& progress, const RemoteOperation& self) {
                           DeployOptions options = deployOptionsFor(profile);
                           options.progress = progress;
                           options.stopRequested = [&self] { return self.cancelRequested(); };
                           auto r = deployTrainer(t, profile, options);
                           if (!r) return Expected<QVariant>(r.error());
                           return Expected<QVariant>(r->summary());
                       });
}

void WorkspaceController::deploy(const QString& profileName)
{
    QString error;
    ClusterSession* session = m_loops->session(profileName, &error);
    if (!session) {
        emit deployFinished(profileName, false, error);
        return;
    }
    auto p = findProfile(m_workspace, profileName);
    if (!p) {
        emit deployFinished(profileName, false, p.error().text());
        return;
    }
    RemoteOperation* op = startDeploy(*session, *p);
    const QString task = QStringLiteral("deploy:") + profileName;
    QPointer<RemoteOperation> guard(op);
    startTask(task, tr("Deploying the trainer to %1").arg(profileName), [guard] {
        if (guard) guard->cancel();
    });
    connect(op, &RemoteOperation::progress, this,
            [this, task](const QString& m, qint64 done, qint64 total) { emit taskProgress(task, m, done, total); });
    connect(op, &RemoteOperation::succeeded, this,
            [this, profileName](const QVariant& v) { emit deployFinished(profileName, true, v.toString()); });
    connect(op, &RemoteOperation::failed, this, [this, profileName](const Error& e) { emit deployFinished(profileName, false, e.text()); });
    connect(op, &RemoteOperation::cancelled, this,
            [this, profileName] { emit deployFinished(profileName, false, tr("the deploy was cancelled")); });
    connect(op, &RemoteOperation::finished, this, [this, task] { endTask(task); });
}

QString WorkspaceController::checkLine(const ProfileCheck& c)
{
    return QStringLiteral("%1 %2%3").arg(c.ok ? QStringLiteral("✔") : QStringLiteral("✘"), c.what,
                                         c.detail.isEmpty() ? QString() : QStringLiteral(": ") + c.detail);
}

void WorkspaceController::testProfile(const QString& profileName)
{
    QString error;
    ClusterSession* session = m_loops->session(profileName, &error);
    auto p = findProfile(m_workspace, profileName);
    if (!session || !p) {
        emit profileTested(profileName, false, {QStringLiteral("✘ ") + (p ? error : p.error().text())});
        return;
    }
    RemoteOperation* op = session->run(QStringLiteral("test"), [profile = *p](Transport& t, Scheduler&, const auto&, const auto&) {
        QStringList lines;
        bool ok = true;
        for (const ProfileCheck& c : scaledesk::testProfile(t, profile, false)) {
            lines << checkLine(c);
            ok = ok && c.ok;
        }
        return Expected<QVariant>(QVariantList{ok, lines});
    });
    connect(op, &RemoteOperation::succeeded, this, [this, profileName](const QVariant& v) {
        const QVariantList r = v.toList();
        emit profileTested(profileName, r.value(0).toBool(), r.value(1).toStringList());
    });
    connect(op, &RemoteOperation::failed, this,
            [this, profileName](const Error& e) { emit profileTested(profileName, false, {QStringLiteral("✘ ") + e.text()}); });
}

void WorkspaceController::forgetProfile(const QString& profile)
{
    m_loops->forget(profile);
    schedule();
}

void WorkspaceController::loadReport(const QString& sweep, const ReportOptions& options)
{
    const Workspace ws = m_workspace;
    const QString task = QStringLiteral("report:%1:%2").arg(sweep).arg(++m_reports);
    auto dropped = std::make_shared<bool>(false);
    startTask(task, tr("Reading the report of %1").arg(sweep), [this, task, dropped] {
        *dropped = true;
        endTask(task);
    });
    onPool<ScalingReport>(
        this, [ws, sweep, options] { return readReport(ws, sweep, options); },
        [this, sweep, task, dropped](const ScalingReport& report) {
            if (*dropped) return;
            endTask(task);
            emit reportReady(sweep, report);
        });
}

void WorkspaceController::loadPlan(const QString& sweep)
{
    const Workspace ws = m_workspace;
    const QString task = QStringLiteral("plan:%1:%2").arg(sweep).arg(++m_reports);
    startTask(task, tr("Fitting the scaling model to %1").arg(sweep), {});
    onPool<std::pair<Plan, QString>>(
        this, [ws, sweep] { return readPlan(ws, sweep); },
        [this, sweep, task](const std::pair<Plan, QString>& result) {
            endTask(task);
            emit planReady(sweep, result.first, result.second);
        });
}

void WorkspaceController::importRuns(const QStringList& paths, const ImportOptions& options)
{
    const Workspace ws = m_workspace;
    const QString task = QStringLiteral("import");
    startTask(task, tr("Importing %1").arg(paths.join(QStringLiteral(", "))), {});
    QPointer<WorkspaceController> self(this);
    onPool<ImportOutcome>(
        this,
        [ws, paths, options, self, task] {
            return importInto(ws, paths, options, [self, task](const ProgressStep& s) {
                QMetaObject::invokeMethod(self, [self, task, s] {
                    if (self) emit self->taskProgress(task, s.text, s.done, s.total);
                });
            });
        },
        [this, task](const ImportOutcome& o) {
            endTask(task);
            if (o.ok) refresh();
            emit importFinished(o.ok, o.text, o.ids, o.sweep);
        });
}

void WorkspaceController::findLatestRun(const QString& configFile, const QString& configName)
{
    const Workspace ws = m_workspace;
    onPool<ConfigBaseline>(
        this, [ws, configFile, configName] { return readLatestRun(ws, configFile, configName); },
        [this, configFile, configName](const ConfigBaseline& b) { emit latestRunFound(configFile, configName, b); });
}

}  // namespace scaledesk::gui
