#pragma once

#include "core/status.h"

#include <QSize>
#include <QString>

class QChart;

namespace scaledesk::gui {

/// Writes a chart as PNG (at `size` pixels and `dpi`), SVG or PDF, chosen by the file's suffix;
/// titles, axis titles, units and legend are in the file. An unwritable path is an error that
/// names it.
Status exportChart(QChart* chart, const QString& path, QSize size = QSize(1200, 800), int dpi = 150);

}  // namespace scaledesk::gui
