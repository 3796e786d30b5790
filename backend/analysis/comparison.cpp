#include "analysis/comparison.h"

#include "analysis/epochscsv.h"
#include "analysis/minmaxindex.h"
#include "config/configresolve.h"

#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

TagSummary::TagSummary() : finalValue(kNaN), finalStep(kNaN), bestValue(kNaN), bestStep(kNaN) {}

double xOf(XAxis axis, const Series& s, std::size_t i, double runStart)
{
    switch (axis) {
    case XAxis::Step: return s.steps()[i];
    case XAxis::RelativeTime: return s.times()[i] - runStart;
    case XAxis::WallTime: return s.times()[i];
    }
    return kNaN;
}

Comparison compareRuns(const std::vector<CompareRun>& runs, const QStringList& tags)
{
    Comparison c;
    c.tags = tags;
    for (const CompareRun& run : runs) {
        c.runIds << run.record.id;
        QMap<QString, TagSummary> perTag;
        for (const QString& tag : tags) {
            TagSummary t;
            const Series* s = run.metrics.series(tag);
            if (!s || s->empty()) {
                c.warnings << QStringLiteral("%1: no '%2' values yet").arg(run.record.id, tag);
            } else {
                t.finalValue = s->values().back();
                t.finalStep = s->steps().back();
                for (std::size_t i = 0; i < s->size(); ++i)
                    if (std::isfinite(s->values()[i]) && !(s->values()[i] >= t.bestValue)) {
                        t.bestValue = s->values()[i];
                        t.bestStep = s->steps()[i];
                    }
                if (!std::isfinite(t.finalValue))
                    c.warnings << QStringLiteral("%1: the last '%2' value is %3")
                                      .arg(run.record.id, tag,
                                           csvNumber(t.finalValue).isEmpty() ? QStringLiteral("NaN") : csvNumber(t.finalValue));
            }
            perTag.insert(tag, t);
        }
        c.summaries << perTag;
        QMap<QString, QString> cfg = run.config;
        cfg.insert(QStringLiteral("(run) strategy"), run.record.strategy);
        cfg.insert(QStringLiteral("(run) world size"), QString::number(run.record.nodes * run.record.ranksPerNode));
        cfg.insert(QStringLiteral("(run) local batch"),
                   run.record.localBatch > 0 ? QString::number(run.record.localBatch) : QStringLiteral("config"));
        cfg.insert(QStringLiteral("(run) config name"), run.record.configName);
        if (run.config.isEmpty())
            c.warnings << QStringLiteral("%1: its config is not known; only its run settings are compared").arg(run.record.id);
        c.configs << cfg;
    }
    c.differingKeys = differingKeys(c.configs);
    return c;
}

QString Comparison::csv() const
{
    QStringList header{QStringLiteral("run_id")};
    for (const QString& t : tags)
        header << csvField(t + QStringLiteral(" final")) << csvField(t + QStringLiteral(" final step"))
               << csvField(t + QStringLiteral(" best")) << csvField(t + QStringLiteral(" best step"));
    for (const QString& k : differingKeys) header << csvField(k);
    QStringList lines{header.join(QLatin1Char(','))};
    for (int i = 0; i < runIds.size(); ++i) {
        QStringList row{csvField(runIds[i])};
        for (const QString& t : tags) {
            const TagSummary s = summaries[i].value(t);
            row << csvNumber(s.finalValue) << csvNumber(s.finalStep) << csvNumber(s.bestValue) << csvNumber(s.bestStep);
        }
        for (const QString& k : differingKeys) row << csvField(configs[i].value(k));
        lines << row.join(QLatin1Char(','));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QString seriesCsv(const QList<const CompareRun*>& runs, const QString& tag, XAxis axis, double smoothing, double x0, double x1)
{
    QStringList lines{
        QStringLiteral("run_id,x,%1").arg(csvField(tag + (smoothing > 0 ? QStringLiteral(" (smoothed %1)").arg(smoothing) : QString())))};
    for (const CompareRun* run : runs)
        if (const Series* s = run->metrics.series(tag))
            appendSeriesCsvRows(lines, run->record.id, *s, axis, run->metrics.startTime(), smoothing, x0, x1);
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void appendSeriesCsvRows(QStringList& lines, const QString& name, const Series& s, XAxis axis, double runStart, double smoothing, double x0,
                         double x1)
{
    const std::vector<double> smoothed = smoothing > 0 ? smoothTensorBoard(s.values(), smoothing) : std::vector<double>();
    const std::vector<double>& values = smoothing > 0 ? smoothed : s.values();
    const QString field = csvField(name);
    for (std::size_t i = 0; i < s.size(); ++i) {
        const double x = xOf(axis, s, i, runStart);
        if (x < x0 || x > x1) continue;
        lines << field + QLatin1Char(',') + csvNumber(x) + QLatin1Char(',') + csvNumber(values[i]);
    }
}

QStringList distinguishingLabels(const QStringList& ids)
{
    if (ids.size() < 2) return ids;
    QList<QStringList> parts;
    for (const QString& id : ids) parts << id.split(QLatin1Char('-'));
    const qsizetype n = parts.first().size();
    const bool aligned = std::all_of(parts.begin(), parts.end(), [n](const QStringList& p) { return p.size() == n; });
    QStringList labels;
    if (aligned) {
        QList<bool> differs(n, false);
        for (qsizetype i = 0; i < n; ++i)
            for (const QStringList& p : parts) differs[i] = differs[i] || p[i] != parts.first()[i];
        for (const QStringList& p : parts) {
            QStringList kept;
            for (qsizetype i = 0; i < n; ++i)
                if (differs[i]) kept << p[i];
            labels << kept.join(QLatin1Char(' '));
        }
    } else {
        // The prefix and suffix every id shares, whole parts only.
        qsizetype head = 0, tail = 0;
        const qsizetype shortest = std::min_element(parts.begin(), parts.end(), [](const QStringList& a, const QStringList& b) {
                                       return a.size() < b.size();
                                   })->size();
        auto sameAt = [&](auto at) {
            return std::all_of(parts.begin(), parts.end(), [&](const QStringList& p) { return at(p) == at(parts.first()); });
        };
        while (head < shortest - 1 && sameAt([head](const QStringList& p) { return p[head]; })) ++head;
        while (tail < shortest - 1 - head && sameAt([tail](const QStringList& p) { return p[p.size() - 1 - tail]; })) ++tail;
        for (const QStringList& p : parts) labels << p.mid(head, p.size() - head - tail).join(QLatin1Char('-'));
    }
    const bool usable = std::none_of(labels.begin(), labels.end(), [](const QString& l) { return l.isEmpty(); }) &&
        QSet<QString>(labels.begin(), labels.end()).size() == labels.size();
    return usable ? labels : ids;
}

}  // namespace scaledesk
