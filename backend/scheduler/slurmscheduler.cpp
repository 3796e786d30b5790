#include "scheduler/slurmscheduler.h"

#include "scheduler/shellquote.h"

#include <QRegularExpression>

namespace scaledesk {

namespace {
// The user's own jobs (only `ids` when given), all states SLURM still remembers, one line each:
// id|state|reason|name|workdir. `squeue --me` arrived in SLURM 20.02; older versions reject it,
// so fall back to -u.
QString squeueCommand(const QString& ids = QString())
{
    const QString filter = ids.isEmpty() ? QString() : QStringLiteral(" -j ") + shellQuote(ids);
    // Bounded: a controller that does not answer must not hold the poll (or the window) for long.
    return QStringLiteral("{ timeout 20 squeue --me -h -t all%1 -o '%i|%T|%r|%j|%Z' 2>/dev/null"
                          " || timeout 20 squeue -h -t all -u \"$(id -un)\"%1 -o '%i|%T|%r|%j|%Z'; }")
        .arg(filter);
}

QString firstLine(const QByteArray& bytes)
{
    const QString s = QString::fromUtf8(bytes).trimmed();
    return s.section(QLatin1Char('\n'), 0, 0);
}
}  // namespace

RunState SlurmScheduler::mapState(const QString& s0)
{
    const QString s = s0.section(QLatin1Char(' '), 0, 0).toUpper();  // sacct: "CANCELLED by 0"
    if (s == QLatin1String("PENDING") || s == QLatin1String("CONFIGURING") || s == QLatin1String("REQUEUE_HOLD") ||
        s == QLatin1String("REQUEUE_FED") || s == QLatin1String("RESV_DEL_HOLD") || s == QLatin1String("SUSPENDED") ||
        s == QLatin1String("STOPPED") || s == QLatin1String("SPECIAL_EXIT"))
        return RunState::Queued;
    if (s == QLatin1String("REQUEUED") || s == QLatin1String("PREEMPTED")) return RunState::Requeued;
    if (s == QLatin1String("RUNNING") || s == QLatin1String("COMPLETING") || s == QLatin1String("STAGE_OUT") ||
        s == QLatin1String("SIGNALING") || s == QLatin1String("RESIZING"))
        return RunState::Running;
    if (s == QLatin1String("COMPLETED")) return RunState::Completed;
    if (s == QLatin1String("CANCELLED") || s == QLatin1String("REVOKED")) return RunState::Cancelled;
    if (s == QLatin1String("TIMEOUT") || s == QLatin1String("DEADLINE")) return RunState::Timeout;
    return RunState::Failed;  // FAILED, NODE_FAIL, BOOT_FAIL, OUT_OF_MEMORY, and anything new
}

Expected<ExecResult> SlurmScheduler::run(const QString& command, const QString& what, Idempotent idempotent)
{
    auto r = m_transport.exec(command, m_execTimeoutMs, idempotent);
    if (!r) return r.error();
    if (r->exitCode != 0) {
        QString msg = QString::fromUtf8(r->err).trimmed();
        if (msg.isEmpty()) msg = QString::fromUtf8(r->out).trimmed();
        if (msg.isEmpty()) msg = QStringLiteral("exit code %1").arg(r->exitCode);
        return Error{ErrorCode::SchedulerRejected, what + QStringLiteral(": ") + msg, m_transport.describe()};
    }
    return r;
}

Expected<QString> SlurmScheduler::submit(const QString& runDir)
{
    const QString command = QStringLiteral("cd %1 && sbatch %2").arg(shellQuote(runDir), shellJoin(sbatchArguments(runDir)));
    auto r = run(command, QStringLiteral("sbatch refused the job"));
    if (!r) return r.error();
    // --parsable prints "jobid" or "jobid;cluster".
    const QString id = firstLine(r->out).section(QLatin1Char(';'), 0, 0);
    static const QRegularExpression numeric(QStringLiteral("^[0-9]+$"));
    if (!numeric.match(id).hasMatch())
        return Error{ErrorCode::SchedulerParse, QStringLiteral("sbatch printed no job id: '%1'").arg(firstLine(r->out)),
                     m_transport.describe()};
    return id;
}

QString SlurmScheduler::queryCommand(const QList<JobRef>& jobs) const
{
    QStringList ids;
    for (const auto& j : jobs)
        if (!j.jobId.isEmpty()) ids << j.jobId;
    QString cmd = QStringLiteral("echo @squeue; ") + squeueCommand(ids.join(QLatin1Char(','))) + QStringLiteral(" 2>&1; echo \"@rc $?\"");
    if (!ids.isEmpty())
        cmd += QStringLiteral("; echo @sacct; timeout 20 sacct -X -n -P -o JobIDRaw,State,ExitCode -j %1 2>&1; echo \"@rc $?\"")
                   .arg(shellQuote(ids.join(QLatin1Char(','))));
    return cmd;
}

QHash<QString, JobStatus> SlurmScheduler::parseQuery(const QByteArray& output, const QList<JobRef>& jobs) const
{
    QHash<QString, JobStatus> squeue, sacct;
    QHash<QString, JobStatus>* section = nullptr;
    bool squeueOk = false, forgotten = false;
    QHash<QString, JobStatus> pending;
    for (const QByteArray& raw : output.split('\n')) {
        const QString line = QString::fromUtf8(raw).trimmed();
        if (line == QLatin1String("@squeue") || line == QLatin1String("@sacct")) {
            section = line == QLatin1String("@squeue") ? &squeue : &sacct;
            pending.clear();
            continue;
        }
        if (line.startsWith(QLatin1String("@rc "))) {
            // A failed command's lines are error text. squeue -j with one id that SLURM has
            // forgotten fails too, and that is an answer: no such job.
            const bool ok = line.mid(4).toInt() == 0 || (section == &squeue && forgotten);
            if (section == &squeue) squeueOk = ok;
            if (section && ok) *section = pending;
            pending.clear();
            section = nullptr;
            forgotten = false;
            continue;
        }
        if (line.contains(QLatin1String("Invalid job id specified"))) {
            forgotten = true;
            continue;
        }
        if (!section || line.isEmpty()) continue;
        const QStringList f = line.split(QLatin1Char('|'));
        if (f.size() < 3) continue;
        JobStatus st;
        st.known = true;
        st.schedulerState = f[1].section(QLatin1Char(' '), 0, 0);
        st.state = mapState(f[1]);
        st.reason = section == &squeue ? f[2] : QStringLiteral("exit %1").arg(f[2]);
        if (st.reason == QLatin1String("None")) st.reason.clear();
        pending.insert(f[0], st);
    }
    QHash<QString, JobStatus> out;
    if (!squeueOk) return out;  // squeue did not answer: nothing is known either way
    for (const auto& j : jobs) {
        if (squeue.contains(j.jobId))
            out.insert(j.jobId, squeue.value(j.jobId));
        else if (sacct.contains(j.jobId))
            out.insert(j.jobId, sacct.value(j.jobId));
        else
            out.insert(j.jobId, JobStatus{});
    }
    return out;
}

Expected<QString> SlurmScheduler::findJob(const JobRef& ref)
{
    auto r = run(squeueCommand(), QStringLiteral("squeue failed"), Idempotent::Yes);
    if (!r) return r.error();
    for (const QByteArray& raw : r->out.split('\n')) {
        const QStringList f = QString::fromUtf8(raw).trimmed().split(QLatin1Char('|'));
        if (f.size() >= 5 && f[3] == ref.jobName && f.mid(4).join(QLatin1Char('|')) == ref.runDir) return f[0];
    }
    return QString();
}

namespace {
// Job ids come from sbatch --parsable and from the run record: digits (an array task: 12_3). Anything
// else never reaches scancel or scontrol, where "--user=me" would be an option.
Status checkJobId(const JobRef& job)
{
    static const QRegularExpression id(QStringLiteral("^[0-9]+(_[0-9]+)?$"));
    if (id.match(job.jobId).hasMatch()) return Done{};
    return Error{ErrorCode::SchedulerParse, QStringLiteral("not a SLURM job id: '%1'").arg(job.jobId), job.runDir};
}

bool forgotten(const Error& e) { return e.message.contains(QLatin1String("Invalid job id specified")); }
}  // namespace

Status SlurmScheduler::cancel(const JobRef& job, const QString& signal)
{
    if (auto ok = checkJobId(job); !ok) return ok;
    QStringList args{QStringLiteral("scancel")};
    // --batch: the batch shell gets the signal, as with --signal=B:USR1; the job script forwards it.
    if (!signal.isEmpty()) args << QStringLiteral("--batch") << QStringLiteral("--signal=") + signal;
    args << job.jobId;
    // A plain cancel may be repeated (cancelling twice is cancelling); a signal sent twice is not.
    auto r = run(shellJoin(args), QStringLiteral("scancel failed"), signal.isEmpty() ? Idempotent::Yes : Idempotent::No);
    if (!r) {
        if (forgotten(r.error())) return Error{ErrorCode::SchedulerUnknownJob, r.error().message, r.error().location};
        return r.error();
    }
    return Done{};
}

Expected<QString> SlurmScheduler::requeue(const JobRef& job)
{
    if (auto ok = checkJobId(job); !ok) return ok.error();
    auto r = run(shellJoin({QStringLiteral("scontrol"), QStringLiteral("requeue"), job.jobId}), QStringLiteral("scontrol requeue failed"));
    if (!r) {
        if (forgotten(r.error())) return Error{ErrorCode::SchedulerUnknownJob, r.error().message, r.error().location};
        return r.error();
    }
    return job.jobId;
}

}  // namespace scaledesk
