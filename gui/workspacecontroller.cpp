#include "workspacecontroller.h"

#include "config/profiles.h"
#include "runs/runpoller.h"
#include "runs/runsubmitter.h"

#include <QFutureWatcher>
#include <QMap>
#include <QtConcurrent>
#include <QTime>

namespace scaledesk::gui {

WorkspaceController::WorkspaceController(const QString& root, QObject* parent)
    : QObject(parent), m_workspace(root), m_prompter(new Prompter(this))
{
    auto s = RunStore::open(m_workspace);
    if (s) m_store = std::move(s).value();
    else m_openError = s.error().text();
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &WorkspaceController::pollNow);
    m_timer.start(0);
}

WorkspaceController::~WorkspaceController()
{
    m_prompter->close();  // a worker waiting for an answer gives up now
    for (auto& [name, s] : m_sessions) delete s;  // each waits for its running operation
}

MirrorReader& WorkspaceController::reader(const QString& runId)
{
    auto& r = m_readers[runId];
    if (!r) r = std::make_unique<MirrorReader>(m_workspace.runDir(runId));
    return *r;
}

void WorkspaceController::loadReader(const QString& runId)
{
    if (hasReader(runId) || m_loading.contains(runId)) return;
    m_loading.insert(runId);
    const QString dir = m_workspace.runDir(runId);
    auto* watcher = new QFutureWatcher<MirrorReader*>(this);
    connect(watcher, &QFutureWatcher<MirrorReader*>::finished, this, [this, watcher, runId] {
        std::unique_ptr<MirrorReader> loaded(watcher->result());
        watcher->deleteLater();
        m_loading.remove(runId);
        if (!hasReader(runId)) m_readers[runId] = std::move(loaded);
        emit readerReady(runId);
    });
    // The reader is touched by the pool thread only until finished(); then it is this thread's.
    watcher->setFuture(QtConcurrent::run([dir] {
        auto* r = new MirrorReader(dir);
        r->read({});
        return r;
    }));
}

void WorkspaceController::refresh()
{
    if (m_store) emit runsChanged(m_store->list());
}

ClusterSession* WorkspaceController::session(const QString& profileName, QString* error)
{
    auto it = m_sessions.find(profileName);
    if (it != m_sessions.end()) return it->second;
    auto p = findProfile(m_workspace, profileName);
    if (!p) {
        *error = p.error().text();
        return nullptr;
    }
    // Host keys, passphrases and 2FA codes are asked in dialogs while the worker waits.
    ProfileConnection pc = connectProfile(*p, m_prompter->callbacks(profileName));
    auto* cs = new ClusterSession(std::move(pc.transport), std::move(pc.scheduler));
    m_sessions.emplace(profileName, cs);
    return cs;
}

