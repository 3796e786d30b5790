#pragma once

#include "analysis/scalingreport.h"

#include <QList>
#include <QPair>
#include <QString>

class QChart;

namespace scaledesk::gui {

/// The scaling report's plots (itwinai-scaling §7.5), one QChart each, colours by strategy:
/// epoch_time (log10 y, error bars over repetitions), speedup (log2 y, dashed ideal),
/// efficiency (from 0 to at least 110 %, a 100 % line), throughput (log10 y, dashed ideal per
/// strategy), time_breakdown (stacked bars with percent labels) and time_to_target (bars; "not
/// reached" marked). Ranks are on a log2 x axis labelled 1, 2, 4…; every axis carries the ticks of
/// analysis/axisticks, over a range that holds every line drawn (ideal lines and error bars
/// included). Groups without data are left out of the lines and named in the chart's subtitle; a
/// chart without any says "No data yet". The caller owns the charts.
QList<QPair<QString, QChart*>> buildScalingCharts(const ScalingReport& report);

}  // namespace scaledesk::gui
