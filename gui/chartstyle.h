#pragma once

#include <QColor>
#include <QString>

class QChart;

namespace scaledesk::gui {

/// The colour of a strategy, the same in every view and export (ddp blue, fused orange, zero1
/// green, anything else from the same palette by name).
QColor strategyColor(const QString& strategy);
/// The colour of a run, stable across views and sessions (derived from its id).
QColor runColor(const QString& runId);
/// Fonts, margins and legend placement shared by every chart, light or dark.
void styleChart(QChart* chart, const QString& title);
/// For charts of lines: legend entries drawn as their lines (dashed where the line is dashed).
void styleLineLegend(QChart* chart);

}  // namespace scaledesk::gui
