#include "runs/mirrorreader.h"

#include <QFile>

namespace scaledesk {

MirrorReader::MirrorReader(QString mirrorDir) : m_dir(std::move(mirrorDir)), m_parser(std::make_unique<MetricsParser>(m_metrics)) {}

MirrorReader::News MirrorReader::read(const QStringList& logs)
{
    News news;
    QFile metrics(m_dir + QStringLiteral("/metrics.jsonl"));
    if (metrics.open(QIODevice::ReadOnly)) {
        if (metrics.size() < m_metricsOffset) m_metricsOffset = 0;  // restarted: the series keep the newer values
        if (metrics.size() > m_metricsOffset && metrics.seek(m_metricsOffset)) {
            const QByteArray bytes = metrics.readAll();
            const qint64 before = m_metrics.pointsStored;
            m_metricsOffset += qint64(m_parser->feed(bytes.constData(), std::size_t(bytes.size())));
            news.newPoints = int(m_metrics.pointsStored - before);
        }
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
