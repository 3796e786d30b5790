#pragma once

#include "analysis/scalingreport.h"

#include <QList>
#include <QPair>
#include <QString>

class QChart;

namespace scaledesk::gui {

/// The scaling report's plots (itwinai-scaling §7.5), one QChart each, colours by strategy:
/// epoch_time (log-log, error bars over repetitions), speedup (log2 axes, dashed ideal),
/// efficiency (0–110 %, a 100 % line), throughput (log-log, dashed ideal per strategy),
/// time_breakdown (stacked bars with percent labels) and time_to_target (bars; "not reached"
/// marked). Groups without data are left out of the lines and named in the chart's subtitle.
/// The caller owns the charts.
QList<QPair<QString, QChart*>> buildScalingCharts(const ScalingReport& report);

}  // namespace scaledesk::gui
