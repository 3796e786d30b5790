#pragma once

#include "core/status.h"

#include <QSize>
#include <QString>

#include <functional>

class QChart;

namespace scaledesk::gui {

/// Writes a chart as PNG (at `size` pixels and `dpi`), SVG or PDF, chosen by the file's suffix;
/// titles, axis titles, units and legend are in the file. The chart is laid out at `size` × 96 / dpi
/// logical pixels and scaled to `size`, as a plotting library scales a figure: text at 200 DPI is
/// twice as tall as at 96 DPI, for the same pixel size. `prepare` runs once the chart has its export
/// size (a chart that decimates re-queries there). An unwritable path is an error that names it.
Status exportChart(QChart* chart, const QString& path, QSize size = QSize(1200, 800), int dpi = 150,
                   const std::function<void()>& prepare = {});

}  // namespace scaledesk::gui
