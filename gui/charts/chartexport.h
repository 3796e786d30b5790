#pragma once

#include "core/status.h"

#include <QList>
#include <QSize>
#include <QString>
#include <QStringList>

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

/// Writes several charts as one page (PNG at `dpi`, or one SVG, or a one-page PDF), laid out in a
/// grid of `columns` columns of `cell` logical pixels each, with `notes` (warnings, one per line)
/// under the grid; the page's title is `title`. The charts are the caller's and are left as they
/// were given (not in any scene).
Status exportChartPage(const QList<QChart*>& charts, const QString& title, const QStringList& notes, const QString& path, int dpi = 150,
                       int columns = 2, QSize cell = QSize(600, 420));

/// Where an export dialog opens: the folder of the last export (any view), else the default one
/// (the workspace's exports/ folder, set by the window with setDefaultExportFolder()), else the
/// home folder; with `fileName`, that file in it.
QString exportStartPath(const QString& fileName = QString());
/// Remembers the folder of `path` (a file, or a folder when `isFolder`) for the next export dialog.
void rememberExportPath(const QString& path, bool isFolder = false);
/// The folder exports start in before any was made (created when first used).
void setDefaultExportFolder(const QString& folder);

}  // namespace scaledesk::gui
