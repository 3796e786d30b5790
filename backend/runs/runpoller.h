#pragma once

#include "config/metricsources.h"
#include "runs/runstore.h"
#include "scheduler/scheduler.h"

#include <QElapsedTimer>

namespace scaledesk {

/// What one poll did, for the status line and the poll benchmark.
struct PollReport {
    int runs = 0;            ///< runs polled
    QStringList changed;     ///< runs whose state changed
    quint64 roundTrips = 0;  ///< transport round trips this poll used
    quint64 bytesRead = 0;   ///< bytes that came back: the poll command's output plus SFTP reads
    quint64 bytesNew = 0;    ///< bytes the followed files grew by
    int commands = 0;        ///< scripts the poll ran on the far side (1, or 2 when files grew)
    quint64 bytesSent = 0;   ///< bytes of the poll's commands
    qint64 farSideMs = 0;    ///< wall time spent waiting for the poll's scripts to answer (the rest is this side's)
    QStringList problems;    ///< per-run messages (a deleted run folder, an unreadable file)
};

/// Follows the active runs of one profile. One poll = one script run by the far side's shell
/// (sent on its standard input: no argv limit) that prints the scheduler's view of every job and
/// the size and mtime of every followed file; when files grew, a second one brings the new bytes (up to 1 MiB per file; reads at the
/// mirror's offset beyond that, bounded per run in bytes and per poll in time: a run that printed
/// a lot catches up over several polls while the others keep their pace). Only file names the app chose are followed, only its own
/// offsets reach the shell, and nothing a run folder holds is ever evaluated. Files are mirrored into the workspace run folder: append-only files (metrics.jsonl,
/// epochs.csv, slurm-*.out, job.out, rank-*.log) by their new bytes from the mirror's own size,
/// so a restart resumes exactly; a file that was restarted (it shrank, or its 16 bytes before the
/// mirror's end changed: a requeued job's log that grew past its old size) is kept as <name>.prev
/// (.prev-2, … for later attempts) and mirrored again from 0; manifest.json and exit_code are copied whole when
/// they change. Runs left in `submitting` by a killed app are reconciled first.
class RunPoller {
public:
    RunPoller(RunStore& store, Transport& transport, Scheduler& scheduler);
    Expected<PollReport> poll(const QStringList& runIds);

    /// One followed file in a poll's answer.
    struct FileSeen {
        QString name;
        qint64 size = 0;
        qint64 mtime = 0;
        bool inlined = false;  ///< `data` holds the bytes from the mirror's size (whole file: all of it)
        qint64 overlap = 0;    ///< inlined: `data` starts with this many bytes the mirror already has
        QByteArray data;
    };
    /// What a poll's answer says about one run folder.
    struct Seen {
        bool gone = false;
        int oddNames = 0;  ///< entries with unusual names, ignored
        QList<FileSeen> files;
    };
    /// A file a poll asks about: which run (its index in the poll), its name, its path on the far side.
    struct AskedFile {
        int run = 0;
        QString name;
        QString path;
    };
    /// Parses the sizes half of a poll's answer: "<size> <mtime> <path>" lines for the paths it
    /// asked about (anything else is dropped), "@gone <run>", and "@odd <run folder>" once per entry
    /// with an unusual name. Pure and bounded (a fuzz target).
    static QHash<int, Seen> parseSizes(const QByteArray& output, const QList<AskedFile>& asked);
    /// Parses the data half: "@data <key> <n>", n bytes, "\n@end <nonce> <key>" per read; keeps a
    /// read only when it has exactly the expected length. Pure and bounded (a fuzz target).
    static QHash<int, QByteArray> parseData(const QByteArray& output, const QByteArray& nonce, const QHash<int, qint64>& expected);

private:
    QStringList followedFiles(const RunRecord& r) const;
    /// A command run's metric sources (its run.yaml's `metrics`), read once per run; empty for
    /// other runs and for command runs whose code writes its own metrics.
    const MetricSources& sourcesOf(const RunRecord& r) const;
    /// "@tb <run> <size> <mtime> <path>" lines of a poll's answer: the event files found under the
    /// TensorBoard folders of the runs in `folders` (run -> folder). A path whose parts are not
    /// plain names is dropped.
    static void parseEventFiles(const QByteArray& output, const QHash<int, QString>& folders, QHash<int, Seen>& seen);
    mutable QHash<QString, MetricSources> m_sources;
    void reconcileSubmitting(RunRecord& r, PollReport& report);
    /// The runs' records (a run that cannot be read is a problem of the report), runs left in
    /// `submitting` reconciled.
    QList<RunRecord> loadRuns(const QStringList& runIds, PollReport& report);
    /// The first round trip's answer: the scheduler's states, and what each run folder holds.
    struct FirstAnswer {
        QHash<QString, JobStatus> states;
        QHash<int, Seen> seen;  ///< by the run's index in the poll
        bool havePerl = false;  ///< the far side has Perl (the second round trip reads with it)
    };
    Expected<FirstAnswer> askSizes(const QList<RunRecord>& runs, PollReport& report);
    /// The second round trip, only when files grew: their new bytes inlined into `seen`.
    void readNewBytes(const QList<RunRecord>& runs, QHash<int, Seen>& seen, bool havePerl, PollReport& report);
    /// One run's mirror and record brought up to the poll's answer, under the run's lock.
    void applyToRun(const RunRecord& asked, const Seen& s, const QHash<QString, JobStatus>& states, PollReport& report);
    /// Brings one file's mirror up to what the poll saw, reading at most `budget` bytes over the
    /// transport (the budget shrinks by what was read). True when the mirror holds all of it.
    /// Every followed file of `s` is mirrored whole already (sizes, and whole files' mtimes).
    bool mirrorIsCurrent(const RunRecord& r, const Seen& s) const;
    bool mirror(RunRecord& r, const FileSeen& f, PollReport& report, qint64& budget);
    /// Moves the run's state on the scheduler's answer and the run's own files.
    /// The run's next state from the scheduler's answer (and its manifest). `mirrored`: this poll
    /// brought the mirror up to every file's size; a run is final only with its whole mirror.
    void advance(RunRecord& r, const Seen& seen, const QHash<QString, JobStatus>& states, PollReport& report, bool mirrored);
    /// Whether reads at an offset may go on in this poll: until it has run kReadTimeMs, and always
    /// for its first chunk (so a run that printed a lot still catches up, poll by poll).
    bool readTimeLeft() const;
    RunStore& m_store;
    Transport& m_transport;
    Scheduler& m_scheduler;
    QElapsedTimer m_pollClock;
    bool m_rangedReads = false;  ///< this poll has read a chunk at an offset
};

}  // namespace scaledesk
