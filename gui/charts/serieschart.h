#pragma once

#include "analysis/metrics.h"
#include "analysis/minmaxindex.h"
#include "core/status.h"

#include <QChartView>
#include <QTimer>

#include <memory>
#include <vector>

class QCategoryAxis;
class QGraphicsRectItem;
class QGraphicsTextItem;
class QLineSeries;

namespace scaledesk::gui {

/// A chart of series that may hold millions of points: it hands Qt Charts at most two points per
/// pixel column (the column's min and max from the backend's decimation), re-queried whenever the
/// visible range or the width changes, with redraws coalesced (~40 ms). Zoom with a rubber band
/// or the wheel, pan with the arrow keys, double-click to see everything; the crosshair snaps to the
/// nearest point of each visible curve and shows their values; clicking a legend entry hides or
/// shows its curve. Axes carry 1-2-5 ticks (decades on a log y; s, min or h for relative time;
/// clock time for wall time) from the backend's analysis/axisticks; a chart without data says so.
class SeriesChart : public QChartView {
    Q_OBJECT
public:
    struct Curve {
        QString label;
        QColor color;
        const Series* series = nullptr;  ///< owned by the caller; must outlive the chart or be removed
        double runStart = 0;             ///< x origin of XAxis::RelativeTime
        QString id = QString();          ///< what the CSV export names the curve by (a run id); empty: the label
    };
    explicit SeriesChart(const QString& title, QWidget* parent = nullptr);

    void setCurves(const QList<Curve>& curves);
    void setXAxis(XAxis axis);
    void setSmoothing(double weight);  ///< TensorBoard weight, 0 = raw
    void setYTitle(const QString& title);
    QString yTitle() const { return m_yTitle; }
    /// What the chart says while it has no points ("No data yet" until told otherwise).
    void setEmptyText(const QString& text);
    QString emptyText() const;
    /// A logarithmic y axis (values ≤ 0 are left out while it is on).
    void setLogY(bool on);
    bool logY() const { return m_log; }
    /// The series grew: re-query soon (coalesced).
    void dataChanged();
    /// Shows everything again.
    void resetZoom();
    /// Re-queries now instead of after the coalescing delay (benchmarks, exports).
    void refreshNow() { refresh(); }
    /// Milliseconds the last re-query and the last paint took (the benchmarks' frame time).
    double lastRefreshMs() const { return m_refreshMs; }
    double lastPaintMs() const { return m_paintMs; }
    /// Points handed to Qt Charts in the last refresh, over all curves.
    int pointsShown() const { return m_pointsShown; }
    /// The plot's width in pixels (the decimation's column count).
    int plotWidth() const;
    /// The points drawn for curve `i` (value coordinates), after the last re-query.
    QList<QPointF> curvePoints(int i) const;
    /// The curves' data in the visible x range (every point, not the decimated ones drawn; raw or
    /// smoothed as shown), as CSV rows "curve,x,value" at full precision.
    QString csv() const;
    /// PNG (size, DPI), SVG, PDF or CSV (the data in the visible range), by the file's suffix.
    Status exportTo(const QString& path, QSize size = QSize(1600, 1000), int dpi = 200);
    /// The tick labels on the axes now (tests, and what the crosshair's reader sees).
    QStringList xTickLabels() const;
    QStringList yTickLabels() const;
    /// The crosshair's text (plain), empty while it is hidden.
    QString crosshairText() const;
    /// Moves the crosshair to the x (in axis units) of the plot, as the mouse would.
    void showCrosshairAt(double x);
    void hideCrosshair();

protected:
    void resizeEvent(QResizeEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    void contextMenuEvent(QContextMenuEvent* e) override;
    void paintEvent(QPaintEvent* e) override;
    void leaveEvent(QEvent* e) override;

private:
    friend class CurvesItem;
    struct Track {
        Curve curve;
        QLineSeries* line = nullptr;   // empty: the legend entry and the axes' owner
        QList<QPointF> points;         // what CurvesItem draws
        std::vector<double> xs;        // relative time (the other axes use the series' vectors)
        std::vector<double> smoothed;  // when smoothing > 0
        std::unique_ptr<MinMaxIndex> smoothedIndex;
        std::size_t builtFor = 0;          // series size the caches were built for
        std::size_t builtTruncations = 0;  // and its truncation count then
    };
    void refresh();
    void rebuildCaches(Track& t);
    const std::vector<double>& xsOf(const Track& t) const;
    void fullRange(double* lo, double* hi, double* ylo, double* yhi);
    void retick();  // labels for the axes' present ranges and the plot's size
    QCategoryAxis* m_x;
    QCategoryAxis* m_y;  // in log10 units while log y is on
    bool m_log = false;
    bool m_hasData = false;
    QString m_yTitle;
    std::vector<std::unique_ptr<Track>> m_tracks;
    XAxis m_axis = XAxis::Step;
    double m_smoothing = 0;
    bool m_zoomed = false;
    bool m_refreshing = false;
    QTimer m_coalesce;
    int m_decimatedWidth = 0;  ///< plot width (px) the shown columns were cut for
    int m_pointsShown = 0;
    double m_refreshMs = 0, m_paintMs = 0;
    QGraphicsRectItem* m_crosshairBox = nullptr;
    QGraphicsTextItem* m_crosshair = nullptr;
    QList<QPair<QPointF, QColor>> m_hover;  // the snapped points (value coordinates, y linear)
    QGraphicsSimpleTextItem* m_noData = nullptr;
    QGraphicsItem* m_curves = nullptr;  // draws every curve's points straight with QPainter
};

}  // namespace scaledesk::gui
