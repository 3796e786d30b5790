#include "serieschart.h"

#include "analysis/epochscsv.h"
#include "chartexport.h"
#include "chartstyle.h"

#include <QChart>
#include <QContextMenuEvent>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QGraphicsItem>
#include <QGraphicsSimpleTextItem>
#include <QInputDialog>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QValueAxis>
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
        const bool log = m_owner->m_log && m_owner->m_logY;
        const double y0 = log ? std::log10(m_owner->m_logY->min()) : m_owner->m_y->min();
        const double y1 = log ? std::log10(m_owner->m_logY->max()) : m_owner->m_y->max();
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
        p->restore();
    }

private:
    SeriesChart* m_owner;
    QChart* m_chart;
};

SeriesChart::SeriesChart(const QString& title, QWidget* parent) : QChartView(new QChart, parent)
{
    styleChart(chart(), title);
    setRenderHint(QPainter::Antialiasing);
    setRubberBand(QChartView::RectangleRubberBand);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    m_x = new QValueAxis;
    m_y = new QValueAxis;
    m_x->setTitleText(QStringLiteral("Step"));
    m_x->setLabelFormat(QStringLiteral("%.10g"));
    m_y->setLabelFormat(QStringLiteral("%.4g"));
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
    m_crosshair = new QGraphicsSimpleTextItem(chart());
    m_crosshair->setZValue(10);
    m_curves = new CurvesItem(this, chart());
    connect(chart(), &QChart::plotAreaChanged, this, [this] { static_cast<CurvesItem*>(m_curves)->changed(); });
}

void SeriesChart::setCurves(const QList<Curve>& curves)
{
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
    m_x->setTitleText(axis == XAxis::Step               ? QStringLiteral("Step")
                          : axis == XAxis::RelativeTime ? QStringLiteral("Time since start (s)")
                                                        : QStringLiteral("Wall time (Unix s)"));
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
    m_y->setTitleText(title);
    if (m_logY) m_logY->setTitleText(title);
}

void SeriesChart::setLogY(bool on)
{
    if (on == m_log) return;
    m_log = on;
    if (!m_logY) {
        m_logY = new QLogValueAxis;
        m_logY->setBase(10);
        m_logY->setLabelFormat(QStringLiteral("%g"));
        m_logY->setMinorTickCount(8);
        m_logY->setTitleText(m_y->titleText());
    }
    QAbstractAxis* from = on ? static_cast<QAbstractAxis*>(m_y) : m_logY;
    QAbstractAxis* to = on ? static_cast<QAbstractAxis*>(m_logY) : m_y;
    for (auto& t : m_tracks) t->line->detachAxis(from);
    chart()->removeAxis(from);
    chart()->addAxis(to, Qt::AlignLeft);
    for (auto& t : m_tracks) t->line->attachAxis(to);
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

void SeriesChart::refresh()
{
    QElapsedTimer timer;
    timer.start();
    m_refreshing = true;
    for (auto& t : m_tracks) rebuildCaches(*t);
    double lo, hi, ylo, yhi;
    fullRange(&lo, &hi, &ylo, &yhi);
    if (!std::isfinite(lo)) {
        lo = 0;
        hi = 1;
    }
    if (!std::isfinite(ylo)) {
        ylo = 0;
        yhi = 1;
    }
    if (hi <= lo) hi = lo + 1;
    if (m_log) {
        // The smallest positive value sets the bottom of a log axis.
        double pos = std::numeric_limits<double>::infinity();
        for (auto& t : m_tracks) {
            if (!t->curve.series) continue;
            const std::vector<double>& v = t->smoothed.empty() ? t->curve.series->values() : t->smoothed;
            for (double x : v)
                if (x > 0 && x < pos) pos = x;
        }
        ylo = std::isfinite(pos) ? pos : 1e-3;
        if (!(yhi > ylo)) yhi = ylo * 10;
    }
    if (!m_zoomed) {
        m_x->setRange(lo, hi);
        if (m_axis == XAxis::Step) m_x->applyNiceNumbers();  // round ticks (times stay exact)
        const double pad = (yhi - ylo) * 0.05 + (yhi == ylo ? std::max(1e-9, std::abs(yhi) * 0.05) : 0);
        m_y->setRange(ylo - pad, yhi + pad);
        if (m_logY) m_logY->setRange(ylo / 1.2, yhi * 1.2);
    }
    const double x0 = m_x->min(), x1 = m_x->max();
    const int width = plotWidth();
    m_pointsShown = 0;
    // A column whose min and max are less than a pixel apart is one point: Qt Charts' cost is per
    // point, and a spike (max − min spanning pixels) still gets both.
    const double height = std::max(1.0, chart()->plotArea().height());
    const double yPixel = m_log && m_logY ? std::log10(m_logY->max() / m_logY->min()) / height : (m_y->max() - m_y->min()) / height;
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
    QStringList lines{QStringLiteral("curve,x,y")};
    for (const auto& t : m_tracks)
        for (const QPointF& p : t->points)
            lines << csvField(t->curve.label) + QLatin1Char(',') + csvNumber(p.x()) + QLatin1Char(',') + csvNumber(p.y());
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void SeriesChart::resizeEvent(QResizeEvent* e)
{
    QChartView::resizeEvent(e);
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
    const QPointF scene = mapToScene(e->pos());
    if (!chart()->plotArea().contains(chart()->mapFromScene(scene))) {
        m_crosshair->setText(QString());
        return;
    }
    const QPointF v = chart()->mapToValue(chart()->mapFromScene(scene));
    m_crosshair->setText(QStringLiteral("x %1   y %2").arg(v.x(), 0, 'g', 6).arg(v.y(), 0, 'g', 6));
    m_crosshair->setPos(chart()->plotArea().topLeft() + QPointF(6, 4));
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
    m_crosshair->setText(QString());
    const auto ok = exportChart(chart(), path, size, dpi);
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
    const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), chart()->title() + QStringLiteral(".png"),
                                                      tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf);;CSV of the points drawn (*.csv)"));
    if (path.isEmpty()) return;
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
    if (auto ok = exportTo(path, size, dpi); !ok) QMessageBox::warning(this, tr("Export failed"), ok.error().text());
}

}  // namespace scaledesk::gui
