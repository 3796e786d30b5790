#include "analysis/epochscsv.h"

#include <QFile>
#include <QHash>
#include <QLocale>

#include <algorithm>

#include <cmath>
#include <limits>

namespace scaledesk {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ColumnRef {
    const char* name;
    double EpochRow::*field;
    bool optional = false;  ///< not warned about when missing (telemetry, which older files and CPU runs lack)
};
const ColumnRef kColumns[] = {
    {"step", &EpochRow::step},
    {"wall_s", &EpochRow::wallS},
    {"train_s", &EpochRow::trainS},
    {"val_s", &EpochRow::valS},
    {"samples_processed_global", &EpochRow::samplesGlobal},
    {"steps", &EpochRow::steps},
    {"throughput_samples_s", &EpochRow::throughput},
    {"data_wait_s", &EpochRow::dataWaitS},
    {"compute_s", &EpochRow::computeS},
    {"allreduce_wait_s", &EpochRow::allreduceWaitS},
    {"max_rank_wall_s", &EpochRow::maxRankWallS},
    {"min_rank_wall_s", &EpochRow::minRankWallS},
    {"train_loss", &EpochRow::trainLoss},
    {"val_loss", &EpochRow::valLoss},
    {"lr", &EpochRow::lr},
    {"t_end", &EpochRow::tEnd},
    {"gpu_energy_wh", &EpochRow::gpuEnergyWh, true},
    {"gpu_util_pct", &EpochRow::gpuUtilPct, true},
    {"gns_b_simple", &EpochRow::gnsBSimple, true},
};

double number(const QByteArray& cell, bool* ok)
{
    const QByteArray c = cell.trimmed();
    if (c.isEmpty() || c == "nan" || c == "NaN" || c == "null") {
        *ok = true;
        return kNaN;
    }
    if (c == "inf" || c == "Infinity") {
        *ok = true;
        return std::numeric_limits<double>::infinity();
    }
    if (c == "-inf" || c == "-Infinity") {
        *ok = true;
        return -std::numeric_limits<double>::infinity();
    }
    return c.toDouble(ok);
}
}  // namespace

EpochRow::EpochRow()
    : step(kNaN), wallS(kNaN), trainS(kNaN), valS(kNaN), samplesGlobal(kNaN), steps(kNaN), throughput(kNaN), dataWaitS(kNaN),
      computeS(kNaN), allreduceWaitS(kNaN), maxRankWallS(kNaN), minRankWallS(kNaN), trainLoss(kNaN), valLoss(kNaN), lr(kNaN), tEnd(kNaN),
      gpuEnergyWh(kNaN), gpuUtilPct(kNaN), gnsBSimple(kNaN)
{}

