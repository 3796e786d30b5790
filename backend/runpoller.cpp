#include "runpoller.h"

#include "jobscript.h"
#include "shellquote.h"

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

bool isWholeFile(const QString& name)
{
    return name == QLatin1String("manifest.json") || name == QLatin1String("exit_code");
}

QJsonObject readManifest(const QString& dir)
{
    QFile f(dir + QStringLiteral("/manifest.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
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

void RunPoller::mirror(RunRecord& r, const QString& name, qint64 size, qint64 mtime, PollReport& report)
{
    const QString local = m_store.workspace().runDir(r.id) + QLatin1Char('/') + name;
    const QString remote = r.remoteDir + QLatin1Char('/') + name;
    if (isWholeFile(name)) {
        if (r.mtimes.value(name, -1) == mtime && QFileInfo(local).size() == size) return;
        QByteArray data;
        while (data.size() < size) {
            auto chunk = m_transport.readAt(remote, data.size(), std::min<qint64>(kChunk, size - data.size()));
            if (!chunk) {
                report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
                return;
            }
            if (chunk->isEmpty()) break;
            data += *chunk;
        }
        report.bytesNew += quint64(data.size());
        QSaveFile f(local);
        if (f.open(QIODevice::WriteOnly)) {
            f.write(data);
            if (f.commit()) r.mtimes[name] = mtime;
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
    QFile f(local);
    if (!f.open(QIODevice::Append)) {
        report.problems << r.id + QStringLiteral(": cannot write the mirror %1: %2").arg(local, f.errorString());
        return;
    }
    while (offset < size) {
        auto chunk = m_transport.readAt(remote, offset, std::min<qint64>(kChunk, size - offset));
        if (!chunk) {
            report.problems << r.id + QStringLiteral(": ") + chunk.error().text();
            break;
        }
        if (chunk->isEmpty()) break;
        f.write(*chunk);
        offset += chunk->size();
        report.bytesNew += quint64(chunk->size());
    }
    f.close();
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

    // One round trip: the scheduler's view, then per run whether its folder exists and the size
    // and mtime of each followed file.
    QList<JobRef> jobs;
    QStringList cmd;
    for (const auto& r : runs)
        if (!r.jobId.isEmpty() && isActive(r.state)) jobs << JobRef{r.jobId, r.remoteDir, slurmJobName(r.id)};
    if (!jobs.isEmpty()) cmd << m_scheduler.queryCommand(jobs);
    for (int i = 0; i < runs.size(); ++i) {
        if (runs[i].remoteDir.isEmpty()) continue;
        cmd << QStringLiteral("echo '@run %1'; d=%2; if [ -d \"$d\" ]; then ( cd \"$d\" && stat -c '%s %Y %n' -- "
                              "metrics.jsonl epochs.csv manifest.json exit_code out.log job.out slurm-*.out rank-*.log 2>/dev/null ); "
                              "else echo '@gone'; fi")
                   .arg(i)
                   .arg(shellQuote(runs[i].remoteDir));
    }
    if (cmd.isEmpty()) return report;
    auto out = m_transport.exec(cmd.join(QStringLiteral("; ")), 60000);
    if (!out) return out.error();
    const QHash<QString, JobStatus> states = m_scheduler.parseQuery(out->out, jobs);

    struct Seen {
        bool gone = false;
        QList<std::tuple<QString, qint64, qint64>> files;
    };
    QHash<int, Seen> seen;
    int current = -1;
    for (const QByteArray& raw : out->out.split('\n')) {
        const QString line = QString::fromUtf8(raw);
        if (line.startsWith(QLatin1String("@run "))) {
            current = line.mid(5).toInt();
            seen[current];
            continue;
        }
        if (current < 0) continue;
        if (line == QLatin1String("@gone")) {
            seen[current].gone = true;
            continue;
        }
        const int a = line.indexOf(QLatin1Char(' '));
        const int b = a < 0 ? -1 : line.indexOf(QLatin1Char(' '), a + 1);
        if (b < 0) continue;
        bool ok1 = false, ok2 = false;
        const qint64 size = line.left(a).toLongLong(&ok1);
        const qint64 mtime = line.mid(a + 1, b - a - 1).toLongLong(&ok2);
        const QString name = line.mid(b + 1);
        if (ok1 && ok2 && !name.contains(QLatin1Char('/'))) seen[current].files << std::make_tuple(name, size, mtime);
    }

    for (int i = 0; i < runs.size(); ++i) {
        RunRecord& r = runs[i];
        const RunState was = r.state;
        const QJsonObject recorded = r.toJson();
        ++report.runs;
        const Seen s = seen.value(i);
        QDir().mkpath(m_store.workspace().runDir(r.id));
        for (const auto& [name, size, mtime] : s.files) mirror(r, name, size, mtime, report);
        if (s.gone) report.problems << r.id + QStringLiteral(": the run folder %1 was deleted on the cluster").arg(r.remoteDir);

        if (!r.jobId.isEmpty() && isActive(r.state) && r.state != RunState::Submitting) {
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
                const QJsonObject m = readManifest(m_store.workspace().runDir(r.id));
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
                if (next != r.state) r.transition(next, note);
            } else {
                // The scheduler forgot the job: the run's own manifest says how it ended.
                const QJsonObject m = readManifest(m_store.workspace().runDir(r.id));
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
    report.bytesRead = after.bytesRead - before.bytesRead;
    return report;
}

}  // namespace scaledesk
