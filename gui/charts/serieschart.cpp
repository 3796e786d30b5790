#include "charts/serieschart.h"

#include "analysis/axisticks.h"
#include "analysis/comparison.h"
#include "analysis/epochscsv.h"
#include "charts/chartexport.h"
#include "charts/chartstyle.h"
#include "dialogs/plainmessage.h"

#include <QCategoryAxis>
#include <QChart>
#include <QContextMenuEvent>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QGraphicsItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QInputDialog>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QWheelEvent>

#include <cmath>
#include <limits>

namespace scaledesk::gui {

// Draws the decimated curves with QPainter in the chart's plot area. QLineSeries costs a few
// microseconds per point (Qt Charts builds hover shapes with an angle per segment); a polyline
// costs a fraction of that, which keeps a zoom over 10 × 1M points within a frame.
class CurvesItem : public QGraphicsItem {
public:
    CurvesItem(SeriesChart* owner, QChart* chart) : QGraphicsItem(chart), m_owner(owner), m_chart(chart) { setZValue(5); }
    QRectF boundingRect() const override { return m_chart->plotArea(); }
    void changed()
    {
        prepareGeometryChange();
        update();
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        const QRectF area = m_chart->plotArea();
        const double x0 = m_owner->m_x->min(), x1 = m_owner->m_x->max();
        const bool log = m_owner->m_log;
        const double y0 = m_owner->m_y->min(), y1 = m_owner->m_y->max();
        if (!(x1 > x0) || !(y1 > y0)) return;
        const double sx = area.width() / (x1 - x0), sy = area.height() / (y1 - y0);
        p->save();
        p->setClipRect(area);
        // Aliased: a dense min/max zig-zag stroked with antialiasing costs ~20× more, and at two
        // points per pixel column the difference does not show.
        p->setRenderHint(QPainter::Antialiasing, false);
        QPolygonF poly;
        for (const auto& t : m_owner->m_tracks) {
            if (!t->line->isVisible() || t->points.isEmpty()) continue;
            poly.resize(t->points.size());
            for (qsizetype i = 0; i < t->points.size(); ++i) {
                const QPointF& v = t->points[i];
                const double y = log ? std::log10(v.y()) : v.y();
                poly[i] = QPointF(area.left() + (v.x() - x0) * sx, area.bottom() - (y - y0) * sy);
            }
            QPen pen = t->line->pen();
            pen.setWidth(1);  // a one-pixel pen draws lines directly; wider ones are stroked as paths
            p->setPen(pen);
            if (poly.size() == 1)
                p->drawPoint(poly[0]);
            else
                p->drawPolyline(poly);
        }
        // The crosshair's snapped points: a ring in the curve's colour.
        p->setRenderHint(QPainter::Antialiasing, true);
        for (const auto& [v, color] : m_owner->m_hover) {
            const double y = log ? std::log10(v.y()) : v.y();
            p->setPen(QPen(color, 2));
            p->setBrush(Qt::white);
            p->drawEllipse(QPointF(area.left() + (v.x() - x0) * sx, area.bottom() - (y - y0) * sy), 4, 4);
        }
        p->restore();
    }

private:
    SeriesChart* m_owner;
    QChart* m_chart;
};

SeriesChart::SeriesChart(const QString& title, QWidget* parent) : QChartView(new QChart, parent)
{
    styleChart(chart(), title);
    styleLineLegend(chart());
    setRenderHint(QPainter::Antialiasing);
    setRubberBand(QChartView::RectangleRubberBand);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    m_x = new QCategoryAxis;
    m_y = new QCategoryAxis;
    for (QCategoryAxis* a : {m_x, m_y}) a->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_x->setTitleText(QStringLiteral("Step"));
    chart()->addAxis(m_x, Qt::AlignBottom);
    chart()->addAxis(m_y, Qt::AlignLeft);
    m_coalesce.setSingleShot(true);
    m_coalesce.setInterval(40);
    connect(&m_coalesce, &QTimer::timeout, this, &SeriesChart::refresh);
    // A zoom (rubber band, wheel, keys) changes the range: ask the backend for that range.
    connect(m_x, &QValueAxis::rangeChanged, this, [this] {
        if (!m_refreshing) {
            m_zoomed = true;
            m_coalesce.start();
        }
    });
    m_crosshairBox = new QGraphicsRectItem(chart());
    m_crosshairBox->setZValue(10);
    m_crosshairBox->setPen(QPen(QColor(0, 0, 0, 60)));
    m_crosshair = new QGraphicsTextItem(chart());
    m_crosshair->setZValue(11);
    m_noData = new QGraphicsSimpleTextItem(tr("No data yet"), chart());
    m_noData->setZValue(9);
    m_curves = new CurvesItem(this, chart());
    hideCrosshair();
    connect(chart(), &QChart::plotAreaChanged, this, [this] {
        static_cast<CurvesItem*>(m_curves)->changed();
        retick();  // more or fewer labels fit
        // The plot area can change without the view being resized (a chart laid out after its
        // first refresh, axis labels of another width): the columns were cut for the old width.
        if (plotWidth() != m_decimatedWidth) m_coalesce.start();
    });
}

void SeriesChart::setCurves(const QList<Curve>& curves)
{
    hideCrosshair();  // it described the old curves
    for (auto& t : m_tracks) {
        chart()->removeSeries(t->line);
        delete t->line;
    }
    m_tracks.clear();
    for (const Curve& c : curves) {
        auto t = std::make_unique<Track>();
        t->curve = c;
        t->line = new QLineSeries;
        t->line->setName(c.label);
        QPen pen(c.color);
        pen.setWidthF(1.5);
        t->line->setPen(pen);
        chart()->addSeries(t->line);
        t->line->attachAxis(m_x);
        t->line->attachAxis(m_y);
        m_tracks.push_back(std::move(t));
    }
    for (QLegendMarker* m : chart()->legend()->markers()) {
        connect(m, &QLegendMarker::clicked, this, [this, m] {
            m->series()->setVisible(!m->series()->isVisible());
            m->setVisible(true);
            m_curves->update();
            QFont f = m->font();
            f.setStrikeOut(!m->series()->isVisible());
            m->setFont(f);
        });
    }
    m_zoomed = false;
    refresh();
}

void SeriesChart::setXAxis(XAxis axis)
{
    m_axis = axis;
    for (auto& t : m_tracks) t->builtFor = 0;
    m_zoomed = false;
    refresh();
}

void SeriesChart::setSmoothing(double weight)
{
    m_smoothing = weight;
    for (auto& t : m_tracks) t->builtFor = 0;
    refresh();
}

void SeriesChart::setYTitle(const QString& title)
{
    m_yTitle = title;
    m_y->setTitleText(m_log ? title + tr(" (log)") : title);
}

void SeriesChart::setEmptyText(const QString& text)
{
    if (m_noData->text() == text) return;
    m_noData->setText(text);
    const QRectF area = chart()->plotArea();
    m_noData->setPos(area.center() - m_noData->boundingRect().center());
}

QString SeriesChart::emptyText() const { return m_noData->text(); }

void SeriesChart::setLogY(bool on)
{
    if (on == m_log) return;
    m_log = on;
    setYTitle(m_yTitle);
    hideCrosshair();
    m_zoomed = false;  // the y range changes units
    refresh();
}

void SeriesChart::dataChanged() { m_coalesce.start(); }

void SeriesChart::resetZoom()
{
    m_zoomed = false;
    refresh();
}

int SeriesChart::plotWidth() const { return std::max(1, int(chart()->plotArea().width())); }

QList<QPointF> SeriesChart::curvePoints(int i) const
{
    return i >= 0 && i < int(m_tracks.size()) ? m_tracks[std::size_t(i)]->points : QList<QPointF>();
}

void SeriesChart::rebuildCaches(Track& t)
{
    const Series* s = t.curve.series;
    if (!s || (t.builtFor == s->size() && t.builtTruncations == s->truncations())) return;
    const bool appendOnly = t.builtTruncations == s->truncations() && t.builtFor <= s->size();
    // Step and wall time are the series' own vectors (no copy); relative time is kept shifted,
    // extended by the new points only (a resume that replaced points rebuilds it).
    if (m_axis == XAxis::RelativeTime) {
        const std::size_t from = (appendOnly && t.xs.size() == t.builtFor) ? t.builtFor : 0;
        t.xs.resize(s->size());
        for (std::size_t i = from; i < s->size(); ++i) t.xs[i] = s->times()[i] - t.curve.runStart;
    } else {
        t.xs.clear();
    }
    if (m_smoothing > 0) {
        t.smoothed = smoothTensorBoard(s->values(), m_smoothing);
        t.smoothedIndex = std::make_unique<MinMaxIndex>();
        t.smoothedIndex->rebuild(t.smoothed);
    } else {
        t.smoothed.clear();
        t.smoothedIndex.reset();
    }
    t.builtFor = s->size();
    t.builtTruncations = s->truncations();
}

const std::vector<double>& SeriesChart::xsOf(const Track& t) const
{
    if (m_axis == XAxis::Step) return t.curve.series->steps();
    if (m_axis == XAxis::WallTime) return t.curve.series->times();
    return t.xs;
}

void SeriesChart::fullRange(double* lo, double* hi, double* ylo, double* yhi)
{
    *lo = *ylo = std::numeric_limits<double>::infinity();
    *hi = *yhi = -std::numeric_limits<double>::infinity();
    for (auto& t : m_tracks) {
        if (!t->curve.series || t->curve.series->empty()) continue;
        const std::vector<double>& xs = xsOf(*t);
        *lo = std::min(*lo, xs.front());
        *hi = std::max(*hi, xs.back());
        const auto& v = t->smoothed.empty() ? t->curve.series->values() : t->smoothed;
        const MinMaxIndex& idx = t->smoothed.empty() ? t->curve.series->index() : *t->smoothedIndex;
        const auto r = idx.range(v, 0, v.size());
        if (std::isfinite(r.min)) *ylo = std::min(*ylo, r.min);
        if (std::isfinite(r.max)) *yhi = std::max(*yhi, r.max);
    }
}

void SeriesChart::paintEvent(QPaintEvent* e)
{
    QElapsedTimer t;
    t.start();
    QChartView::paintEvent(e);
    m_paintMs = t.nsecsElapsed() / 1e6;
}

namespace {
// Labels that fit: one per ~80 px along x (wall-clock labels are wider), one per ~40 px along y.
int xTickCount(XAxis axis, int width) { return std::max(2, width / (axis == XAxis::WallTime ? 110 : 80)); }
int yTickCount(int height) { return std::max(2, height / 40); }

// Puts the ticks on a category axis as labels at their values (log10 of them on a log axis); the
// axis is left alone when they did not change, so a live refresh does not re-layout the chart.
void setTicks(QCategoryAxis* axis, const AxisTicks& ticks, bool log)
{
    QStringList labels;
    QList<double> at;
    const double eps = (axis->max() - axis->min()) * 1e-9;
    for (const AxisTick& t : ticks.ticks) {
        const double v = log ? std::log10(t.value) : t.value;
        if (v < axis->min() - eps || v > axis->max() + eps || labels.contains(t.label)) continue;
        labels << t.label;
        at << v;
    }
    // The first category starts well below the range, so that its start draws no grid line and a
    // range that moves (a live y axis) keeps the same categories: rebuilding them every frame cost
    // a quarter of the GUI thread while 10 runs streamed.
    bool same = axis->categoriesLabels() == labels && axis->startValue() <= axis->min();
    for (qsizetype i = 0; same && i < labels.size(); ++i) same = axis->endValue(labels[i]) == at[i];
    if (same) return;
    for (const QString& l : axis->categoriesLabels()) axis->remove(l);
    axis->setStartValue(axis->min() - 10 * (axis->max() - axis->min()));
    for (qsizetype i = 0; i < labels.size(); ++i) axis->append(labels[i], at[i]);
}

QString zoneName() { return QDateTime::currentDateTime().timeZoneAbbreviation(); }
}  // namespace

void SeriesChart::retick()
{
    const QRectF area = chart()->plotArea();
    AxisTicks xt, yt;
    if (m_hasData) {
        const int nx = xTickCount(m_axis, int(area.width())), ny = yTickCount(int(area.height()));
        const double x0 = m_x->min(), x1 = m_x->max();
        xt = m_axis == XAxis::Step          ? linearTicks(x0, x1, nx, AxisFit::Exact)
            : m_axis == XAxis::RelativeTime ? durationTicks(x0, x1, nx, AxisFit::Exact)
                                            : clockTicks(x0, x1, nx);
        yt = m_log ? logTicks(std::pow(10.0, m_y->min()), std::pow(10.0, m_y->max()), ny, AxisFit::Exact)
                   : linearTicks(m_y->min(), m_y->max(), ny, AxisFit::Exact);
    }
    setTicks(m_x, xt, false);
    setTicks(m_y, yt, m_log);
    const QString xTitle = m_axis == XAxis::Step ? tr("Step")
        : m_axis == XAxis::RelativeTime          ? tr("Time since start (%1)").arg(xt.unit.isEmpty() ? QStringLiteral("s") : xt.unit)
                                                 : tr("Wall clock (%1)").arg(zoneName());
    if (m_x->titleText() != xTitle) m_x->setTitleText(xTitle);
    m_noData->setVisible(!m_hasData);
    m_x->setVisible(m_hasData);  // no 0–1 axes on an empty chart
    m_y->setVisible(m_hasData);
    if (!m_hasData) m_noData->setPos(area.center() - m_noData->boundingRect().center());
}

void SeriesChart::refresh()
{
    QElapsedTimer timer;
    timer.start();
    m_refreshing = true;
    for (auto& t : m_tracks) rebuildCaches(*t);
    double lo, hi, ylo, yhi;
    fullRange(&lo, &hi, &ylo, &yhi);
    if (m_log) {
        // The smallest positive value sets the bottom of a log axis.
        double pos = std::numeric_limits<double>::infinity();
        for (auto& t : m_tracks) {
            if (!t->curve.series) continue;
            const std::vector<double>& v = t->smoothed.empty() ? t->curve.series->values() : t->smoothed;
            for (double x : v)
                if (x > 0 && x < pos) pos = x;
        }
        ylo = pos;
        if (!(yhi >= ylo)) ylo = yhi = std::numeric_limits<double>::quiet_NaN();
    }
    m_hasData = std::isfinite(lo) && std::isfinite(hi) && std::isfinite(ylo) && std::isfinite(yhi);
    if (!m_zoomed) {
        if (!m_hasData) {
            m_x->setRange(0, 1);
            m_y->setRange(0, 1);
        } else {
            // x: to the next fifth of a tick step past the data (65 steps end at 70, not at the
            // next labelled tick; wall time: the data's range); y: 5 % of margin, as matplotlib
            // pads, never below zero for a quantity that is not negative.
            const int nx = xTickCount(m_axis, plotWidth());
            const AxisTicks xt = m_axis == XAxis::Step ? linearTicks(lo, hi, nx, AxisFit::Snug, lo >= 0)
                : m_axis == XAxis::RelativeTime        ? durationTicks(lo, hi, nx, AxisFit::Snug)
                                                       : clockTicks(lo, hi, nx);
            m_x->setRange(xt.lo, xt.hi);
            if (m_log) {
                const AxisTicks yt = logTicks(ylo, yhi, yTickCount(int(chart()->plotArea().height())), AxisFit::Extend);
                m_y->setRange(std::log10(yt.lo), std::log10(yt.hi));
            } else {
                // A non-negative quantity whose smallest value is near zero starts at zero.
                const double pad = yhi > ylo ? (yhi - ylo) * 0.05 : std::max(1e-9, std::abs(yhi) * 0.05);
                m_y->setRange(ylo >= 0 && ylo - pad <= pad ? 0.0 : ylo - pad, yhi + pad);
            }
        }
    }
    retick();
    const double x0 = m_x->min(), x1 = m_x->max();
    const int width = plotWidth();
    m_decimatedWidth = width;
    m_pointsShown = 0;
    // A column whose min and max are less than a pixel apart is one point: Qt Charts' cost is per
    // point, and a spike (max − min spanning pixels) still gets both.
    const double height = std::max(1.0, chart()->plotArea().height());
    const double yPixel = (m_y->max() - m_y->min()) / height;  // log10 units while log y is on
    auto tiny = [&](double lo, double hi) { return m_log ? std::log10(hi / lo) < yPixel : hi - lo < yPixel; };
    for (auto& t : m_tracks) {
        if (!t->curve.series) continue;
        const auto& v = t->smoothed.empty() ? t->curve.series->values() : t->smoothed;
        const MinMaxIndex& idx = t->smoothed.empty() ? t->curve.series->index() : *t->smoothedIndex;
        const auto cols = decimate(xsOf(*t), v, idx, x0, x1, width, true);
        QList<QPointF> pts;
        pts.reserve(qsizetype(cols.size() * 2));
        for (const Column& c : cols) {
            if (c.count == 1) {
                if (std::isfinite(c.first) && (!m_log || c.first > 0)) pts << QPointF(c.x0, c.first);
                continue;
            }
            if (!std::isfinite(c.min) || (m_log && c.max <= 0)) continue;
            if (m_log && c.min <= 0) {
                pts << QPointF(0.5 * (c.x0 + c.x1), c.max);
                continue;
            }
            const double x = 0.5 * (c.x0 + c.x1);
            if (tiny(c.min, c.max)) {
                pts << QPointF(x, 0.5 * (c.min + c.max));
                continue;
            }
            // Min and max in the order that keeps the line continuous with its neighbours.
            if (c.first <= c.last)
                pts << QPointF(x, c.min) << QPointF(x, c.max);
            else
                pts << QPointF(x, c.max) << QPointF(x, c.min);
        }
        t->points = pts;
        m_pointsShown += int(pts.size());
    }
    static_cast<CurvesItem*>(m_curves)->changed();
    m_refreshing = false;
    m_refreshMs = timer.nsecsElapsed() / 1e6;
}

QString SeriesChart::csv() const
{
    QStringList lines{QStringLiteral("curve,x,value")};
    if (m_hasData)
        for (const auto& t : m_tracks)
            if (t->curve.series)
                appendSeriesCsvRows(lines, t->curve.id.isEmpty() ? t->curve.label : t->curve.id, *t->curve.series, m_axis,
                                    t->curve.runStart, m_smoothing, m_x->min(), m_x->max());
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QStringList SeriesChart::xTickLabels() const { return m_x->categoriesLabels(); }
QStringList SeriesChart::yTickLabels() const { return m_y->categoriesLabels(); }
QString SeriesChart::crosshairText() const { return m_crosshair->isVisible() ? m_crosshair->toPlainText() : QString(); }

void SeriesChart::hideCrosshair()
{
    m_crosshair->setVisible(false);
    m_crosshairBox->setVisible(false);
    if (!m_hover.isEmpty()) {
        m_hover.clear();
        m_curves->update();
    }
}

void SeriesChart::showCrosshairAt(double x)
{
    // Each visible curve's point nearest to x (x is ascending within a series).
    m_hover.clear();
    QString rows;
    for (const auto& t : m_tracks) {
        if (!t->curve.series || !t->line->isVisible()) continue;
        const std::vector<double>& xs = xsOf(*t);
        if (xs.empty()) continue;
        std::size_t i = std::size_t(std::lower_bound(xs.begin(), xs.end(), x) - xs.begin());
        if (i == xs.size() || (i > 0 && x - xs[i - 1] < xs[i] - x)) --i;
        const double v = t->smoothed.empty() ? t->curve.series->values()[i] : t->smoothed[i];
        if (!std::isfinite(v) || (m_log && v <= 0)) continue;
        m_hover << qMakePair(QPointF(xs[i], v), t->curve.color);
        // The step of the point, where the x axis is a time.
        const QString at = m_axis == XAxis::Step ? QString() : tr("step %1").arg(formatNumber(t->curve.series->steps()[i], 10));
        rows += QStringLiteral("<tr><td style='color:%1'>&#9632;</td><td>%2</td><td align='right'>&nbsp;<b>%3</b></td>"
                               "<td style='color:gray'>&nbsp;%4</td></tr>")
                    .arg(t->curve.color.name(), t->curve.label.toHtmlEscaped(), formatNumber(v), at);
    }
    if (m_hover.isEmpty()) {
        hideCrosshair();
        return;
    }
    const QString head = m_axis == XAxis::Step ? tr("step %1").arg(formatNumber(std::round(x), 10))
        : m_axis == XAxis::RelativeTime        ? formatDuration(x)
                                        : QDateTime::fromMSecsSinceEpoch(qint64(x * 1000)).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    m_crosshair->setHtml(QStringLiteral("<table cellspacing='0' cellpadding='1'><tr><td colspan='4'>%1</td></tr>%2</table>")
                             .arg(head.toHtmlEscaped(), rows));
    // Beside the first snapped point, kept inside the plot.
    const QRectF area = chart()->plotArea();
    const double y0 = m_y->min(), y1 = m_y->max();
    const QPointF p0 = m_hover.first().first;
    const double py = m_log ? std::log10(p0.y()) : p0.y();
    QPointF at(area.left() + (p0.x() - m_x->min()) / (m_x->max() - m_x->min()) * area.width() + 12,
               area.bottom() - (py - y0) / (y1 - y0) * area.height() + 12);
    const QRectF box = m_crosshair->boundingRect();
    if (at.x() + box.width() > area.right()) at.rx() -= box.width() + 24;
    if (at.y() + box.height() > area.bottom()) at.ry() -= box.height() + 24;
    at.rx() = std::max(at.x(), area.left());
    at.ry() = std::max(at.y(), area.top());
    m_crosshair->setPos(at);
    m_crosshairBox->setRect(QRectF(at, box.size()));
    QColor base = palette().color(QPalette::ToolTipBase);
    base.setAlpha(235);
    m_crosshairBox->setBrush(base);
    m_crosshair->setDefaultTextColor(palette().color(QPalette::ToolTipText));
    m_crosshair->setVisible(true);
    m_crosshairBox->setVisible(true);
    m_curves->update();
}

void SeriesChart::leaveEvent(QEvent* e)
{
    hideCrosshair();
    QChartView::leaveEvent(e);
}

void SeriesChart::resizeEvent(QResizeEvent* e)
{
    QChartView::resizeEvent(e);
    setToolTip(fitChartTitle(chart(), width()));
    m_coalesce.start();
}

void SeriesChart::wheelEvent(QWheelEvent* e)
{
    const double factor = e->angleDelta().y() > 0 ? 0.8 : 1.25;
    const QPointF at = chart()->mapToValue(chart()->mapFromScene(mapToScene(e->position().toPoint())));
    const double x0 = at.x() - (at.x() - m_x->min()) * factor, x1 = at.x() + (m_x->max() - at.x()) * factor;
    m_x->setRange(x0, x1);
    e->accept();
}

void SeriesChart::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

void SeriesChart::mouseReleaseEvent(QMouseEvent* e)
{
    // Right click undoes a rubber-band zoom as QChartView does; then the full range is re-queried.
    QChartView::mouseReleaseEvent(e);
    if (e->button() == Qt::RightButton) resetZoom();
}

void SeriesChart::keyPressEvent(QKeyEvent* e)
{
    const double span = m_x->max() - m_x->min();
    if (e->key() == Qt::Key_Left)
        m_x->setRange(m_x->min() - span * 0.1, m_x->max() - span * 0.1);
    else if (e->key() == Qt::Key_Right)
        m_x->setRange(m_x->min() + span * 0.1, m_x->max() + span * 0.1);
    else
        QChartView::keyPressEvent(e);
}

void SeriesChart::mouseMoveEvent(QMouseEvent* e)
{
    QChartView::mouseMoveEvent(e);
    const QPointF at = chart()->mapFromScene(mapToScene(e->pos()));
    if (!m_hasData || !chart()->plotArea().contains(at)) {
        hideCrosshair();
        return;
    }
    showCrosshairAt(chart()->mapToValue(at).x());
}

}  // namespace scaledesk::gui

namespace scaledesk::gui {

Status SeriesChart::exportTo(const QString& path, QSize size, int dpi)
{
    if (path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)) {
        QSaveFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return Error{ErrorCode::ExportIo, f.errorString(), path};
        f.write(csv().toUtf8());
        if (!f.commit()) return Error{ErrorCode::ExportIo, QStringLiteral("cannot write: ") + f.errorString(), path};
        return Done{};
    }
    hideCrosshair();
    const auto ok = exportChart(chart(), path, size, dpi, [this] { refresh(); });  // decimated for the file's width
    setChart(chart());
    return ok;
}

void SeriesChart::contextMenuEvent(QContextMenuEvent* e)
{
    QMenu menu(this);
    QAction* reset = menu.addAction(tr("Show everything"));
    QAction* save = menu.addAction(tr("Export as PNG, SVG, PDF or CSV…"));
    QAction* chosen = menu.exec(e->globalPos());
    if (chosen == reset) resetZoom();
    if (chosen != save) return;
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export chart"), exportStartPath(fullChartTitle(chart()) + QStringLiteral(".png")),
                                     tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf);;CSV of the data in view (*.csv)"));
    if (path.isEmpty()) return;
    rememberExportPath(path);
    QSize size(1600, 1000);
    int dpi = 200;
    if (!path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)) {
        // Size and resolution of the image, as WIDTHxHEIGHT@DPI.
        bool ok = false;
        const QString spec = QInputDialog::getText(this, tr("Export chart"), tr("Size in pixels and resolution (WIDTHxHEIGHT@DPI):"),
                                                   QLineEdit::Normal, QStringLiteral("1600x1000@200"), &ok);
        if (!ok) return;
        static const QRegularExpression re(QStringLiteral("^\\s*(\\d+)\\s*x\\s*(\\d+)\\s*@\\s*(\\d+)\\s*$"));
        const auto m = re.match(spec);
        if (!m.hasMatch() || m.captured(1).toInt() < 16 || m.captured(2).toInt() < 16 || m.captured(3).toInt() < 10) {
            QMessageBox::warning(this, tr("Export chart"), tr("'%1' is not WIDTHxHEIGHT@DPI, e.g. 1600x1000@200").arg(spec));
            return;
        }
        size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
        dpi = m.captured(3).toInt();
    }
    if (auto ok = exportTo(path, size, dpi); !ok) plainMessage(this, QMessageBox::Warning, tr("Export failed"), ok.error().text());
}

}  // namespace scaledesk::gui