EpochTable parseEpochsCsv(const QByteArray& bytes, const QString& fileName)
{
    EpochTable t;
    QList<QByteArray> lines = bytes.split('\n');
    if (!bytes.endsWith('\n') && !lines.isEmpty() && !lines.last().isEmpty()) {
        t.warnings << QStringLiteral("%1:%2: the last line has no newline yet (being written); left out").arg(fileName).arg(lines.size());
        lines.removeLast();
    }
    if (lines.isEmpty() || lines.first().trimmed().isEmpty()) {
        t.warnings << QStringLiteral("%1: empty (no epoch finished yet)").arg(fileName);
        return t;
    }
    QHash<QByteArray, int> at;
    const QList<QByteArray> header = lines.first().trimmed().split(',');
    for (int i = 0; i < header.size(); ++i) at.insert(header[i].trimmed(), i);
    if (!at.contains("epoch") || !at.contains("wall_s")) {
        t.warnings << QStringLiteral("%1:1: no 'epoch' or 'wall_s' column; the file is not used").arg(fileName);
        return t;
    }
    for (const auto& c : kColumns)
        if (!at.contains(c.name) && !c.optional) t.missingColumns << QString::fromLatin1(c.name);
    if (!t.missingColumns.isEmpty())
        t.warnings << QStringLiteral("%1:1: missing column(s) %2; what needs them is left empty")
                          .arg(fileName, t.missingColumns.join(QStringLiteral(", ")));
    QHash<int, int> rowOfEpoch;
    for (int ln = 1; ln < lines.size(); ++ln) {
        const QByteArray line = lines[ln].trimmed();
        if (line.isEmpty()) continue;
        const QList<QByteArray> cells = line.split(',');
        if (cells.size() != header.size()) {
            t.warnings << QStringLiteral("%1:%2: %3 cells for %4 columns; row skipped")
                              .arg(fileName)
                              .arg(ln + 1)
                              .arg(cells.size())
                              .arg(header.size());
            continue;
        }
        bool ok = false;
        EpochRow r;
        r.epoch = cells[at.value("epoch")].trimmed().toInt(&ok);
        if (!ok || r.epoch < 0) {
            t.warnings << QStringLiteral("%1:%2: epoch '%3' is not a number; row skipped")
                              .arg(fileName)
                              .arg(ln + 1)
                              .arg(QString::fromUtf8(cells[at.value("epoch")].left(40)));
            continue;
        }
        bool rowOk = true;
        for (const auto& c : kColumns) {
            auto it = at.constFind(c.name);
            if (it == at.constEnd()) continue;
            bool cellOk = false;
            r.*(c.field) = number(cells[it.value()], &cellOk);
            if (!cellOk) {
                t.warnings << QStringLiteral("%1:%2: column '%3' holds '%4', not a number; row skipped")
                                  .arg(fileName)
                                  .arg(ln + 1)
                                  .arg(QString::fromLatin1(c.name), QString::fromUtf8(cells[it.value()].left(40)));
                rowOk = false;
                break;
            }
        }
        if (!rowOk) continue;
        if (rowOfEpoch.contains(r.epoch)) {
            t.warnings << QStringLiteral("%1:%2: epoch %3 appears again (a resumed run); the newer row is used")
                              .arg(fileName)
                              .arg(ln + 1)
                              .arg(r.epoch);
            t.rows[rowOfEpoch.value(r.epoch)] = r;
        } else {
            rowOfEpoch.insert(r.epoch, int(t.rows.size()));
            t.rows << r;
        }
    }
    std::sort(t.rows.begin(), t.rows.end(), [](const EpochRow& a, const EpochRow& b) { return a.epoch < b.epoch; });
    return t;
}

EpochTable loadEpochsCsv(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        EpochTable t;
        t.warnings << QStringLiteral("%1: no epochs.csv (no epoch finished yet)").arg(path);
        return t;
    }
    return parseEpochsCsv(f.readAll(), path);
}

QString csvField(const QString& value)
{
    if (!value.contains(QLatin1Char(',')) && !value.contains(QLatin1Char('"')) && !value.contains(QLatin1Char('\n')) &&
        !value.contains(QLatin1Char('\r')))
        return value;
    QString v = value;
    v.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + v + QLatin1Char('"');
}

Expected<QStringList> exportImageFormats(const QStringList& formats, const QString& what, bool canRender)
{
    static const QStringList text{QStringLiteral("csv"), QStringLiteral("md")};
    static const QStringList images{QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")};
    QStringList out;
    for (const QString& f : formats) {
        if (images.contains(f))
            out << f;
        else if (!text.contains(f))
            return Error{ErrorCode::Usage, QStringLiteral("unknown %1 format '%2' (csv, md, png, svg, pdf)").arg(what, f), QString()};
    }
    if (!out.isEmpty() && !canRender)
        return Error{ErrorCode::Usage, QStringLiteral("this scaledesk was built without charts (SCALEDESK_BUILD_GUI=OFF): use csv or md"),
                     QString()};
    return out;
}

QString csvNumber(double value)
{
    if (std::isnan(value)) return QString();
    if (std::isinf(value)) return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

QByteArray writeEpochsCsv(const QList<EpochRow>& rows)
{
    QStringList header{QStringLiteral("epoch")};
    for (const ColumnRef& c : kColumns) header << QLatin1String(c.name);
    QString out = header.join(QLatin1Char(',')) + QLatin1Char('\n');
    for (const EpochRow& row : rows) {
        QStringList cells{QString::number(row.epoch)};
        for (const ColumnRef& c : kColumns) cells << csvNumber(row.*(c.field));
        out += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return out.toUtf8();
}

}  // namespace scaledesk
