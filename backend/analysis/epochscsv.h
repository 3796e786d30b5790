#pragma once

#include "core/expected.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace scaledesk {

/// One row of a run's epochs.csv (trainer docs: itwinai-scaling §7.3 columns plus losses). A
/// column the file lacks, or a cell that is not a number, is NaN.
struct EpochRow {
    int epoch = 0;
    double step, wallS, trainS, valS, samplesGlobal, steps, throughput, dataWaitS, computeS, allreduceWaitS, maxRankWallS, minRankWallS,
        trainLoss, valLoss, lr, tEnd;
    double gpuEnergyWh, gpuUtilPct;  ///< the epoch's GPU energy summed over ranks, and mean utilisation (NVML)
    double gnsBSimple;               ///< the gradient noise scale the trainer measured over the epoch (docs/trainer.md)
    EpochRow();
};

struct EpochTable {
    QList<EpochRow> rows;        ///< by epoch, one row per epoch (a repeated epoch keeps the newest)
    QStringList missingColumns;  ///< known columns the header lacks
    QStringList warnings;        ///< file:line: what was wrong and what was done about it
};

/// Parses epochs.csv. Needs the `epoch` and `wall_s` columns (else no rows and a warning);
/// columns may come in any order; unknown columns are ignored; a bad row is skipped with a warning.
EpochTable parseEpochsCsv(const QByteArray& bytes, const QString& fileName);
EpochTable loadEpochsCsv(const QString& path);

/// Writes rows as epochs.csv, with the trainer's columns in its order (empty cells for NaN).
QByteArray writeEpochsCsv(const QList<EpochRow>& rows);

/// The image formats among `formats` that an export (a report, a plan: `what`) writes: csv and md
/// are text, png, svg and pdf images. An error names an unknown format, or images without a
/// renderer (`canRender` false: a build without charts).
Expected<QStringList> exportImageFormats(const QStringList& formats, const QString& what, bool canRender);

/// RFC 4180 quoting of one CSV field.
QString csvField(const QString& value);
/// A number as CSV writes it: shortest round-trip form; empty for NaN.
QString csvNumber(double value);

}  // namespace scaledesk
