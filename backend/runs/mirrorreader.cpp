#include "runs/mirrorreader.h"

#include <QFile>

#include <algorithm>

namespace scaledesk {

MirrorReader::MirrorReader(QString mirrorDir) : m_dir(std::move(mirrorDir)), m_parser(std::make_unique<MetricsParser>(m_metrics)) {}

MirrorReader::News MirrorReader::read(const QStringList& logs, const ProgressFn& progress, const std::function<bool()>& stop)
{
    News news;
    QFile metrics(m_dir + QStringLiteral("/metrics.jsonl"));
    if (metrics.open(QIODevice::ReadOnly)) {
        const qint64 size = metrics.size();
        if (size < m_metricsOffset) m_metricsOffset = 0;  // restarted: the series keep the newer values
        const qint64 before = m_metrics.pointsStored;
        const qint64 start = m_metricsOffset;
        constexpr qint64 piece = 16 << 20;
        QByteArray bytes;
        while (size > m_metricsOffset && metrics.seek(m_metricsOffset)) {
            if (stop && stop()) break;
            bytes.resize(qsizetype(std::min(piece, size - m_metricsOffset)));
            const qint64 got = metrics.read(bytes.data(), bytes.size());
            if (got <= 0) break;
            const auto used = qint64(m_parser->feed(bytes.constData(), std::size_t(got)));
            m_metricsOffset += used;
            if (progress) progress({QStringLiteral("reading metrics.jsonl"), m_metricsOffset - start, size - start, true});
            // Nothing used: a partial last line waits for its newline (a piece is longer than the
            // longest line the parser gathers, so a full piece is always used).
            if (used == 0) break;
        }
        news.newPoints = int(m_metrics.pointsStored - before);
    }
    for (const QString& name : logs) {
        QFile f(m_dir + QLatin1Char('/') + name);
        if (!f.open(QIODevice::ReadOnly)) continue;
        qint64& offset = m_logOffsets[name];
        if (f.size() < offset) offset = 0;
        if (f.size() == offset || !f.seek(offset)) continue;
        const QByteArray bytes = f.readAll();
        const qsizetype end = bytes.lastIndexOf('\n');
        if (end < 0) continue;  // a partial line waits for its newline
        for (const QByteArray& line : bytes.left(end).split('\n')) news.logLines.append({name, line});
        offset += end + 1;
    }
    return news;
}

}  // namespace scaledesk
