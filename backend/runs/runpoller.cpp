#include "runs/runpoller.h"

#include "scheduler/jobscript.h"
#include "scheduler/shellquote.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace scaledesk {

namespace {
constexpr qint64 kChunk = 8 << 20;
constexpr qint64 kInline = 1 << 20;

bool isWholeFile(const QString& name)
{
    return name == QLatin1String("manifest.json") || name == QLatin1String("exit_code");
}

// The line that says why a run failed: the trainer's manifest error, else the last line of the
// job's log that reports an error.
QString failureDetail(const QString& mirrorDir, const QString& jobId)
{
    const QString error = readRunManifest(mirrorDir).value(QStringLiteral("error")).toString();
    if (!error.isEmpty()) return error;
    // The trainer's own one-line error first, then whatever else reported an error (srun, MPI).
    for (const QByteArray& needle : {QByteArray("scaledesk-train: error:"), QByteArray("error")}) {
        for (const QString& name : {QStringLiteral("slurm-%1.out").arg(jobId), QStringLiteral("job.out"), QStringLiteral("out.log")}) {
            QFile f(mirrorDir + QLatin1Char('/') + name);
            if (!f.open(QIODevice::ReadOnly)) continue;
            f.seek(std::max<qint64>(0, f.size() - 64 * 1024));
            const QList<QByteArray> lines = f.readAll().split('\n');
            for (auto it = lines.rbegin(); it != lines.rend(); ++it)
                if (it->toLower().contains(needle)) return QString::fromUtf8(it->trimmed()).left(300);
        }
    }
    return QString();
}
}  // namespace

RunPoller::RunPoller(RunStore& store, Transport& transport, Scheduler& scheduler)
    : m_store(store), m_transport(transport), m_scheduler(scheduler)
{
}

void RunPoller::reconcileSubmitting(RunRecord& r, PollReport& report)
{
    if (r.state != RunState::Submitting) return;
    if (r.submitStep != QLatin1String("sbatch") || r.remoteDir.isEmpty()) {
        r.transition(RunState::SubmitFailed,
                     QStringLiteral("failed to submit: the app stopped while uploading, before the job was handed to the scheduler"));
        report.changed << r.id;
        return;
    }
    auto job = m_scheduler.findJob({QString(), r.remoteDir, slurmJobName(r.id)});
    if (!job) {
        report.problems << r.id + QStringLiteral(": ") + job.error().text();
        return;  // try again next poll
    }
    if (job->isEmpty()) {
        r.transition(RunState::SubmitFailed,
                     QStringLiteral("failed to submit: the app stopped during the submit and %1 has no job for this run")
                         .arg(m_scheduler.kind()));
    } else {
        r.jobId = *job;
        r.submitStep = QStringLiteral("recorded");
        r.transition(RunState::Queued, QStringLiteral("found job %1 after an interrupted submit").arg(r.jobId));
    }
    report.changed << r.id;
}