void WorkspaceController::pollNow()
{
    if (!m_store || m_inFlight > 0) return;
    QMap<QString, QStringList> byProfile;
    for (const auto& r : m_store->list())
        if (isActive(r.state)) byProfile[r.profile] << r.id;
    if (byProfile.isEmpty()) {
        scheduleNext(false);
        return;
    }
    m_grew = false;
    const QString root = m_workspace.root();
    for (auto it = byProfile.begin(); it != byProfile.end(); ++it) {
        QString error;
        ClusterSession* cs = session(it.key(), &error);
        if (!cs) {
            emit message(QStringLiteral("profile %1: %2").arg(it.key(), error));
            emit profileState(it.key(), false, error);
            continue;
        }
        ++m_inFlight;
        const QStringList ids = it.value();
        RemoteOperation* op = cs->run(QStringLiteral("poll %1").arg(it.key()), [root, ids](Transport& t, Scheduler& s, const auto&, const auto&) {
            // A store of the worker's own: SQL connections belong to one thread.
            auto store = RunStore::open(Workspace(root));
            if (!store) return Expected<QVariant>(store.error());
            RunPoller poller(**store, t, s);
            auto report = poller.poll(ids);
            if (!report) return Expected<QVariant>(report.error());
            return Expected<QVariant>(QVariantList{QVariant(ids), QVariant(report->changed), QVariant(qulonglong(report->bytesNew)),
                                                   QVariant(report->problems)});
        });
        const QString profile = it.key();
        connect(op, &RemoteOperation::succeeded, this, [this, profile = it.key()](const QVariant& v) {
            emit profileState(profile, true, tr("polled at %1").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss"))));
            const QVariantList l = v.toList();
            if (l.value(2).toULongLong() > 0) m_grew = true;
            for (const QString& p : l.value(3).toStringList()) emit message(p);
            emit runsUpdated(l.value(0).toStringList());
        });
        connect(op, &RemoteOperation::failed, this, [this, profile](const Error& e) {
            emit message(QStringLiteral("profile %1: %2").arg(profile, e.text()));
            emit profileState(profile, false, e.text());
        });
        connect(op, &RemoteOperation::finished, this, [this] {
            if (--m_inFlight == 0) {
                refresh();
                scheduleNext(m_grew);
            }
        });
    }
    if (m_inFlight == 0) scheduleNext(false);
}

void WorkspaceController::scheduleNext(bool grew) { m_timer.start(m_schedule.next(grew)); }

ClusterSession* WorkspaceController::sessionForRun(const QString& runId, JobRef* ref)
{
    auto r = m_store ? m_store->load(runId) : Expected<RunRecord>(Error{QStringLiteral("store"), m_openError, QString()});
    if (!r) {
        emit message(r.error().text());
        return nullptr;
    }
    QString error;
    ClusterSession* cs = session(r->profile, &error);
    if (!cs) emit message(error);
    *ref = JobRef{r->jobId, r->remoteDir, r->id};
    return cs;
}

void WorkspaceController::cancel(const QString& runId, const QString& signal)
{
    JobRef ref;
    ClusterSession* cs = sessionForRun(runId, &ref);
    if (!cs) return;
    RemoteOperation* op = cs->run(QStringLiteral("cancel"), [ref, signal](Transport&, Scheduler& s, const auto&, const auto&) {
        auto ok = s.cancel(ref, signal);
        return ok ? Expected<QVariant>(QVariant()) : Expected<QVariant>(ok.error());
    });
    connect(op, &RemoteOperation::failed, this, [this](const Error& e) { emit message(e.text()); });
    connect(op, &RemoteOperation::succeeded, this, [this, runId, signal] {
        emit message(signal.isEmpty() ? QStringLiteral("%1: cancel requested").arg(runId) : QStringLiteral("%1: sent SIG%2").arg(runId, signal));
        m_timer.start(500);
    });
}

void WorkspaceController::requeue(const QString& runId)
{
    JobRef ref;
    ClusterSession* cs = sessionForRun(runId, &ref);
    if (!cs) return;
    RemoteOperation* op = cs->run(QStringLiteral("requeue"), [ref](Transport&, Scheduler& s, const auto&, const auto&) {
        auto id = s.requeue(ref);
        return id ? Expected<QVariant>(*id) : Expected<QVariant>(id.error());
    });
    connect(op, &RemoteOperation::failed, this, [this](const Error& e) { emit message(e.text()); });
    connect(op, &RemoteOperation::succeeded, this, [this, runId](const QVariant& job) {
        auto rec = m_store->load(runId);
        if (!rec) return;
        RunRecord updated = *rec;
        updated.jobId = job.toString();
        updated.transition(RunState::Queued, QStringLiteral("requeued by the user: job %1").arg(updated.jobId));
        m_store->save(updated);
        refresh();
        m_timer.start(500);
    });
}

}  // namespace scaledesk::gui

namespace scaledesk::gui {

void WorkspaceController::launch(const LaunchDialog::Request& request)
{
    QString error;
    ClusterSession* cs = session(request.profile.name, &error);
    if (!cs) return emit message(error);
    const QString root = m_workspace.root();
    RemoteOperation* op = cs->run(QStringLiteral("launch"), [root, request](Transport& t, Scheduler& s, const auto& progress, const RemoteOperation& self) {
        auto store = RunStore::open(Workspace(root));
        if (!store) return Expected<QVariant>(store.error());
        SubmitOptions o = request.options;
        auto trainer = profileTrainer(t, request.profile);
        if (!trainer) return Expected<QVariant>(trainer.error());
        o.trainerPath = *trainer;
        if (request.makeData) {
            progress(QStringLiteral("making the cpu configs' data"));
            auto data = ensureGeneratedData(t, request.profile, o.trainerPath);
            if (!data) return Expected<QVariant>(data.error());
            o.dataDir = *data;
        }
        RunSubmitter submitter(**store, t, s, request.profile);
        int n = 0;
        for (const RunPoint& p : request.points) {
            if (self.cancelRequested()) break;
            auto r = submitter.submit(p, o);
            if (!r) return Expected<QVariant>(r.error());  // recorded as submit-failed with the reason
            progress(QStringLiteral("%1: %2").arg(r->id, r->message));
            ++n;
        }
        return Expected<QVariant>(n);
    });
    connect(op, &RemoteOperation::progress, this, [this](const QString& m) {
        emit message(m);
        refresh();
    });
    connect(op, &RemoteOperation::failed, this, [this](const Error& e) { emit message(QStringLiteral("launch failed: ") + e.text()); });
    connect(op, &RemoteOperation::succeeded, this, [this](const QVariant& n) { emit message(QStringLiteral("%1 job(s) submitted").arg(n.toInt())); });
    connect(op, &RemoteOperation::finished, this, [this] {
        refresh();
        m_timer.start(500);
    });
}

}  // namespace scaledesk::gui
