#include "runs/runactions.h"

#include "config/configcheck.h"
#include "config/profiles.h"
#include "runs/runpoller.h"
#include "scheduler/jobscript.h"

#include <QLockFile>
#include <QSet>

#include <optional>

namespace scaledesk {

namespace {
ActionCheck refuse(const QString& why) { return ActionCheck{false, why, QString()}; }
ActionCheck allow(const QString& confirm = QString()) { return ActionCheck{true, QString(), confirm}; }

// The refusal shared by every action on a run that is not yet with the scheduler.
std::optional<ActionCheck> notSubmittedYet(const RunRecord& r)
{
    if (r.state == RunState::Draft) return refuse(QStringLiteral("the run was never submitted"));
    if (r.state == RunState::Submitting) return refuse(QStringLiteral("the run is still being submitted; wait until it is queued"));
    return std::nullopt;
}
}  // namespace

ActionCheck checkAction(RunAction action, const RunRecord& r)
{
    const QString state = runStateName(r.state);
    if (r.imported()) return refuse(QStringLiteral("an imported run is read-only (imported from %1)").arg(r.originPath));
    switch (action) {
    case RunAction::Cancel:
        if (auto no = notSubmittedYet(r)) return *no;
        if (!isActive(r.state)) return refuse(QStringLiteral("the run has already ended (%1)").arg(state));
        if (r.jobId.isEmpty()) return refuse(QStringLiteral("the run has no job to cancel"));
        return allow(QStringLiteral("Cancel run %1? Its job %2 is stopped and the run ends as cancelled; "
                                    "requeue can resume it from its last checkpoint.")
                         .arg(r.id, r.jobId));
    case RunAction::CheckpointStop:
        if (auto no = notSubmittedYet(r)) return *no;
        if (!isActive(r.state)) return refuse(QStringLiteral("the run has already ended (%1)").arg(state));
        if (r.state != RunState::Running)
            return refuse(QStringLiteral("the job is not running yet (%1): there is nothing to checkpoint; cancel it instead").arg(state));
        return allow();
    case RunAction::Requeue:
        if (auto no = notSubmittedYet(r)) return *no;
        if (r.state == RunState::Requeued)
            return refuse(QStringLiteral("the run is already requeued; it runs again when the scheduler starts it"));
        if (isActive(r.state)) return refuse(QStringLiteral("the run is still %1; cancel it, or checkpoint and stop it, first").arg(state));
        if (r.remoteDir.isEmpty() ||
            (r.state == RunState::SubmitFailed && r.submitStep != QLatin1String("sbatch") &&
             r.submitStep != QLatin1String("sbatch-unknown")))
            return refuse(QStringLiteral("the run never reached the cluster (it failed while uploading); launch it again"));
        if (r.state == RunState::Completed)
            return allow(QStringLiteral("Run %1 completed. Run it again? It resumes from its last checkpoint.").arg(r.id));
        return allow();
    }
    return refuse(QStringLiteral("unknown action"));
}

RunActions::RunActions(RunStore& store, Transport& transport, Scheduler& scheduler)
    : m_store(store), m_transport(transport), m_scheduler(scheduler)
{}

Status RunActions::checkLaunch(const Workspace& ws, const LaunchRequest& req)
{
    if (req.points.isEmpty())
        return Error{ErrorCode::SweepInvalid, QStringLiteral("nothing to launch: the sweep has no points"), QString()};
    // A calibration (every point a benchmark) trains nothing and needs no config.
    const bool trains = launchTrains(req);
    if (trains || !req.options.configFile.isEmpty())
        if (auto ok = RunSubmitter::checkConfig(req.options.configFile, req.options.configName); !ok) return ok;
    QSet<QString> ids;
    QStringList taken;
    for (const RunPoint& p : req.points) {
        if (auto ok = checkRanksPerNode(req.profile, p.ranksPerNode); !ok) return ok;
        QString why;
        if (!RunStore::validRunId(p.runId, &why)) return Error{ErrorCode::RunId, why, p.runId};
        if (ids.contains(p.runId)) return Error{ErrorCode::RunId, QStringLiteral("two points of the launch have this run id"), p.runId};
        ids.insert(p.runId);
        if (ws.hasRun(p.runId)) taken << p.runId;
    }
    if (!taken.isEmpty())
        return Error{ErrorCode::RunExists,
                     QStringLiteral("%1 run id(s) exist already (%2); choose another name")
                         .arg(taken.size())
                         .arg(taken.mid(0, 3).join(QStringLiteral(", "))),
                     taken.first()};
    if (trains)
        if (auto ok = checkDataLink(req.options, req.makeData || !req.options.dataDir.isEmpty()); !ok) return ok;
    return Done{};
}

Status RunActions::checkConfigRules(const LaunchRequest& req, QString* note)
{
    if (req.options.configFile.isEmpty() || !launchTrains(req)) return Done{};
    const QString trainer = findLocalTrainer();
    if (trainer.isEmpty()) {
        if (note)
            *note = QStringLiteral("config '%1' was checked as YAML only: no scaledesk-train on this machine to check its keys "
                                   "(set SCALEDESK_TRAIN); the job's trainer checks them when it starts")
                        .arg(req.options.configName);
        return Done{};
    }
    return checkConfigWithTrainer(trainer, req.options.configFile, req.options.configName);
}

Expected<LaunchResult> RunActions::launch(const LaunchRequest& req, const Progress& progress, const std::function<bool()>& stopRequested)
{
    if (auto ok = checkLaunch(m_store.workspace(), req); !ok) return ok.error();
    QString note;
    if (auto ok = checkConfigRules(req, &note); !ok) return ok.error();
    if (!note.isEmpty() && progress) progress(QStringLiteral("warning: ") + note);
    RunSubmitter submitter(m_store, m_transport, m_scheduler);
    return submitter.submit(req, progress, stopRequested);
}

Expected<RunRecord> RunActions::loadChecked(const QString& runId, RunAction action, bool confirmed)
{
    auto rec = m_store.load(runId);
    if (!rec) return rec.error();
    const ActionCheck check = checkAction(action, *rec);
    if (!check.allowed) return Error{ErrorCode::ActionRefused, check.reason, runId};
    // Only requeue of a completed run insists on an answer: it is the one action that starts
    // something the user may not expect. The window asks every question; a typed command is the answer.
    if (action == RunAction::Requeue && !check.confirm.isEmpty() && !confirmed)
        return Error{ErrorCode::ActionRefused, QStringLiteral("the run completed; confirm to run it again (scaledesk requeue --force)"),
                     runId};
    return rec;
}

Expected<RunRecord> RunActions::signal(const QString& runId, RunAction action, const QString& signal, const QString& note)
{
    auto rec = loadChecked(runId, action, true);
    if (!rec) return rec.error();
    const JobRef ref{rec->jobId, rec->remoteDir, slurmJobName(rec->id)};
    const Status sent = m_scheduler.cancel(ref, signal);
    if (sent || sent.error().code == ErrorCode::SchedulerUnknownJob) {
        auto noted = m_store.update(runId, [&](RunRecord& r) {
            r.transition(r.state, sent ? note : QStringLiteral("%1, but the job had already ended").arg(note));
            return Status(Done{});
        });
        if (!noted) return noted.error();
    }
    // The evidence, at once: what the scheduler and the run's files say now. A job that had ended
    // is recorded as it ended, never as cancelled; one still stopping is followed by later polls.
    RunPoller poller(m_store, m_transport, m_scheduler);
    auto polled = poller.poll({runId});
    auto now = m_store.load(runId);
    if (!now) return now.error();
    if (!sent && !(sent.error().code == ErrorCode::SchedulerUnknownJob && polled && isFinal(now->state))) return sent.error();
    return now;
}

Expected<RunRecord> RunActions::cancel(const QString& runId)
{
    return signal(runId, RunAction::Cancel, QString(), QStringLiteral("cancel requested by the user"));
}

Expected<RunRecord> RunActions::checkpointStop(const QString& runId)
{
    return signal(runId, RunAction::CheckpointStop, QStringLiteral("USR1"),
                  QStringLiteral("checkpoint and stop requested by the user (SIGUSR1)"));
}

Expected<RunRecord> RunActions::requeue(const QString& runId, bool confirmed)
{
    auto seen = loadChecked(runId, RunAction::Requeue, confirmed);
    if (!seen) return seen.error();
    // One requeue or resubmit of a run at a time, from this window or any other process (the
    // launch's lock): two at once would start two jobs in one folder, and the record would follow
    // whichever answered last.
    QLockFile lock(m_store.workspace().runDir(runId) + QStringLiteral("/.submitting"));
    lock.setStaleLockTime(0);
    if (!lock.tryLock(0))
        return Error{ErrorCode::ActionRefused,
                     QStringLiteral("the run is being requeued or submitted by another process (scaledesk or the window)"), runId};
    auto rec = loadChecked(runId, RunAction::Requeue, true);  // as it is now, under the lock
    if (!rec) return rec.error();
    if (rec->state != seen->state || rec->jobId != seen->jobId)
        return Error{ErrorCode::ActionRefused,
                     QStringLiteral("the run changed while the requeue waited (now %1)").arg(runStateName(rec->state)), runId};
    RunSubmitter submitter(m_store, m_transport, m_scheduler);
    const SubmitOutcome again = submitter.runAgain(*rec);
    switch (again.kind) {
    case SubmitOutcome::Kind::Queued:
    case SubmitOutcome::Kind::Unknown: return again.run;
    case SubmitOutcome::Kind::Existing: return refuseForExisting(again.run);
    case SubmitOutcome::Kind::Failed:
    case SubmitOutcome::Kind::NotTried: break;
    }
    return again.error;
}

Expected<RunRecord> RunActions::refuseForExisting(const RunRecord& adopted)
{
    RunPoller poller(m_store, m_transport, m_scheduler);
    (void)poller.poll({adopted.id});  // what the job is doing, at once (a failed poll: later polls follow it)
    auto now = m_store.load(adopted.id);
    if (!now) return now.error();
    return Error{ErrorCode::ActionRefused,
                 QStringLiteral("job %1 of this run exists (%2): nothing was submitted; the run follows that job now%3")
                     .arg(adopted.jobId, runStateName(now->state),
                          isActive(now->state) ? QString() : QStringLiteral(" (requeue again to run it once more)")),
                 adopted.id};
}

}  // namespace scaledesk