QString RunPoller::fileCommand(int index, const RunRecord& r) const
{
    // Per followed file: "@file <size> <mtime> <name>", then, when it grew by at most kInline bytes
    // since the mirror's size (append-only files) or changed at all (whole files), "@data <n>" and
    // exactly n bytes: the read is padded with zeros if the file shrank meanwhile, and "@end <size>"
    // after it tells the parser whether to trust them.
    const QString local = m_store.workspace().runDir(r.id);
    QStringList cases;
    for (const char* name : {"metrics.jsonl", "epochs.csv", "out.log", "job.out"}) {
        const qint64 have = QFileInfo(local + QLatin1Char('/') + QLatin1String(name)).size();
        if (have > 0) cases << QStringLiteral("%1) o=%2;;").arg(QLatin1String(name)).arg(have);
    }
    const QDir mirror(local);
    for (const QString& name : mirror.entryList({QStringLiteral("slurm-*.out"), QStringLiteral("rank-*.log")}, QDir::Files))
        cases << QStringLiteral("%1) o=%2;;").arg(shellQuote(name)).arg(QFileInfo(mirror.filePath(name)).size());
    for (const char* name : {"manifest.json", "exit_code"}) {
        const QString n = QLatin1String(name);
        if (r.mtimes.contains(n))
            cases << QStringLiteral("%1) o=-1; sig='%2 %3';;").arg(n).arg(QFileInfo(local + QLatin1Char('/') + n).size()).arg(r.mtimes.value(n));
        else
            cases << QStringLiteral("%1) o=-1;;").arg(n);
    }
    return QStringLiteral(
               "echo '@run %1'; d=%2; if [ -d \"$d\" ]; then ( cd \"$d\" && stat -c '%s %Y %n' -- metrics.jsonl epochs.csv "
               "manifest.json exit_code out.log job.out slurm-*.out rank-*.log 2>/dev/null | while read -r s m f; do "
               "echo \"@file $s $m $f\"; o=0; sig=; case \"$f\" in %3 esac; "
               "if [ \"$o\" -lt 0 ]; then [ \"$s $m\" = \"$sig\" ] && continue; o=0; fi; n=$((s - o)); "
               "if [ \"$n\" -gt 0 ] && [ \"$n\" -le %4 ]; then echo \"@data $n\"; "
               "{ tail -c +$((o + 1)) -- \"$f\" | head -c \"$n\"; cat /dev/zero; } | head -c \"$n\"; "
               "echo; echo \"@end $(stat -c %s -- \"$f\")\"; fi; done ); else echo '@gone'; fi")
        .arg(index)
        .arg(shellQuote(r.remoteDir), cases.join(QLatin1Char(' ')))
        .arg(kInline);
}

QHash<int, RunPoller::Seen> RunPoller::parseFiles(const QByteArray& out)
{
    QHash<int, Seen> seen;
    int current = -1;
    qsizetype pos = 0;
    auto nextLine = [&](QByteArray* line) {
        if (pos >= out.size()) return false;
        qsizetype nl = out.indexOf('\n', pos);
        if (nl < 0) nl = out.size();
        *line = out.mid(pos, nl - pos);
        pos = nl + 1;
        return true;
    };
    QByteArray line;
    while (nextLine(&line)) {
        if (line.startsWith("@run ")) {
            current = line.mid(5).toInt();
            seen[current];
        } else if (current >= 0 && line == "@gone") {
            seen[current].gone = true;
        } else if (current >= 0 && line.startsWith("@file ")) {
            const QList<QByteArray> f = line.mid(6).split(' ');
            if (f.size() < 3) continue;
            FileSeen fs;
            fs.size = f[0].toLongLong();
            fs.mtime = f[1].toLongLong();
            fs.name = QString::fromUtf8(line.mid(6 + f[0].size() + 1 + f[1].size() + 1));
            if (fs.name.contains(QLatin1Char('/'))) continue;
            seen[current].files << fs;
        } else if (current >= 0 && line.startsWith("@data ") && !seen[current].files.isEmpty()) {
            const qsizetype n = line.mid(6).toLongLong();
            if (n < 0 || pos + n > out.size()) break;  // a cut-off answer: the rest is unusable
            FileSeen& fs = seen[current].files.last();
            fs.data = out.mid(pos, n);
            pos += n + 1;  // the bytes and the echo's newline
            QByteArray end;
            if (nextLine(&end) && end.startsWith("@end ") && end.mid(5).toLongLong() >= fs.size) fs.inlined = true;
            else fs.data.clear();  // the file shrank while it was read: read it again next poll
        }
    }
    return seen;
}

