#pragma once

#include "cli.h"

namespace scaledesk::gui {

/// The command line's hooks that need Qt Charts: the scaling plots as PNG, SVG and PDF.
CliHooks chartHooks();

/// Writes the report's six plots into `dir` as `<plot>.<format>`.
Status renderReportCharts(const ScalingReport& report, const QString& dir, const QStringList& formats, QStringList* written);

}  // namespace scaledesk::gui
