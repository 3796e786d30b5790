#include "scheduler/slurmscheduler.h"

#include "scheduler/shellquote.h"

#include <QRegularExpression>

#include <algorithm>

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

QString SlurmScheduler::parsableJobId(const QByteArray& stdoutText)
{
    static const QRegularExpression parsable(QStringLiteral("^([0-9]+)(;[A-Za-z0-9_.-]+)?$"));
    const QList<QByteArray> lines = stdoutText.split('\n');
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const auto m = parsable.match(QString::fromUtf8(it->trimmed()));
        if (m.hasMatch()) return m.captured(1);
    }
    return QString();
}

Expected<Submission> SlurmScheduler::submit(const QString& runDir)
{
    const QString command = QStringLiteral("cd %1 && sbatch %2").arg(shellQuote(runDir), shellJoin(sbatchArguments(runDir)));
    auto r = m_transport.exec(command, m_execTimeoutMs, Idempotent::No);
    if (!r) return r.error();
    Submission s;
    s.exitCode = r->exitCode;
    s.output = QString::fromUtf8(r->out + r->err);
    // --parsable prints "jobid" or "jobid;cluster"; site wrappers and job-submit plugins print
    // lines of their own around it. An id means the job exists, whatever the exit status says.
    s.jobId = parsableJobId(r->out);
    if (!s.jobId.isEmpty()) return s;
    // sbatch's own refusal ("sbatch: error: Batch job submission failed: …") is plain: no job.
    const QString err = QString::fromUtf8(r->err).trimmed();
    const QString said = err.isEmpty() ? QString::fromUtf8(r->out).trimmed() : err;
    if (r->exitCode > 0 && said.contains(QLatin1String("sbatch: error:")))
        return Error{ErrorCode::SchedulerRejected, QStringLiteral("sbatch refused the job: ") + said.left(2000), m_transport.describe()};
    s.why = r->exitCode == 0 ? QStringLiteral("sbatch printed no job id")
        : r->exitCode < 0    ? QStringLiteral("sbatch printed no job id and its exit status was lost")
                             : QStringLiteral("sbatch printed no job id and exited %1").arg(r->exitCode);
    if (!said.isEmpty()) s.why += QStringLiteral(" ('%1')").arg(said.section(QLatin1Char('\n'), -1).left(200));
    return s;
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

QString SlurmScheduler::findJobCommand(const JobRef& ref)
{
    // One round trip, three witnesses: squeue (the jobs SLURM still holds), sacct (ended jobs,
    // where accounting runs; two weeks back), and the folder's slurm-<id>.out (the job's own
    // output, --output=slurm-%j.out), which is there even when both have forgotten the job. Only
    // names of that pattern in plain characters are printed: no other entry is named or read.
    return QStringLiteral("echo @squeue; %1 2>&1; echo \"@rc $?\"; "
                          "echo @sacct; timeout 20 sacct -X -n -P -S now-14days --name=%2 -o JobIDRaw,JobName,WorkDir,State 2>&1; "
                          "echo \"@rc $?\"; echo @files; cd %3 2>/dev/null && for f in slurm-[0-9]*.out; do "
                          "case \"$f\" in *[!A-Za-z0-9._-]*) ;; *) [ -f \"$f\" ] && echo \"$f\" ;; esac; done; echo \"@rc 0\"")
        .arg(squeueCommand(), shellQuote(ref.jobName), shellQuote(ref.runDir));
}

Expected<QString> SlurmScheduler::parseFindJob(const QByteArray& output, const JobRef& ref)
{
    bool squeueOk = false;
    static const QRegularExpression outFile(QStringLiteral("^slurm-([0-9]+)\\.out$"));
    enum { None, Squeue, Sacct, Files } section = None;
    QList<qulonglong> found[4];
    QList<qulonglong> pending;
    for (const QByteArray& raw : output.split('\n')) {
        const QString line = QString::fromUtf8(raw).trimmed();
        if (line == QLatin1String("@squeue") || line == QLatin1String("@sacct") || line == QLatin1String("@files")) {
            section = line == QLatin1String("@squeue") ? Squeue : line == QLatin1String("@sacct") ? Sacct : Files;
            pending.clear();
            continue;
        }
        if (line.startsWith(QLatin1String("@rc "))) {
            const bool ok = line.mid(4).toInt() == 0;
            if (ok) found[section] = pending;  // a failed command's lines are error text
            if (section == Squeue) squeueOk = ok;
            section = None;
            continue;
        }
        if (section == Files) {
            const auto m = outFile.match(line);
            if (m.hasMatch()) pending << m.captured(1).toULongLong();
            continue;
        }
        const QStringList f = line.split(QLatin1Char('|'));
        // squeue: id|state|reason|name|workdir; sacct: id|name|workdir|state.
        const bool ours = section == Squeue ? f.size() >= 5 && f[3] == ref.jobName && f.mid(4).join(QLatin1Char('|')) == ref.runDir
            : section == Sacct ? f.size() >= 4 && f[1] == ref.jobName && f.mid(2, f.size() - 3).join(QLatin1Char('|')) == ref.runDir
                               : false;
        bool numeric = false;
        const qulonglong id = f.value(0).toULongLong(&numeric);
        if (ours && numeric) pending << id;
    }
    // ref.jobId is a job of an earlier submit of this run: it, and any older job, is no answer
    // (SLURM's ids grow), though its slurm-<id>.out and accounting stay.
    bool hasEarlier = false;
    const qulonglong earlier = ref.jobId.toULongLong(&hasEarlier);
    if (hasEarlier)
        for (auto& ids : found) ids.removeIf([&](qulonglong id) { return id <= earlier; });
    // Without squeue's answer nothing is known either way (sacct may be off, the folder not yet written).
    if (!squeueOk)
        return Error{ErrorCode::SchedulerUnavailable,
                     QStringLiteral("squeue did not answer: %1").arg(QString::fromUtf8(output).trimmed().left(300)), ref.runDir};
    for (const int witness : {Squeue, Sacct, Files})
        if (!found[witness].isEmpty()) return QString::number(*std::max_element(found[witness].begin(), found[witness].end()));
    return QString();
}

Expected<QString> SlurmScheduler::findJob(const JobRef& ref)
{
    auto r = m_transport.exec(findJobCommand(ref), m_execTimeoutMs, Idempotent::Yes);
    if (!r) return r.error();
    return parseFindJob(r->out, ref);
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