void RunPoller::mirror(RunRecord& r, const FileSeen& f, PollReport& report)
{
    const QString& name = f.name;
    const qint64 size = f.size;
    const QString local = m_store.workspace().runDir(r.id) + QLatin1Char('/') + name;
    const QString remote = r.remoteDir + QLatin1Char('/') + name;
    if (isWholeFile(name)) {
        if (r.mtimes.value(name, -1) == f.mtime && QFileInfo(local).size() == size) return;
        QByteArray data;
        if (f.inlined) {
            data = f.data;
        } else {
            while (data.size() < size) {
                auto chunk = m_transport.readAt(remote, data.size(), std::min<qint64>(kChunk, size - data.size()));
                if (!chunk) {
                    report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
                    return;
                }
                if (chunk->isEmpty()) break;
                data += *chunk;
                report.bytesRead += quint64(chunk->size());
            }
        }
        report.bytesNew += quint64(data.size());
        QSaveFile out(local);
        if (out.open(QIODevice::WriteOnly)) {
            out.write(data);
            if (out.commit()) r.mtimes[name] = f.mtime;
        }
        return;
    }
    // Append-only: the mirror's own size is the offset, so a crash between the write and the
    // record never duplicates or drops bytes.
    qint64 offset = QFileInfo(local).size();
    if (size < offset) {
        QFile::remove(local + QStringLiteral(".prev"));
        QFile::rename(local, local + QStringLiteral(".prev"));
        report.problems << r.id + QStringLiteral(": %1 shrank from %2 to %3 bytes (restarted); the old copy is %1.prev")
                                      .arg(name).arg(offset).arg(size);
        offset = 0;
    }
    if (size == offset) return;
    QFile out(local);
    if (!out.open(QIODevice::Append)) {
        report.problems << r.id + QStringLiteral(": cannot write the mirror %1: %2").arg(local, out.errorString());
        return;
    }
    // Inline bytes start at the offset the command was built with, which is this mirror's size
    // unless the file shrank (then they do not line up and are not used).
    if (f.inlined && offset + f.data.size() == size) {
        out.write(f.data);
        offset = size;
        report.bytesNew += quint64(f.data.size());
    }
    while (offset < size) {
        auto chunk = m_transport.readAt(remote, offset, std::min<qint64>(kChunk, size - offset));
        if (!chunk) {
            report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
            break;
        }
        if (chunk->isEmpty()) break;
        out.write(*chunk);
        offset += chunk->size();
        report.bytesNew += quint64(chunk->size());
        report.bytesRead += quint64(chunk->size());
    }
    out.close();
    r.offsets[name] = offset;
}

