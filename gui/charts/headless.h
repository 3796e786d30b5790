#pragma once

#include "analysis/comparison.h"
#include "analysis/planner.h"
#include "cli/cli.h"

namespace scaledesk::gui {

/// The command line's hooks that need Qt Charts: the scaling plots as PNG, SVG and PDF.
CliHooks chartHooks();

/// One tag of the runs as a chart image (the compare view's chart, off screen).
Status renderSeriesChart(const std::vector<CompareRun>& runs, const QString& tag, XAxis axis, double smoothing, const QString& path);

/// Writes the report's six plots into `dir` as `<plot>.<format>`, and all six on one page as
/// `scaling_report.<format>`.
/// With a `prediction`, epoch time and efficiency carry its overlay (buildScalingCharts).
Status renderReportCharts(const ScalingReport& report, const QString& dir, const QStringList& formats, QStringList* written,
                          const Plan* prediction = nullptr);

/// Writes the plan's plots (buildPlanCharts) into `dir` as `<plot>.<format>`.
Status renderPlanCharts(const Plan& plan, const QString& dir, const QStringList& formats, QStringList* written);

/// The report's six plots and its warnings as one page (PNG, SVG or one-page PDF, by the suffix):
/// the Scaling view's export.
Status renderReportPage(const ScalingReport& report, const QString& path, int dpi = 150, const Plan* prediction = nullptr);

}  // namespace scaledesk::gui
