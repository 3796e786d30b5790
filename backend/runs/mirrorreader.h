#pragma once

#include "analysis/metrics.h"
#include "core/progress.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>

namespace scaledesk {

/// Reads what the poller added to a run's local mirror since the last call: new complete lines of
/// metrics.jsonl go into RunMetrics (a partial last line waits), new complete lines of the logs are
/// handed out. Offsets live here; a mirror file that restarted (the poller moved the old one to
/// .prev) is read again from its start.
class MirrorReader {
public:
    explicit MirrorReader(QString mirrorDir);

    struct News {
        int newPoints = 0;
        QList<QPair<QString, QByteArray>> logLines;  ///< (file, line) in file order
    };
    /// `logs`: the log files to follow (e.g. "slurm-42.out", "out.log", "rank-1.log").
    /// metrics.jsonl is read in pieces of at most 16 MiB: `progress` hears the bytes read of the
    /// bytes there, and `stop` is asked between pieces (a first read of a large run can be
    /// cancelled; what was read stays, and the next read goes on from there).
    News read(const QStringList& logs, const ProgressFn& progress = {}, const std::function<bool()>& stop = {});
    const RunMetrics& metrics() const { return m_metrics; }
    RunMetrics& metrics() { return m_metrics; }

private:
    QString m_dir;
    RunMetrics m_metrics;
    std::unique_ptr<MetricsParser> m_parser;
    qint64 m_metricsOffset = 0;
    QMap<QString, qint64> m_logOffsets;
};

}  // namespace scaledesk
