#pragma once

#include <QColor>
#include <QString>

class QChart;
class QResizeEvent;

#include <QChartView>

namespace scaledesk::gui {

/// The colour of a strategy, the same in every view and export (ddp blue, fused orange, zero1
/// green, anything else from the same palette by name).
QColor strategyColor(const QString& strategy);
/// The colour of a run, stable across views and sessions (derived from its id).
QColor runColor(const QString& runId);
/// The colour of the `index`-th of several runs shown together (a comparison): Okabe–Ito in an
/// order whose neighbours differ in hue and lightness (blue, vermillion, bluish green, reddish
/// purple, orange, sky blue, grey), so that no two of the first seven look alike.
QColor compareColor(int index);
/// The colour of reference lines (ideal scaling, 100 %, validation loss): black on a light chart,
/// near-white on a dark one.
QColor referenceColor();
/// Fonts, margins and legend placement shared by every chart, light or dark.
void styleChart(QChart* chart, const QString& title);
/// A chart's title fitted to `width` pixels: the whole title (as styleChart set it) when it fits,
/// else cut at the end with "…". Returns the whole title when it was cut (for the view's tooltip),
/// else an empty string.
QString fitChartTitle(QChart* chart, qreal width);
/// The whole title of a chart styled by styleChart (its title may show cut).
QString fullChartTitle(const QChart* chart);
/// For charts of lines: legend entries drawn as their lines (dashed where the line is dashed).
void styleLineLegend(QChart* chart);

/// A chart view whose title never runs off it: elided to the view's width, whole in the tooltip.
class FittedChartView : public QChartView {
public:
    using QChartView::QChartView;

protected:
    void resizeEvent(QResizeEvent* e) override;
};

}  // namespace scaledesk::gui