Expected<PollReport> RunPoller::poll(const QStringList& runIds)
{
    PollReport report;
    const TransportStats before = m_transport.stats();
    QList<RunRecord> runs;
    for (const QString& id : runIds) {
        auto r = m_store.load(id);
        if (!r) {
            report.problems << r.error().text();
            continue;
        }
        runs << *r;
    }
    for (auto& r : runs) {
        reconcileSubmitting(r, report);
        if (report.changed.contains(r.id)) {
            if (auto ok = m_store.save(r); !ok) report.problems << ok.error().text();
        }
    }

    // One round trip: the scheduler's view, then per run whether its folder exists, the size and
    // mtime of each followed file and, inline, the bytes it grew by (up to kInline per file).
    QList<JobRef> jobs;
    QStringList cmd;
    for (const auto& r : runs)
        if (!r.jobId.isEmpty() && isActive(r.state)) jobs << JobRef{r.jobId, r.remoteDir, slurmJobName(r.id)};
    if (!jobs.isEmpty()) cmd << m_scheduler.queryCommand(jobs);
    cmd << QStringLiteral("echo @files");
    for (int i = 0; i < runs.size(); ++i) {
        if (runs[i].remoteDir.isEmpty()) continue;
        cmd << fileCommand(i, runs[i]);
    }
    auto out = m_transport.exec(cmd.join(QStringLiteral("; ")), 60000);
    if (!out) return out.error();
    const qsizetype filesAt = out->out.indexOf("@files\n");
    const QByteArray schedulerPart = filesAt < 0 ? out->out : out->out.left(filesAt);
    const QHash<QString, JobStatus> states = m_scheduler.parseQuery(schedulerPart, jobs);
    const QHash<int, Seen> seen = parseFiles(filesAt < 0 ? QByteArray() : out->out.mid(filesAt + 7));

    for (int i = 0; i < runs.size(); ++i) {
        RunRecord& r = runs[i];
        const RunState was = r.state;
        const QJsonObject recorded = r.toJson();
        ++report.runs;
        const Seen s = seen.value(i);
        QDir().mkpath(m_store.workspace().runDir(r.id));
        for (const auto& f : s.files) mirror(r, f, report);
        if (s.gone) report.problems << r.id + QStringLiteral(": the run folder %1 was deleted on the cluster").arg(r.remoteDir);

        if (!r.jobId.isEmpty() && isActive(r.state) && r.state != RunState::Submitting && !states.contains(r.jobId)) {
            report.problems << r.id + QStringLiteral(": %1 did not answer; the state is unchanged").arg(m_scheduler.kind());
        } else if (!r.jobId.isEmpty() && isActive(r.state) && r.state != RunState::Submitting) {
            const JobStatus st = states.value(r.jobId);
            QString note = QStringLiteral("%1: %2%3")
                                     .arg(m_scheduler.kind(), st.schedulerState,
                                          st.reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(st.reason));
            if (st.known) {
                RunState next = st.state;
                // A job that ran and is pending again was requeued (preempted, or it checkpointed
                // before its time limit); it stays "requeued" until it runs again.
                if (next == RunState::Queued && (r.state == RunState::Running || r.state == RunState::Requeued))
                    next = RunState::Requeued;
                // Only an ending consults the manifest: no file read per run per poll while runs go on.
                const QJsonObject m = isFinal(next) ? readRunManifest(m_store.workspace().runDir(r.id)) : QJsonObject();
                const QString status = m.value(QStringLiteral("status")).toString();
                // The trainer's manifest is the truth about training: a job script that exits 0
                // after a failed launch is not a finished run.
                if (next == RunState::Completed && !m.isEmpty() && status != QLatin1String("finished")) {
                    next = RunState::Failed;
                    note = QStringLiteral("%1 says %2, but the trainer's manifest says '%3'")
                               .arg(m_scheduler.kind(), st.schedulerState, status.isEmpty() ? QStringLiteral("?") : status);
                }
                // A short job can start and end between two polls: its manifest says when it ran.
                if (isFinal(next) && (r.state == RunState::Queued || r.state == RunState::Requeued) && !m.isEmpty()) {
                    const QDateTime started = QDateTime::fromString(m.value(QStringLiteral("start_utc")).toString(), Qt::ISODateWithMs);
                    if (started.isValid()) {
                        r.transition(RunState::Running, QStringLiteral("trainer started (between two polls; time from its manifest)"));
                        r.history.last().when = started.toUTC();
                    }
                }
                if (next == RunState::Failed && next != r.state) {
                    const QString detail = failureDetail(m_store.workspace().runDir(r.id), r.jobId);
                    if (!detail.isEmpty()) note += QStringLiteral(": ") + detail;
                }
                if (next != r.state) r.transition(next, note);
            } else {
                // The scheduler forgot the job: the run's own manifest says how it ended.
                const QJsonObject m = readRunManifest(m_store.workspace().runDir(r.id));
                const QString status = m.value(QStringLiteral("status")).toString();
                if (status == QLatin1String("finished"))
                    r.transition(RunState::Completed, QStringLiteral("manifest: finished"));
                else if (status == QLatin1String("failed"))
                    r.transition(RunState::Failed, QStringLiteral("manifest: failed: ") + m.value(QStringLiteral("error")).toString());
                else if (status == QLatin1String("preempted"))
                    r.transition(RunState::Cancelled, QStringLiteral("stopped after a checkpoint; requeue resumes it"));
                else if (s.gone)
                    r.transition(RunState::Lost, QStringLiteral("the run folder was deleted on the cluster and %1 no longer knows job %2")
                                                     .arg(m_scheduler.kind(), r.jobId));
                else
                    r.transition(RunState::Lost, QStringLiteral("%1 no longer knows job %2 and the run left no final status")
                                                     .arg(m_scheduler.kind(), r.jobId));
            }
        }
        if (r.state != was) report.changed << r.id;
        if (r.toJson() != recorded) {
            if (auto ok = m_store.save(r); !ok) report.problems << ok.error().text();
        }
    }
    report.changed.removeDuplicates();
    const TransportStats after = m_transport.stats();
    report.roundTrips = after.roundTrips - before.roundTrips;
    report.bytesRead += quint64(out->out.size());
    return report;
}

}  // namespace scaledesk
