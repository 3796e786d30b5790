#include "runs/runactions.h"

#include "runs/handover.h"
#include "runs/runpoller.h"
#include "scheduler/jobscript.h"

#include <QLockFile>
#include <QSet>

#include <algorithm>

namespace scaledesk {

namespace {
ActionCheck refuse(const QString& why) { return ActionCheck{false, why, QString()}; }
ActionCheck allow(const QString& confirm = QString()) { return ActionCheck{true, QString(), confirm}; }

// Whether any point of the launch trains (a calibration's points are benchmarks: no config, no data).
bool anyTrains(const LaunchRequest& req)
{
    return std::any_of(req.points.begin(), req.points.end(), [](const RunPoint& p) { return p.task.isEmpty(); });
}

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

QString LaunchResult::summary() const
{
    const int total = int(submitted.size() + failed.size() + notTried.size());
    QString s = complete() ? QStringLiteral("%1 run(s) submitted").arg(submitted.size())
                           : QStringLiteral("%1 of %2 run(s) submitted").arg(submitted.size()).arg(total);
    if (!failed.isEmpty())
        s += QStringLiteral("; %1 failed (first: %2: %3)").arg(failed.size()).arg(failed.first().first, failed.first().second.text());
    if (!notTried.isEmpty()) s += QStringLiteral("; %1 not tried").arg(notTried.size());
    return s;
}

RunActions::RunActions(RunStore& store, Transport& transport, Scheduler& scheduler)
    : m_store(store), m_transport(transport), m_scheduler(scheduler)
{}

Status RunActions::checkLaunch(const Workspace& ws, const LaunchRequest& req)
{
    if (req.points.isEmpty())
        return Error{ErrorCode::SweepInvalid, QStringLiteral("nothing to launch: the sweep has no points"), QString()};
    // A calibration (every point a benchmark) trains nothing and needs no config.
    const bool trains = anyTrains(req);
    if (trains || !req.options.configFile.isEmpty())
        if (auto ok = RunSubmitter::checkConfig(req.options.configFile, req.options.configName); !ok) return ok;
    QSet<QString> ids;
    QStringList taken;
    for (const RunPoint& p : req.points) {
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

Expected<LaunchResult> RunActions::launch(const LaunchRequest& req, const Progress& progress, const std::function<bool()>& stopRequested)
{
    auto say = [&](const ProgressStep& m) {
        if (progress) progress(m);
    };
    if (auto ok = checkLaunch(m_store.workspace(), req); !ok) return ok.error();
    SubmitOptions o = req.options;
    if (o.trainerPath.isEmpty()) {
        auto trainer = profileTrainer(m_transport, req.profile);
        if (!trainer) return trainer.error();
        o.trainerPath = *trainer;
    }
    if (req.makeData) {
        say(QStringLiteral("making sure the cpu configs' data exists under %1/data/generated").arg(req.profile.remoteRoot));
        auto data = ensureGeneratedData(m_transport, req.profile, o.trainerPath);
        if (!data) return data.error();
        o.dataDir = *data;
    }
    RunSubmitter submitter(m_store, m_transport, m_scheduler, req.profile);
    if (anyTrains(req)) {
        auto firstDir = submitter.remoteRunDir(req.points.first().runId);
        if (!firstDir) return firstDir.error();
        auto warnings = checkRunData(m_transport, o, *firstDir);
        if (!warnings) return warnings.error();
        for (const QString& w : *warnings) say(QStringLiteral("warning: ") + w);
    }
    LaunchResult result;
    for (qsizetype i = 0; i < req.points.size(); ++i) {
        const RunPoint& p = req.points[i];
        if (stopRequested && stopRequested()) {
            for (qsizetype j = i; j < req.points.size(); ++j) result.notTried << req.points[j].runId;
            break;
        }
        say({QStringLiteral("submitting %1 (%2 of %3)").arg(p.runId).arg(i + 1).arg(req.points.size()), i, req.points.size(), true});
        auto r = submitter.submit(p, o);
        if (r) {
            result.submitted << *r;
            say({QStringLiteral("%1: %2 (%3)").arg(r->id, runStateName(r->state), r->message), i + 1, req.points.size()});
            continue;
        }
        result.failed << std::pair{p.runId, r.error()};
        say({QStringLiteral("%1: %2").arg(p.runId, r.error().text()), i + 1, req.points.size()});
        if (req.onFailure == OnSubmitFailure::Stop) {
            for (qsizetype j = i + 1; j < req.points.size(); ++j) result.notTried << req.points[j].runId;
            break;
        }
    }
    return result;
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
    if (!rec->jobId.isEmpty()) {
        auto job = m_scheduler.requeue({rec->jobId, rec->remoteDir, slurmJobName(rec->id)});
        // Only a job the scheduler has forgotten is submitted anew; after any other failure the
        // requeue may have happened, and a second job for the folder is the one thing not to risk.
        if (job || job.error().code != ErrorCode::SchedulerUnknownJob) {
            auto saved = m_store.update(runId, [&](RunRecord& r) {
                if (!job) {
                    r.transition(r.state, QStringLiteral("requeue failed: ") + job.error().text());
                } else {
                    r.jobId = *job;
                    r.submitStep = QStringLiteral("recorded");
                    r.transition(RunState::Queued, QStringLiteral("requeued by the user: job %1").arg(r.jobId));
                }
                return Status(Done{});
            });
            if (!job) return job.error();
            return saved;
        }
    }
    return resubmit(*rec);
}

Expected<RunRecord> RunActions::resubmit(const RunRecord& seen)
{
    const RunRecord* rec = &seen;  // loaded under the run's submit lock, which the caller holds
    // Before a new job: is there one already? A submit whose id was lost, a job that has left
    // squeue: any of them means the run has its job, and a second one is the thing not to start.
    auto existing = m_scheduler.findJob({rec->jobId, rec->remoteDir, slurmJobName(rec->id)});
    if (!existing)
        return Error{
            ErrorCode::ActionRefused,
            QStringLiteral("cannot tell whether a job of this run still exists (%1); nothing was submitted").arg(existing.error().text()),
            rec->id};
    if (!existing->isEmpty()) return adopt(rec->id, *existing);

    const RunState before = rec->state;
    const QString note = rec->jobId.isEmpty()
        ? QStringLiteral("submitted again by the user")
        : QStringLiteral("resubmitted by the user (%1 no longer knew job %2)").arg(m_scheduler.kind(), rec->jobId);
    auto started = m_store.update(rec->id, [&](RunRecord& r) {
        r.submitStep = QStringLiteral("sbatch");
        r.transition(RunState::Submitting, QStringLiteral("handing the job to %1 again").arg(m_scheduler.kind()));
        return Status(Done{});
    });
    if (!started) return started.error();
    auto handed = handOver(m_store, m_scheduler, rec->id, note);
    if (handed) return handed;
    // A plain refusal: no job. The run is as it was, with the reason.
    (void)m_store.update(rec->id, [&](RunRecord& r) {
        r.submitStep = QStringLiteral("sbatch");
        r.transition(before, QStringLiteral("requeue failed: ") + handed.error().text());
        return Status(Done{});
    });
    return handed.error();
}

Expected<RunRecord> RunActions::adopt(const QString& runId, const QString& jobId)
{
    auto adopted = m_store.update(runId, [&](RunRecord& r) {
        r.jobId = jobId;
        r.submitStep = QStringLiteral("recorded");
        r.transition(RunState::Queued, QStringLiteral("found job %1 of this run by its name and folder; the run follows it").arg(jobId));
        return Status(Done{});
    });
    if (!adopted) return adopted.error();
    RunPoller poller(m_store, m_transport, m_scheduler);
    (void)poller.poll({runId});  // what the job is doing, at once (a failed poll: later polls follow it)
    auto now = m_store.load(runId);
    if (!now) return now.error();
    return Error{ErrorCode::ActionRefused,
                 QStringLiteral("job %1 of this run exists (%2): nothing was submitted; the run follows that job now%3")
                     .arg(jobId, runStateName(now->state),
                          isActive(now->state) ? QString() : QStringLiteral(" (requeue again to run it once more)")),
                 runId};
}

}  // namespace scaledesk
