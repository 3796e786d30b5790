#pragma once

#include "analysis/planner.h"
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
/// chart without any says "No data yet". With a `prediction` (scaledesk plan's), epoch_time and
/// efficiency also draw each strategy's predicted line, dashed, over its 90 % range, so the measured
/// points show where the model was right. The caller owns the charts.
QList<QPair<QString, QChart*>> buildScalingCharts(const ScalingReport& report, const Plan* prediction = nullptr);

/// The planner's plots (docs/planner.md), against ranks on a log2 axis: plan_epoch_time (log10 y),
/// plan_efficiency (%, a dotted 100 % line) and plan_node_hours (log10 y). Each strategy's
/// prediction is a dashed line over its 90 % range; the sweep's measured points are dots.
QList<QPair<QString, QChart*>> buildPlanCharts(const Plan& plan);

}  // namespace scaledesk::gui
