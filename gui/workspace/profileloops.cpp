#include "workspace/profileloops.h"

#include "config/profiles.h"
#include "runs/runpoller.h"

namespace scaledesk::gui {

RunSnapshot snapshotOf(const Workspace& ws, const RunRecord& r) { return RunSnapshot{r, readRunManifest(ws.runDir(r.id))}; }

ProfileLoops::ProfileLoops(const Workspace& workspace, Prompter& prompter, QObject* parent)
    : QObject(parent), m_workspace(workspace), m_prompter(prompter)
{
    m_clock.start();
}

ProfileLoops::~ProfileLoops()
{
    for (auto& [name, l] : m_loops) delete l.session;
}

ClusterSession* ProfileLoops::session(const QString& profile, QString* error)
{
    Loop* l = loop(profile, error);
    return l ? l->session : nullptr;
}

ProfileLoops::Loop* ProfileLoops::loop(const QString& profileName, QString* error)
{
    Loop& l = m_loops[profileName];
    if (l.session) return &l;
    auto p = findProfile(m_workspace, profileName);
    if (!p) {
        *error = p.error().text();
        return nullptr;
    }
    l.local = p->isLocal();
    l.schedule.setSettings(settingsFor(l));
    // Host keys, passphrases and 2FA codes are asked in dialogs while the worker waits.
    ProfileConnection pc = connectProfile(*p, m_prompter.callbacks(profileName));
    std::unique_ptr<Transport> transport = std::move(pc.transport);
    if (m_wrapTransport) transport = m_wrapTransport(std::move(transport));
    // The scheduler was made over the unwrapped transport; make it again over the one in use.
    std::unique_ptr<Scheduler> scheduler = makeScheduler(*p, *transport);
    l.session = new ClusterSession(std::move(transport), std::move(scheduler));
    return &l;
}

void ProfileLoops::setSettings(const PollScheduler::Settings& settings, bool exact)
{
    m_settings = settings;
    m_exact = exact;
    for (auto& [name, l] : m_loops) l.schedule.setSettings(settingsFor(l));
}

ProfileStatus ProfileLoops::status(const QString& profile) const
{
    auto it = m_loops.find(profile);
    return it == m_loops.end() ? ProfileStatus() : it->second.status;
}

qint64 ProfileLoops::nextAt(const QString& profile) const
{
    auto it = m_loops.find(profile);
    return it == m_loops.end() ? now() : it->second.schedule.nextAt();
}

void ProfileLoops::kick(const QString& profile) { m_loops[profile].schedule.kick(now()); }

void ProfileLoops::forget(const QString& profile)
{
    auto it = m_loops.find(profile);
    if (it == m_loops.end()) return;
    delete it->second.session;  // waits for a running operation
    m_loops.erase(it);
}

void ProfileLoops::tick(const QStringList& active, const QList<RunSummary>& runs)
{
    const qint64 t = now();
    for (const QString& profile : active) {
        Loop& l = m_loops[profile];
        if (l.schedule.stuck(t)) {
            abandon(profile, l);
        } else if (l.schedule.due(t)) {
            QStringList ids;
            for (const RunSummary& s : runs)
                if (s.profile == profile && isActive(s.state)) ids << s.id;
            start(profile, l, ids);
        }
    }
}

// The session's thread is stuck in the poll: the poll's result is dropped and polls go on over a
// fresh session. What the user asked for on the old one (a launch, a cancel) is never dropped: it
// runs when the stuck call returns, and reports as usual.
void ProfileLoops::abandon(const QString& profile, Loop& l)
{
    ClusterSession* old = l.session;
    l.session = nullptr;
    if (l.poll) l.poll->cancel();
    if (old) {
        const int waiting = old->pending() - (l.poll ? 1 : 0);
        if (waiting > 0)
            emit message(
                tr("profile %1: %n operation(s) wait for the connection that stopped answering; they run when it answers", nullptr, waiting)
                    .arg(profile));
        connect(old, &ClusterSession::idle, old, &QObject::deleteLater);
        if (old->pending() == 0) old->deleteLater();
    }
    l.poll.clear();
    l.schedule.abandon(now());
    l.status.polledOk = false;
    l.status.failures = l.schedule.failures();
    l.status.lastError = tr("no answer in %1 s; connecting again").arg(m_settings.timeoutMs / 1000);
    l.status.lastErrorAt = QDateTime::currentDateTime();
    emit profileState(profile, false, l.status.lastError);
}

void ProfileLoops::failed(const QString& profile, Loop& l, const QString& why)
{
    l.schedule.finished(now(), PollScheduler::Outcome{false});
    l.status.polledOk = false;
    l.status.failures = l.schedule.failures();
    l.status.lastError = why;
    l.status.lastErrorAt = QDateTime::currentDateTime();
    emit profileState(profile, false, why);
}

void ProfileLoops::start(const QString& profile, Loop& l, const QStringList& ids)
{
    l.schedule.queued(now());
    ++l.status.polls;
    QString error;
    if (!loop(profile, &error)) {
        failed(profile, l, error);
        return;
    }
    const Workspace ws = m_workspace;
    RemoteOperation* op =
        l.session->run(QStringLiteral("poll %1").arg(profile), [ws, ids](Transport& t, Scheduler& s, const auto&, const auto&) {
            auto store = RunStore::forThisThread(ws);
            if (!store) return Expected<QVariant>(store.error());
            RunPoller poller(**store, t, s);
            auto report = poller.poll(ids);
            if (!report) return Expected<QVariant>(report.error());
            PollResult out;
            out.polled = ids;
            out.changed = report->changed;
            out.bytesNew = report->bytesNew;
            out.problems = report->problems;
            for (const QString& id : ids)
                if (auto r = (*store)->load(id)) out.runs << snapshotOf(ws, *r);
            return Expected<QVariant>(QVariant::fromValue(out));
        });
    l.poll = op;
    // The stuck clock counts from the poll's start, not from when it was queued behind a launch.
    connect(op, &RemoteOperation::started, this, [this, profile, op = QPointer<RemoteOperation>(op)] {
        Loop& l = m_loops[profile];
        if (op && l.poll == op) {
            l.schedule.started(now());
            emit timingChanged();
        }
    });
    connect(op, &RemoteOperation::succeeded, this, [this, profile](const QVariant& v) {
        const PollResult result = v.value<PollResult>();
        Loop& l = m_loops[profile];
        PollScheduler::Outcome o;
        o.grew = result.bytesNew > 0;
        o.changed = !result.changed.isEmpty();
        for (const RunSnapshot& s : result.runs) {
            o.running = o.running || s.record.state == RunState::Running;
            o.active = o.active || isActive(s.record.state);
        }
        l.schedule.finished(now(), o);
        l.status.polledOk = true;
        l.status.failures = 0;
        l.status.lastOk = QDateTime::currentDateTime();
        emit polled(result);
        for (const QString& p : result.problems) emit message(p);
        emit profileState(profile, true, tr("polled at %1").arg(l.status.lastOk.toString(QStringLiteral("HH:mm:ss"))));
    });
    connect(op, &RemoteOperation::failed, this, [this, profile](const Error& e) {
        emit message(tr("profile %1: %2").arg(profile, e.text()));
        failed(profile, m_loops[profile], e.text());
    });
    connect(op, &RemoteOperation::finished, this, &ProfileLoops::timingChanged);
}

}  // namespace scaledesk::gui
