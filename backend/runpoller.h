#pragma once

#include "runstore.h"
#include "scheduler.h"

namespace scaledesk {

/// What one poll did, for the status line and the poll benchmark.
struct PollReport {
    int runs = 0;               ///< runs polled
    QStringList changed;        ///< runs whose state changed
    quint64 roundTrips = 0;     ///< transport round trips this poll used
    quint64 bytesRead = 0;      ///< payload bytes read from the far side
    quint64 bytesNew = 0;       ///< bytes the followed files grew by
    QStringList problems;       ///< per-run messages (a deleted run folder, an unreadable file)
};

/// Follows the active runs of one profile. One poll = one exec that prints the scheduler's
/// view of every job and the size and mtime of every followed file, then one read per file
/// that grew. Files are mirrored into the workspace run folder: append-only files (metrics.jsonl,
/// epochs.csv, slurm-*.out, job.out, rank-*.log) by their new bytes from the mirror's own size,
/// so a restart resumes exactly; a file that shrank (a requeued job restarting its log) is kept
/// as <name>.prev and mirrored again from 0; manifest.json and exit_code are copied whole when
/// they change. Runs left in `submitting` by a killed app are reconciled first.
class RunPoller {
public:
    RunPoller(RunStore& store, Transport& transport, Scheduler& scheduler);
    Expected<PollReport> poll(const QStringList& runIds);

private:
    void reconcileSubmitting(RunRecord& r, PollReport& report);
    void mirror(RunRecord& r, const QString& name, qint64 size, qint64 mtime, PollReport& report);
    RunStore& m_store;
    Transport& m_transport;
    Scheduler& m_scheduler;
};

}  // namespace scaledesk
