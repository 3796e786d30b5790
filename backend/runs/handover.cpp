#include "runs/handover.h"

#include "scheduler/jobscript.h"

#include <QDateTime>
#include <QFile>

#include <csignal>
#include <unistd.h>

namespace scaledesk {

namespace {
// Test hook: SCALEDESK_FAULT_SUBMIT=before-sbatch|after-sbatch kills the process at that point,
// as a crash or a closed laptop would (tests/backend/cli/tst_cli_sandbox.cpp).
void faultPoint(const char* where)
{
    if (qEnvironmentVariable("SCALEDESK_FAULT_SUBMIT") == QLatin1String(where)) ::kill(::getpid(), SIGKILL);
}

constexpr qsizetype kLogLimit = 1 << 20;  // per submit: a wrapper that prints without end is cut here

void appendSubmitLog(const QString& runDir, const QString& what, const QString& output)
{
    QFile f(runDir + QStringLiteral("/submit.log"));
    if (!f.open(QIODevice::Append)) return;  // the record holds the outcome; the log is for reading
    f.write(QStringLiteral("--- %1 %2\n").arg(QDateTime::currentDateTimeUtc().toString(Qt::ISODate), what).toUtf8());
    const QByteArray text = output.left(kLogLimit).toUtf8();
    f.write(text);
    if (!text.isEmpty() && !text.endsWith('\n')) f.write("\n");
    if (output.size() > kLogLimit) f.write(QByteArray("[… cut at 1 MiB]\n"));
}
}  // namespace

namespace {
// Whether an error of a submit leaves its outcome unknown (the job may exist).
bool submitOutcomeUnknown(const Error& e)
{
    return e.code == ErrorCode::TransportTimeout || e.code == ErrorCode::TransportConnect || e.code == ErrorCode::TransportIo;
}

SubmitOutcome failed(const QString& runId, const Error& e)
{
    SubmitOutcome o;
    o.kind = SubmitOutcome::Kind::Failed;
    o.runId = runId;
    o.error = e;
    return o;
}

// The outcome of a record change: the run as saved, or the store's error.
SubmitOutcome saved(SubmitOutcome::Kind kind, const QString& runId, const Expected<RunRecord>& rec)
{
    if (!rec) return failed(runId, rec.error());
    SubmitOutcome o;
    o.kind = kind;
    o.runId = runId;
    o.run = *rec;
    return o;
}
}  // namespace

SubmitOutcome handOver(RunStore& store, Scheduler& scheduler, const QString& runId, const QString& note)
{
    using Kind = SubmitOutcome::Kind;
    auto rec = store.load(runId);
    if (!rec) return failed(runId, rec.error());
    const QString localDir = store.workspace().runDir(runId);
    const QString kind = scheduler.kind();
    auto record = [&](const std::function<void(RunRecord&)>& change) {
        return store.update(runId, [&](RunRecord& r) {
            change(r);
            return Status(Done{});
        });
    };
    auto queued = [&](const QString& jobId, const QString& why) {
        return saved(Kind::Queued, runId, record([&](RunRecord& r) {
                         r.jobId = jobId;
                         r.submitStep = QStringLiteral("recorded");
                         r.transition(RunState::Queued, why);
                     }));
    };

    faultPoint("before-sbatch");
    auto sub = scheduler.submit(rec->remoteDir);
    faultPoint("after-sbatch");
    QString unknown;
    if (!sub) {
        appendSubmitLog(localDir, kind + QStringLiteral(" submit failed"), sub.error().text());
        if (!submitOutcomeUnknown(sub.error())) return failed(runId, sub.error());
        unknown = sub.error().text();
    } else {
        appendSubmitLog(localDir, QStringLiteral("%1 submit (exit %2)").arg(kind).arg(sub->exitCode), sub->output);
        if (!sub->jobId.isEmpty()) return queued(sub->jobId, QStringLiteral("%1: job %2").arg(note, sub->jobId));
        unknown = sub->why;
    }
    const SubmitOutcome lookingFor = saved(
        Kind::Unknown, runId, record([&](RunRecord& r) {
            r.submitStep = QStringLiteral("sbatch-unknown");
            r.transition(RunState::Submitting, QStringLiteral("the submit's outcome is unknown (%1); looking for the job").arg(unknown));
        }));
    if (lookingFor.kind != Kind::Unknown || !sub) return lookingFor;  // a broken connection: the poller looks, once it is back
    // The command answered without an id: SLURM holds the job, if there is one, by now.
    auto found = scheduler.findJob({rec->jobId, rec->remoteDir, slurmJobName(runId)});
    if (!found || found->isEmpty()) return lookingFor;
    return queued(*found, QStringLiteral("%1: job %2, found by its name and folder (%3)").arg(note, *found, unknown));
}

}  // namespace scaledesk
