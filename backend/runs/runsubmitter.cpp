#include "runs/runsubmitter.h"
#include "runs/codesync.h"

#include "runs/deploy.h"
#include "runs/handover.h"
#include "scheduler/jobscript.h"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QSaveFile>

namespace scaledesk {

Expected<QString> profileTrainer(Transport& t, const ClusterProfile& p)
{
    if (p.trainerDeploy) return deployedTrainer(t, p);
    if (p.trainerPath.isEmpty())
        return Error{ErrorCode::TrainerMissing,
                     QStringLiteral("no scaledesk-train for profile %1: set trainer.path, or SCALEDESK_TRAIN").arg(p.name), QString()};
    return p.trainerPath;
}

namespace {
SubmitOutcome outcome(SubmitOutcome::Kind kind, const QString& runId, const RunRecord& run = {}, const Error& error = {})
{
    SubmitOutcome o;
    o.kind = kind;
    o.runId = runId;
    o.run = run;
    o.error = error;
    return o;
}

// Done when none of `dirs` exists on the far side: a new run never shares a folder. One that exists
// (another workspace's run of the same id on this remote_root, or a run whose record was removed
// here) holds that run's checkpoint and metrics, which the new job would resume and the mirror
// would show as its own.
Status refuseTakenFolders(Transport& transport, const QStringList& dirs)
{
    QStringList taken;
    for (const QString& dir : dirs) {
        auto there = transport.stat(dir);
        if (there)
            taken << dir;
        else if (there.error().code != ErrorCode::TransportNoFile)
            return there.error();
    }
    if (taken.isEmpty()) return Done{};
    return Error{
        ErrorCode::RunExists,
        QStringLiteral("%1 run folder(s) of this launch exist already on %2 (%3): runs of these ids were submitted to "
                       "this remote_root before, from another workspace or with their records removed here; nothing "
                       "was submitted. Choose another name, or remove those folders")
            .arg(taken.size())
            .arg(transport.describe(), taken.mid(0, 3).join(QStringLiteral(", ")) + (taken.size() > 3 ? QStringLiteral(", …") : QString())),
        taken.first()};
}

}  // namespace

RunSubmitter::RunSubmitter(RunStore& store, Transport& transport, Scheduler& scheduler)
    : m_store(store), m_transport(transport), m_scheduler(scheduler)
{}

Status RunSubmitter::checkConfig(const QString& configFile, const QString& configName)
{
    if (!QFileInfo(configFile).isFile()) return Error{ErrorCode::ConfigMissing, QStringLiteral("no such config file"), configFile};
    try {
        const YAML::Node root = YAML::LoadFile(configFile.toStdString());
        if (!root.IsMap()) return Error{ErrorCode::ConfigInvalid, QStringLiteral("expected a mapping of named configs"), configFile};
        if (!root[configName.toStdString()])
            return Error{ErrorCode::ConfigInvalid, QStringLiteral("no config named '%1' in the file").arg(configName), configFile};
    } catch (const YAML::Exception& e) {
        return Error{ErrorCode::ConfigYaml, QStringLiteral("malformed YAML: ") + QString::fromStdString(e.msg),
                     QStringLiteral("%1:%2:%3").arg(configFile).arg(e.mark.line + 1).arg(e.mark.column + 1)};
    }
    return Done{};
}

Expected<QString> RunSubmitter::remoteRunDir(const ClusterProfile& profile, const QString& runId)
{
    if (m_remoteRoot.isEmpty()) {
        auto root = m_transport.absolutePath(profile.remoteRoot);
        if (!root) return root.error();
        m_remoteRoot = *root;
    }
    return m_remoteRoot + QStringLiteral("/runs/") + runId;
}

Status RunSubmitter::placeCommandFiles(const RunRecord& rec, const CommandRun& command)
{
    // The definition as it was launched, in the mirror and beside the run; and the metrics module
    // the command imports (the job script puts the run folder on PYTHONPATH).
    QFile definition(command.file);
    if (!definition.open(QIODevice::ReadOnly)) return Error{ErrorCode::ConfigMissing, definition.errorString(), command.file};
    const QByteArray definitionBytes = definition.readAll();
    QSaveFile local(m_store.workspace().runDir(rec.id) + QStringLiteral("/run.yaml"));
    if (!local.open(QIODevice::WriteOnly) || local.write(definitionBytes) != definitionBytes.size() || !local.commit())
        return Error{ErrorCode::StoreIo, QStringLiteral("cannot write the run's definition: ") + local.errorString(), local.fileName()};
    if (auto ok = m_transport.writeFile(rec.remoteDir + QStringLiteral("/run.yaml"), definitionBytes); !ok) return ok;
    if (command.sent.gitDirty) {  // the uncommitted changes of the code this run got
        QSaveFile diff(m_store.workspace().runDir(rec.id) + QStringLiteral("/code.diff"));
        if (!diff.open(QIODevice::WriteOnly) || diff.write(command.sent.gitDiff) != command.sent.gitDiff.size() || !diff.commit())
            return Error{ErrorCode::StoreIo, QStringLiteral("cannot write the code's diff: ") + diff.errorString(), diff.fileName()};
        if (auto ok = m_transport.writeFile(rec.remoteDir + QStringLiteral("/code.diff"), command.sent.gitDiff); !ok) return ok;
    }
    QFile module(QStringLiteral(":/scaledesk/python/scaledesk_metrics.py"));
    if (!module.open(QIODevice::ReadOnly))
        return Error{ErrorCode::StoreIo, QStringLiteral("the metrics module is missing from this build"), module.fileName()};
    return m_transport.writeFile(rec.remoteDir + QStringLiteral("/scaledesk_metrics.py"), module.readAll());
}

Status RunSubmitter::sendCode(const LaunchRequest& req, CommandRun& command, const ProgressFn& say)
{
    auto firstDir = remoteRunDir(req.profile, req.points.first().runId);  // the remote root, absolute
    if (!firstDir) return firstDir.error();
    say(QStringLiteral("reading the code folder %1").arg(command.code));
    auto snap = snapshotCode(command.code, {command.syncMaxFileBytes, command.syncMaxTotalBytes});
    if (!snap)
        return Error{snap.error().code, snap.error().message + QStringLiteral(" (the code of %1)").arg(command.file),
                     snap.error().location};
    auto sync = syncCode(m_transport, *snap, m_remoteRoot + QStringLiteral("/code"));
    if (!sync) return sync.error();
    say(sync->reused ? QStringLiteral("code %1: %2 files, unchanged since a launch before: nothing sent (%3)")
                           .arg(snap->shortHash())
                           .arg(snap->files.size())
                           .arg(sync->remoteDir)
                     : QStringLiteral("code %1: %2 files; sent %3 of them (%4 bytes) to %5")
                           .arg(snap->shortHash())
                           .arg(snap->files.size())
                           .arg(sync->filesSent)
                           .arg(sync->bytesSent)
                           .arg(sync->remoteDir));
    command.sent = {QString::fromLatin1(snap->hash), snap->folder, snap->gitCommit, snap->gitDirty, snap->gitDiff};
    // From here the command's {code} is the copy on the far side (braces there are literal text).
    QString there = sync->remoteDir;
    there.replace(QLatin1Char('{'), QStringLiteral("{{")).replace(QLatin1Char('}'), QStringLiteral("}}"));
    command.code = there;
    return Done{};
}

SubmitOutcome RunSubmitter::submitPoint(const ClusterProfile& profile, const RunPoint& point, const SubmitOptions& o)
{
    using Kind = SubmitOutcome::Kind;
    auto refused = [&](const Error& e) { return outcome(Kind::Failed, point.runId, RunRecord(), e); };
    QString why;
    if (!RunStore::validRunId(point.runId, &why)) return refused(Error{ErrorCode::RunId, why, point.runId});
    // A benchmark job (point.task) with no config file has no config.yaml.
    const bool withConfig = point.task.isEmpty() || !o.configFile.isEmpty();
    QByteArray configBytes;
    if (withConfig) {
        QFile config(o.configFile);
        if (!config.open(QIODevice::ReadOnly)) return refused(Error{ErrorCode::ConfigMissing, config.errorString(), o.configFile});
        configBytes = config.readAll();
    }

    RunRecord rec;
    rec.id = point.runId;
    rec.sweep = point.sweep;
    rec.profile = profile.name;
    rec.configFile = withConfig ? QFileInfo(o.configFile).absoluteFilePath() : QString();
    // A command run is named by its run definition (the planner finds the runs of one by it).
    rec.configName = o.command.isSet() ? QFileInfo(o.command.file).completeBaseName() : o.configName;
    rec.strategy = point.strategy;
    rec.nodes = point.nodes;
    rec.ranksPerNode = point.ranksPerNode;
    rec.repetition = point.repetition;
    rec.localBatch = point.localBatch;
    rec.scaling = point.scaling;
    rec.task = point.task;
    rec.transition(RunState::Draft);
    // A new run gets a folder of its own (refuseTakenFolders). submit() checked every point's
    // folder; this is for one made since (another workspace's launch of the same ids racing this
    // one). A run this workspace has is refused by create below, in its own words.
    if (!m_store.exists(point.runId)) {
        auto dir = remoteRunDir(profile, point.runId);
        if (!dir) return refused(dir.error());
        if (auto free = refuseTakenFolders(m_transport, {*dir}); !free) return refused(free.error());
    }
    // Held for the whole submit: a poll (of this process or another) leaves a run alone while its
    // submit is under way, and reconciles it only once the submitting process is gone.
    const QString localDir = m_store.workspace().runDir(rec.id);
    QDir().mkpath(localDir);
    QLockFile submitting(localDir + QStringLiteral("/.submitting"));
    submitting.setStaleLockTime(0);
    if (!submitting.tryLock(0))
        return refused(Error{ErrorCode::RunExists, QStringLiteral("another process is submitting this run"), rec.id});
    // Recorded before the first remote action (create refuses an id that exists).
    rec.submitStep = QStringLiteral("upload");
    rec.transition(RunState::Submitting, QStringLiteral("uploading to %1").arg(m_transport.describe()));
    if (auto ok = m_store.create(rec); !ok) return refused(ok.error());

    // Every later step changes the stored record under its lock, never a copy of it.
    auto record = [&](const std::function<void(RunRecord&)>& change) -> Status {
        auto saved = m_store.update(rec.id, [&](RunRecord& r) {
            change(r);
            return Status(Done{});
        });
        if (!saved) return saved.error();
        rec = *saved;
        return Done{};
    };
    auto fail = [&](const Error& e) {
        if (auto ok = record([&](RunRecord& r) { r.transition(RunState::SubmitFailed, QStringLiteral("failed to submit: ") + e.text()); });
            !ok)
            return refused(ok.error());
        return outcome(Kind::Failed, rec.id, rec, e);
    };

    // The exact config the run gets, in the mirror too: comparisons and reports read it there.
    if (withConfig) {
        QSaveFile local(m_store.workspace().runDir(rec.id) + QStringLiteral("/config.yaml"));
        if (!local.open(QIODevice::WriteOnly) || local.write(configBytes) != configBytes.size() || !local.commit())
            return fail(
                Error{ErrorCode::StoreIo, QStringLiteral("cannot write the run's config: ") + local.errorString(), local.fileName()});
    }

    auto dir = remoteRunDir(profile, point.runId);  // asked above: no round trip
    if (!dir) return fail(dir.error());
    if (auto ok = record([&](RunRecord& r) { r.remoteDir = *dir; }); !ok) return refused(ok.error());
    if (auto ok = m_transport.makeDirs(rec.remoteDir); !ok) return fail(ok.error());
    if (withConfig)
        if (auto ok = m_transport.writeFile(rec.remoteDir + QStringLiteral("/config.yaml"), configBytes); !ok) return fail(ok.error());
    if (o.command.isSet())
        if (auto ok = placeCommandFiles(rec, o.command); !ok) return fail(ok.error());
    const QString script = m_scheduler.renderScript(jobRequest(profile, point, o, m_remoteRoot));
    if (auto ok = m_transport.writeFile(rec.remoteDir + QLatin1Char('/') + m_scheduler.scriptName(), script.toUtf8(), 0755); !ok)
        return fail(ok.error());

    if (auto ok = record([&](RunRecord& r) {
            r.submitStep = QStringLiteral("sbatch");
            r.transition(RunState::Submitting, QStringLiteral("handing the job to %1").arg(m_scheduler.kind()));
        });
        !ok)
        return refused(ok.error());
    SubmitOutcome handed = handOver(m_store, m_scheduler, rec.id, m_scheduler.kind());
    if (handed.kind == Kind::Failed) return fail(handed.error);
    return handed;
}

Expected<LaunchResult> RunSubmitter::submit(const LaunchRequest& req, const Progress& progress, const std::function<bool()>& stopRequested)
{
    auto say = [&](const ProgressStep& m) {
        if (progress) progress(m);
    };
    // Every run folder first, before anything is sent or recorded: a launch whose ids were used on
    // this remote_root is refused whole, as one whose ids this workspace has is (checkLaunch, which
    // RunActions::launch ran before this: no point here is a run of this workspace).
    QStringList dirs;
    for (const RunPoint& p : req.points) {
        auto dir = remoteRunDir(req.profile, p.runId);
        if (!dir) return dir.error();
        dirs << *dir;
    }
    if (auto free = refuseTakenFolders(m_transport, dirs); !free) return free.error();
    SubmitOptions o = req.options;
    if (o.trainerPath.isEmpty() && !o.command.isSet()) {
        auto trainer = profileTrainer(m_transport, req.profile);
        if (!trainer) return trainer.error();
        o.trainerPath = *trainer;
    }
    if (o.command.sendCode) {
        auto sent = sendCode(req, o.command, say);
        if (!sent) return sent.error();
    }
    if (req.makeData) {
        say(QStringLiteral("making sure the cpu configs' data exists under %1/data/generated").arg(req.profile.remoteRoot));
        auto data = ensureGeneratedData(m_transport, req.profile, o.trainerPath);
        if (!data) return data.error();
        o.dataDir = *data;
    }
    if (launchTrains(req)) {
        auto firstDir = remoteRunDir(req.profile, req.points.first().runId);
        if (!firstDir) return firstDir.error();
        auto warnings = checkRunData(m_transport, o, *firstDir);
        if (!warnings) return warnings.error();
        for (const QString& w : *warnings) say(QStringLiteral("warning: ") + w);
    }
    LaunchResult result;
    const qsizetype n = req.points.size();
    for (qsizetype i = 0; i < n; ++i) {
        const RunPoint& p = req.points[i];
        if (stopRequested && stopRequested()) {
            for (qsizetype j = i; j < n; ++j) result.outcomes << outcome(SubmitOutcome::Kind::NotTried, req.points[j].runId);
            break;
        }
        say({QStringLiteral("submitting %1 (%2 of %3)").arg(p.runId).arg(i + 1).arg(n), i, n, true});
        const SubmitOutcome r = submitPoint(req.profile, p, o);
        result.outcomes << r;
        if (r.followed()) {
            say({QStringLiteral("%1: %2 (%3)").arg(r.runId, runStateName(r.run.state), r.run.message), i + 1, n});
            continue;
        }
        say({QStringLiteral("%1: %2").arg(r.runId, r.error.text()), i + 1, n});
        if (req.onFailure == OnSubmitFailure::Stop) {
            for (qsizetype j = i + 1; j < n; ++j) result.outcomes << outcome(SubmitOutcome::Kind::NotTried, req.points[j].runId);
            break;
        }
    }
    return result;
}

SubmitOutcome RunSubmitter::runAgain(const RunRecord& rec)
{
    using Kind = SubmitOutcome::Kind;
    if (rec.jobId.isEmpty()) return resubmit(rec);
    auto job = m_scheduler.requeue({rec.jobId, rec.remoteDir, slurmJobName(rec.id)});
    // Only a job the scheduler has forgotten is submitted anew; after any other failure the
    // requeue may have happened, and a second job for the folder is the one thing not to risk.
    if (!job && job.error().code == ErrorCode::SchedulerUnknownJob) return resubmit(rec);
    auto saved = m_store.update(rec.id, [&](RunRecord& r) {
        if (!job) {
            r.transition(r.state, QStringLiteral("requeue failed: ") + job.error().text());
        } else {
            r.jobId = *job;
            r.submitStep = QStringLiteral("recorded");
            r.transition(RunState::Queued, QStringLiteral("requeued by the user: job %1").arg(r.jobId));
        }
        return Status(Done{});
    });
    if (!saved) return outcome(Kind::Failed, rec.id, RunRecord(), saved.error());
    if (!job) return outcome(Kind::Failed, rec.id, *saved, job.error());
    return outcome(Kind::Queued, rec.id, *saved);
}

SubmitOutcome RunSubmitter::resubmit(const RunRecord& rec)
{
    using Kind = SubmitOutcome::Kind;
    // Before a new job: is there one already? A submit whose id was lost, a job that has left
    // squeue: any of them means the run has its job, and a second one is the thing not to start.
    auto existing = m_scheduler.findJob({rec.jobId, rec.remoteDir, slurmJobName(rec.id)});
    if (!existing)
        return outcome(Kind::Failed, rec.id, rec,
                       Error{ErrorCode::ActionRefused,
                             QStringLiteral("cannot tell whether a job of this run still exists (%1); nothing was submitted")
                                 .arg(existing.error().text()),
                             rec.id});
    if (!existing->isEmpty()) {
        auto adopted = m_store.update(rec.id, [&](RunRecord& r) {
            r.jobId = *existing;
            r.submitStep = QStringLiteral("recorded");
            r.transition(RunState::Queued,
                         QStringLiteral("found job %1 of this run by its name and folder; the run follows it").arg(*existing));
            return Status(Done{});
        });
        if (!adopted) return outcome(Kind::Failed, rec.id, RunRecord(), adopted.error());
        return outcome(Kind::Existing, rec.id, *adopted);
    }

    const QString note = rec.jobId.isEmpty()
        ? QStringLiteral("submitted again by the user")
        : QStringLiteral("resubmitted by the user (%1 no longer knew job %2)").arg(m_scheduler.kind(), rec.jobId);
    auto started = m_store.update(rec.id, [&](RunRecord& r) {
        r.submitStep = QStringLiteral("sbatch");
        r.transition(RunState::Submitting, QStringLiteral("handing the job to %1 again").arg(m_scheduler.kind()));
        return Status(Done{});
    });
    if (!started) return outcome(Kind::Failed, rec.id, RunRecord(), started.error());
    SubmitOutcome handed = handOver(m_store, m_scheduler, rec.id, note);
    if (handed.kind != Kind::Failed) return handed;
    // A plain refusal: no job. The run is as it was, with the reason.
    auto back = m_store.update(rec.id, [&](RunRecord& r) {
        r.submitStep = QStringLiteral("sbatch");
        r.transition(rec.state, QStringLiteral("requeue failed: ") + handed.error.text());
        return Status(Done{});
    });
    if (back) handed.run = *back;
    return handed;
}

}  // namespace scaledesk
