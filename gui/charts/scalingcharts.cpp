#include "charts/scalingcharts.h"

#include "analysis/axisticks.h"
#include "charts/chartstyle.h"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QCursor>
#include <QGraphicsSimpleTextItem>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QToolTip>

#include <cmath>
#include <functional>
#include <map>
#include <memory>

namespace scaledesk::gui {

namespace {

// A line of text under the plot (room made for it), kept there as the chart resizes.
void bottomNote(QChart* chart, const QString& text)
{
    auto* note = new QGraphicsSimpleTextItem(text, chart);
    note->setBrush(chart->titleBrush());
    chart->setMargins(QMargins(6, 6, 6, 6 + int(note->boundingRect().height()) + 4));
    QObject::connect(chart, &QChart::plotAreaChanged, chart,
                     [chart, note] { note->setPos(chart->plotArea().left(), chart->size().height() - note->boundingRect().height() - 6); });
}

// A line of text in the middle of the plot area, kept there as the chart resizes.
void centredNote(QChart* chart, const QString& text)
{
    auto* note = new QGraphicsSimpleTextItem(text, chart);
    QObject::connect(chart, &QChart::plotAreaChanged, chart,
                     [note](const QRectF& area) { note->setPos(area.center() - note->boundingRect().center()); });
}

struct Line {
    QList<const ReportGroupRow*> rows;
};

std::map<QString, Line> byStrategy(const ScalingReport& rep)
{
    std::map<QString, Line> out;
    for (const auto& g : rep.groups)
        if (std::isfinite(g.epochS)) out[g.strategy].rows << &g;
    return out;
}

void hideFromLegend(QChart* chart, QAbstractSeries* s)
{
    for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
}

void hideUnnamed(QChart* chart)
{
    for (QAbstractSeries* s : chart->series())
        if (s->name().isEmpty()) hideFromLegend(chart, s);
}

// How values map onto a chart's axis: log axes are linear category axes over log10 or log2 of the
// values, so that every tick carries a label of our choosing (Qt's QLogValueAxis labels whole
// powers only).
enum class Scale { Linear, Log10, Log2 };
double mapped(Scale s, double v) { return s == Scale::Log10 ? std::log10(v) : s == Scale::Log2 ? std::log2(v) : v; }

// The ticks as an axis: labels at the ticks' (mapped) values, over the ticks' range.
QCategoryAxis* tickedAxis(const QString& title, const AxisTicks& ticks, Scale s)
{
    auto* a = new QCategoryAxis;
    a->setTitleText(title);
    a->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    a->setRange(mapped(s, ticks.lo), mapped(s, ticks.hi));
    a->setStartValue(mapped(s, ticks.lo));
    for (const AxisTick& t : ticks.ticks) a->append(t.label, mapped(s, t.value));
    return a;
}

// A chart's lines, in data units: the axes are made last, from the range of every line drawn
// (ideal lines and error bars included), and the points are mapped onto them then.
class Plot {
public:
    Plot(QChart* chart, Scale y) : m_chart(chart), m_y(y) { styleLineLegend(chart); }
    /// Another x than ranks on log2: `title`, log10 or linear, drawn right to left with `reversed`.
    void setX(const QString& title, Scale scale, bool reversed)
    {
        m_xTitle = title;
        m_x = scale;
        m_xReversed = reversed;
    }
    QLineSeries* line(const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine, qreal width = 2)
    {
        auto* s = new QLineSeries;
        s->setName(name);
        QPen pen(color);
        pen.setWidthF(width);
        pen.setStyle(style);
        s->setPen(pen);
        m_chart->addSeries(s);
        return s;
    }
    // A translucent band between two lines that only the area draws (add() their points).
    QPair<QLineSeries*, QLineSeries*> band(const QColor& color)
    {
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        auto* area = new QAreaSeries(upper, lower);
        QColor fill = color;
        fill.setAlphaF(0.18);
        area->setBrush(fill);
        area->setPen(Qt::NoPen);
        m_chart->addSeries(area);
        return {upper, lower};
    }
    // Markers on a line's points (no legend entry), or named points of their own (with one).
    QScatterSeries* dots(const QColor& color, const QString& name = QString())
    {
        auto* d = new QScatterSeries;
        d->setName(name);
        d->setColor(color);
        d->setBorderColor(color);
        d->setMarkerSize(9);
        m_chart->addSeries(d);
        if (name.isEmpty()) hideFromLegend(m_chart, d);
        return d;
    }
    void add(QXYSeries* s, double ranks, double v)
    {
        m_points.push_back({s, ranks, v});
        m_xlo = std::min(m_xlo, ranks);
        m_xhi = std::max(m_xhi, ranks);
        m_ylo = std::min(m_ylo, v);
        m_yhi = std::max(m_yhi, v);
    }
    bool empty() const { return m_points.empty(); }
    // The chart's background (its theme's: a gradient in the dark one), to fill hollow markers.
    QColor backgroundColor() const
    {
        const QBrush b = m_chart->backgroundBrush();
        const QGradient* g = b.gradient();
        if (!g || g->stops().isEmpty()) return b.color();
        const QColor top = g->stops().first().second, bottom = g->stops().last().second;
        return QColor::fromRgbF((top.redF() + bottom.redF()) / 2, (top.greenF() + bottom.greenF()) / 2, (top.blueF() + bottom.blueF()) / 2);
    }
    double xlo() const { return m_xlo; }
    double xhi() const { return m_xhi; }
    double ylo() const { return m_ylo; }
    double yhi() const { return m_yhi; }
    // Ranks on log2 along x; y from `yTicks` (given the lines' y range).
    void finish(const QString& yTitle, const std::function<AxisTicks(double, double)>& yTicks, const QString& empty = {})
    {
        if (m_points.empty()) {  // no data at all: say so (or why) instead of drawing 0–1 axes
            centredNote(m_chart, empty.isEmpty() ? QObject::tr("No data yet") : empty);
            return;
        }
        QCategoryAxis* x = m_xTitle.isEmpty()
            ? tickedAxis(QObject::tr("Ranks (GPUs or CPU ranks)"), log2Ticks(m_xlo, m_xhi, 8), Scale::Log2)
            : m_x == Scale::Log10 ? tickedAxis(m_xTitle, logTicks(m_xlo, m_xhi, 6), m_x)
                                  : tickedAxis(m_xTitle, linearTicks(m_xlo, m_xhi, 6), m_x);
        x->setReverse(m_xReversed);
        QCategoryAxis* y = tickedAxis(yTitle, yTicks(m_ylo, m_yhi), m_y);
        const Scale xScale = m_xTitle.isEmpty() ? Scale::Log2 : m_x;
        for (const auto& p : m_points) p.series->append(mapped(xScale, p.ranks), mapped(m_y, p.v));
        m_chart->addAxis(x, Qt::AlignBottom);
        m_chart->addAxis(y, Qt::AlignLeft);
        for (QAbstractSeries* s : m_chart->series()) {
            s->attachAxis(x);
            s->attachAxis(y);
        }
        hideUnnamed(m_chart);  // error bars have no legend entry
    }

private:
    struct Point {
        QXYSeries* series;
        double ranks, v;
    };
    QChart* m_chart;
    Scale m_y;
    QString m_xTitle;  ///< empty: ranks on log2
    Scale m_x = Scale::Log2;
    bool m_xReversed = false;
    std::vector<Point> m_points;
    double m_xlo = 1e300, m_xhi = -1e300, m_ylo = 1e300, m_yhi = -1e300;
};

QString ranksLabel(int world) { return world == 1 ? QStringLiteral("1 rank") : QStringLiteral("%1 ranks").arg(world); }

QString gaps(const ScalingReport& rep)
{
    QStringList missing;
    for (const auto& g : rep.groups)
        if (!std::isfinite(g.epochS)) missing << QStringLiteral("%1 at %2 ranks").arg(g.strategy).arg(g.world);
    return missing.isEmpty() ? QString() : QStringLiteral(" — no data: ") + missing.join(QStringLiteral(", "));
}

// A line per strategy of value(g) against ranks, with markers; error bars from err(g) when given.
void addStrategyLines(Plot& plot, const ScalingReport& rep, bool positiveOnly, const std::function<double(const ReportGroupRow&)>& value,
                      const std::function<double(const ReportGroupRow&)>& err = {})
{
    for (const auto& [strategy, line] : byStrategy(rep)) {
        const QColor c = strategyColor(strategy);
        auto* l = plot.line(strategy, c);
        auto* dots = plot.dots(c);
        for (const auto* g : line.rows) {
            const double v = value(*g);
            if (!std::isfinite(v) || (positiveOnly && v <= 0)) continue;
            plot.add(l, g->world, v);
            plot.add(dots, g->world, v);
            if (!err) continue;
            const double e = err(*g);
            if (!std::isfinite(e) || e <= 0) continue;
            auto* bar = plot.line(QString(), c, Qt::SolidLine, 1.5);
            plot.add(bar, g->world, positiveOnly ? std::max(v - e, v * 0.05) : v - e);
            plot.add(bar, g->world, v + e);
        }
    }
}

// Percent labels inside the stacked segments tall enough to hold one (Qt's own labels overlap on
// thin segments: "0.78 %" over "7.2 %"); every value is in the segment's tooltip.
void labelSegmentsThatFit(QChart* chart, QStackedBarSeries* series)
{
    struct Label {
        QGraphicsSimpleTextItem* item;
        int category;
        double bottom, value;
    };
    auto labels = std::make_shared<std::vector<Label>>();
    const QList<QBarSet*> sets = series->barSets();
    const int categories = sets.isEmpty() ? 0 : int(sets.first()->count());
    for (int c = 0; c < categories; ++c) {
        double bottom = 0;
        for (QBarSet* set : sets) {
            const double v = set->at(c);
            auto* item = new QGraphicsSimpleTextItem(formatNumber(v, 3) + QStringLiteral(" %"), chart);
            item->setBrush(set->labelColor());  // the set's: white on dark segments, dark on light ones
            item->setZValue(10);
            labels->push_back({item, c, bottom, v});
            bottom += v;
        }
    }
    auto place = [chart, series, labels] {
        for (const Label& l : *labels) {
            const QPointF top = chart->mapToPosition(QPointF(l.category, l.bottom + l.value), series);
            const QPointF base = chart->mapToPosition(QPointF(l.category, l.bottom), series);
            const QRectF r = l.item->boundingRect();
            const bool fits = base.y() - top.y() >= r.height() + 2;
            l.item->setVisible(fits);
            if (fits) l.item->setPos(QPointF(top.x(), (top.y() + base.y()) / 2) - r.center());
        }
    };
    QObject::connect(chart, &QChart::plotAreaChanged, chart, place);
    for (QBarSet* set : sets)
        QObject::connect(set, &QBarSet::hovered, chart, [set](bool on, int index) {
            if (on)
                QToolTip::showText(QCursor::pos(), QStringLiteral("%1: %2 %").arg(set->label(), formatNumber(set->at(index), 3)));
            else
                QToolTip::hideText();
        });
}

// The plan's prediction of each strategy: a dashed line through value(p) with hollow markers at
// the points predicted (measured points are filled), and a band from low(p) to high(p), in the
// strategy's colour. A strategy predicted at one point only has no line or band to draw: its
// marker carries the range as a bar.
void addPredictions(Plot& plot, const Plan& plan, const std::function<double(const PlanPoint&)>& value,
                    const std::function<double(const PlanPoint&)>& low, const std::function<double(const PlanPoint&)>& high)
{
    std::map<QString, QList<const PlanPoint*>> by;
    for (const PlanPoint& p : plan.points)
        if (std::isfinite(value(p)) && value(p) > 0) by[p.strategy] << &p;
    for (const auto& [strategy, points] : by) {
        const QColor c = strategyColor(strategy);
        const auto [upper, lower] = plot.band(c);
        auto* line = plot.line(strategy + QObject::tr(" predicted"), c, Qt::DashLine, 2);
        QScatterSeries* markers = plot.dots(c);
        markers->setColor(plot.backgroundColor());
        markers->setMarkerSize(8);
        for (const PlanPoint* p : points) {
            plot.add(line, p->ranks, value(*p));
            plot.add(markers, p->ranks, value(*p));
            const double lo = low(*p), hi = high(*p);
            const double top = std::isfinite(hi) ? hi : value(*p), bottom = std::isfinite(lo) && lo > 0 ? lo : value(*p);
            plot.add(upper, p->ranks, top);
            plot.add(lower, p->ranks, bottom);
            if (points.size() == 1 && top > bottom) {
                auto* bar = plot.line(QString(), c, Qt::SolidLine, 1.5);
                plot.add(bar, p->ranks, bottom);
                plot.add(bar, p->ranks, top);
            }
        }
    }
}
}  // namespace

namespace {

// The gradient noise scale the trainer measured (B_simple per epoch) against the validation loss,
// training going left to right (the loss falling), the curve time-to-target reads (log-log between
// the points), and the global batches of the runs and of the plan's points as lines: where B_simple
// is above a batch, that batch is below the critical batch (adding ranks still cuts the steps);
// below it, a larger batch mostly costs samples.
QChart* noiseScaleChart(const QList<QPair<double, double>>& points, const QList<double>& runBatches, const QList<double>& planned)
{
    auto* chart = new QChart;
    styleChart(chart, QObject::tr("Gradient noise scale (critical batch) vs validation loss"));
    Plot plot(chart, Scale::Log10);
    plot.setX(QObject::tr("Validation loss (falling as training goes on)"), Scale::Log10, true);
    QScatterSeries* measured = plot.dots(strategyColor(QStringLiteral("ddp")), QObject::tr("B_simple per epoch"));
    for (const auto& [loss, b] : points) plot.add(measured, loss, b);
    LearningCurve read;
    read.noiseByLoss = points;
    QLineSeries* line = plot.line(QObject::tr("B_noise(L) used"), strategyColor(QStringLiteral("ddp")), Qt::SolidLine, 1.5);
    const double lo = points.first().first, hi = points.last().first;
    for (int i = 0; i <= 64; ++i) {
        const double loss = lo * std::pow(hi / lo, i / 64.0);
        plot.add(line, loss, read.noiseAt(loss));
    }
    QList<double> batches = runBatches;
    for (double b : planned)
        if (!batches.contains(b)) batches << b;
    std::sort(batches.begin(), batches.end());
    for (double b : batches) {
        const bool ran = runBatches.contains(b);
        QLineSeries* at =
            plot.line(ran ? QObject::tr("batch %1 (run)").arg(formatNumber(b)) : QObject::tr("batch %1 (planned)").arg(formatNumber(b)),
                      referenceColor(), ran ? Qt::DotLine : Qt::DashLine, 1);
        plot.add(at, lo, b);
        plot.add(at, hi, b);
    }
    plot.finish(QObject::tr("Global batch (samples)"), [](double ylo, double yhi) { return logTicks(ylo, yhi, 6); });
    return chart;
}

}  // namespace

QList<QPair<QString, QChart*>> buildPlanCharts(const Plan& plan)
{
    QList<QPair<QString, QChart*>> charts;
    QString sub = plan.weak ? QObject::tr(" (weak scaling)") : QObject::tr(" (strong scaling)");
    for (const PlanPoint& p : plan.points)
        if (p.extrapolated) {
            sub += QObject::tr("; beyond %1 ranks extrapolated").arg(8 * plan.measuredMaxRanks);
            break;
        }
    // Under each plot: the points not drawn ("ddp, fused at 2, 4 node(s)") and those outside the model.
    QString pointsNote;
    {
        QStringList strategies;
        QList<int> nodeCounts;
        for (const PlanPoint& p : plan.points)
            if (!p.notMeasured.isEmpty()) {
                if (!strategies.contains(p.strategy)) strategies << p.strategy;
                if (!nodeCounts.contains(p.nodes)) nodeCounts << p.nodes;
            }
        QStringList nodes;
        for (int n : nodeCounts) nodes << QString::number(n);
        if (!strategies.isEmpty())
            pointsNote = QObject::tr("Not measured, not drawn: %1 at %2 node(s); plan.md says what to measure")
                             .arg(strategies.join(QStringLiteral(", ")), nodes.join(QStringLiteral(", ")));
        // Drawn, but outside what the model describes: "ddp at 4 ranks".
        QStringList outside;
        for (const PlanPoint& p : plan.points)
            if (!p.outsideModel.isEmpty()) outside << QObject::tr("%1 at %2 ranks").arg(p.strategy).arg(p.ranks);
        if (!outside.isEmpty())
            pointsNote += (pointsNote.isEmpty() ? QString() : QStringLiteral("\n")) +
                QObject::tr("Outside the model: %1; plan.md says why").arg(outside.join(QStringLiteral(", ")));
    }
    // The sweep's measured points as dots, where a run had the point.
    auto measured = [&](Plot& plot, const std::function<double(const PlanPoint&)>& value) {
        std::map<QString, QScatterSeries*> dots;
        for (const PlanPoint& p : plan.points) {
            const double v = value(p);
            if (!std::isfinite(v) || v <= 0) continue;
            QScatterSeries*& d = dots[p.strategy];
            if (!d) d = plot.dots(strategyColor(p.strategy), p.strategy + QObject::tr(" measured"));
            plot.add(d, p.ranks, v);
        }
    };
    {
        auto* chart = new QChart;
        styleChart(chart, QObject::tr("Predicted epoch time%1, %2").arg(sub, planRangeName()));
        if (!pointsNote.isEmpty()) bottomNote(chart, pointsNote);
        Plot plot(chart, Scale::Log10);
        addPredictions(
            plot, plan, [](const PlanPoint& p) { return p.epochS; }, [](const PlanPoint& p) { return p.epochLowS; },
            [](const PlanPoint& p) { return p.epochHighS; });
        measured(plot, [](const PlanPoint& p) { return p.measuredEpochS; });
        plot.finish(QObject::tr("Epoch time (s)"), [](double lo, double hi) { return logTicks(lo, hi, 6); });
        charts << qMakePair(QStringLiteral("plan_epoch_time"), chart);
    }
    {
        auto* chart = new QChart;
        styleChart(chart, QObject::tr("Predicted scaling efficiency%1, %2").arg(sub, planRangeName()));
        if (!pointsNote.isEmpty()) bottomNote(chart, pointsNote);
        Plot plot(chart, Scale::Linear);
        addPredictions(
            plot, plan, [](const PlanPoint& p) { return 100 * p.efficiency; }, [](const PlanPoint& p) { return 100 * p.efficiencyLow; },
            [](const PlanPoint& p) { return 100 * p.efficiencyHigh; });
        measured(plot, [](const PlanPoint& p) { return 100 * p.measuredEfficiency; });
        // Ranges cut at 100 % (no run scaled superlinearly): a triangle on the line marks each.
        QScatterSeries* clips = nullptr;
        for (const PlanPoint& p : plan.points)
            if (p.efficiencyClipped) {
                if (!clips) {
                    clips = plot.dots(referenceColor(), QObject::tr("range clipped at 100 %"));
                    clips->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
                    clips->setMarkerSize(11);
                }
                plot.add(clips, p.ranks, 100);
            }
        if (!plot.empty()) {  // across the axis, also where one size alone is drawn
            auto* full = plot.line(QStringLiteral("100 %"), referenceColor(), Qt::DotLine, 1);
            const bool one = plot.xlo() == plot.xhi();
            plot.add(full, one ? plot.xlo() / 2 : plot.xlo(), 100);
            plot.add(full, one ? plot.xhi() * 2 : plot.xhi(), 100);
        }
        plot.finish(QObject::tr("Efficiency (%)"), [](double lo, double hi) {
            return linearTicks(std::min(0.0, lo), std::max(110.0, hi * 1.05), 6, AxisFit::Exact, lo >= 0);
        });
        charts << qMakePair(QStringLiteral("plan_efficiency"), chart);
    }
    {
        auto* chart = new QChart;
        styleChart(chart, QObject::tr("Predicted node-hours for %1 epoch(s)%2, %3").arg(formatNumber(plan.epochs), sub, planRangeName()));
        if (!pointsNote.isEmpty()) bottomNote(chart, pointsNote);
        Plot plot(chart, Scale::Log10);
        addPredictions(
            plot, plan, [](const PlanPoint& p) { return p.nodeHours; },
            [](const PlanPoint& p) { return p.nodeHours * p.epochLowS / p.epochS; },
            [](const PlanPoint& p) { return p.nodeHours * p.epochHighS / p.epochS; });
        plot.finish(QObject::tr("Node-hours"), [](double lo, double hi) { return logTicks(lo, hi, 6); });
        charts << qMakePair(QStringLiteral("plan_node_hours"), chart);
    }
    if (std::isfinite(plan.targetLoss)) {
        bool never = false;
        for (const PlanPoint& p : plan.points) never = never || (std::isfinite(p.timeToTargetS) && std::isinf(p.timeToTargetHighS));
        auto* chart = new QChart;
        styleChart(chart,
                   QObject::tr("Predicted training time to validation loss %1%2, %3%4")
                       .arg(formatNumber(plan.targetLoss), sub, planRangeName(),
                            never ? QObject::tr(" (upper end: never, not drawn)") : QString()));
        Plot plot(chart, Scale::Log10);
        addPredictions(
            plot, plan, [](const PlanPoint& p) { return p.timeToTargetS; }, [](const PlanPoint& p) { return p.timeToTargetLowS; },
            [](const PlanPoint& p) { return p.timeToTargetHighS; });
        measured(plot, [](const PlanPoint& p) { return p.measuredTimeToTargetS; });
        plot.finish(QObject::tr("Time to target (s)"), [](double lo, double hi) { return logTicks(lo, hi, 6); });
        charts << qMakePair(QStringLiteral("plan_time_to_target"), chart);
    }
    if (!plan.noiseByLoss.isEmpty()) {
        QList<double> planned;  // the global batches of the points predicted
        for (const PlanPoint& p : plan.points)
            if (std::isfinite(p.globalBatch) && p.notMeasured.isEmpty()) planned << p.globalBatch;
        charts << qMakePair(QStringLiteral("plan_noise_scale"), noiseScaleChart(plan.noiseByLoss, plan.runBatches, planned));
    }
    return charts;
}

namespace {

// The average epoch time per strategy (log), with the prediction's line and band when given.
QChart* epochTimeChart(const ScalingReport& rep, const Plan* prediction)
{
    auto* chart = new QChart;
    styleChart(chart, QStringLiteral("Average epoch time vs ranks") + gaps(rep));
    Plot plot(chart, Scale::Log10);
    addStrategyLines(
        plot, rep, true, [](const ReportGroupRow& g) { return g.epochS; }, [](const ReportGroupRow& g) { return g.epochSStd; });
    if (prediction)
        addPredictions(
            plot, *prediction, [](const PlanPoint& p) { return p.epochS; }, [](const PlanPoint& p) { return p.epochLowS; },
            [](const PlanPoint& p) { return p.epochHighS; });
    plot.finish(QStringLiteral("Epoch time (s)"), [](double lo, double hi) { return logTicks(lo, hi, 6); });
    return chart;
}

// Speedup against each strategy's smallest run, with the ideal n / n_min (base-2 axes).
QChart* speedupChart(const ScalingReport& rep)
{
    auto* chart = new QChart;
    styleChart(chart, QStringLiteral("Speedup of the average epoch time") + gaps(rep));
    Plot plot(chart, Scale::Log2);
    addStrategyLines(plot, rep, true, [](const ReportGroupRow& g) { return g.speedup; });
    // Ideal n / n_min from the smallest to the largest run, dashed in the reference colour.
    double lo = 1e300, hi = 0;
    for (const auto& g : rep.groups)
        if (std::isfinite(g.ideal) && g.ideal > 0) {
            lo = std::min(lo, g.world / g.ideal);
            hi = std::max(hi, double(g.world));
        }
    if (hi > 0 && !plot.empty()) {
        auto* ideal = plot.line(QStringLiteral("ideal (n / n_min)"), referenceColor(), Qt::DashLine, 1.5);
        plot.add(ideal, lo, 1);
        plot.add(ideal, hi, hi / lo);
    }
    plot.finish(QStringLiteral("Speedup (×)"), [](double lo, double hi) { return log2Ticks(lo, hi, 6, 3); });
    return chart;
}

// Scaling efficiency in percent, the 100 % line, and the prediction when given.
QChart* efficiencyChart(const ScalingReport& rep, const Plan* prediction)
{
    auto* chart = new QChart;
    styleChart(chart, QStringLiteral("Scaling efficiency") + gaps(rep));
    Plot plot(chart, Scale::Linear);
    addStrategyLines(plot, rep, false, [](const ReportGroupRow& g) { return 100 * g.efficiency; });
    if (prediction)
        addPredictions(
            plot, *prediction, [](const PlanPoint& p) { return 100 * p.efficiency; },
            [](const PlanPoint& p) { return 100 * p.efficiencyLow; }, [](const PlanPoint& p) { return 100 * p.efficiencyHigh; });
    if (!plot.empty()) {
        auto* full = plot.line(QStringLiteral("100 %"), referenceColor(), Qt::DashLine, 1);
        plot.add(full, plot.xlo(), 100);
        plot.add(full, plot.xhi(), 100);
    }
    plot.finish(QStringLiteral("Efficiency (%)"), [](double lo, double hi) {
        return linearTicks(std::min(0.0, lo), std::max(110.0, hi * 1.05), 6, AxisFit::Exact, lo >= 0);
    });
    return chart;
}

// Samples per second per strategy (log), each with its ideal from its smallest run.
QChart* throughputChart(const ScalingReport& rep)
{
    auto* chart = new QChart;
    styleChart(chart, QStringLiteral("Throughput") + gaps(rep));
    Plot plot(chart, Scale::Log10);
    addStrategyLines(plot, rep, true, [](const ReportGroupRow& g) { return g.throughput; });
    // The ideal of each strategy: its smallest run's throughput × n / n_min, dashed in its colour.
    for (const auto& [strategy, line] : byStrategy(rep)) {
        const ReportGroupRow* base = nullptr;
        for (const auto* g : line.rows)
            if (std::isfinite(g->throughput) && g->throughput > 0 && (!base || g->world < base->world)) base = g;
        if (!base || line.rows.size() < 2) continue;
        auto* ideal = plot.line(strategy + QStringLiteral(" ideal"), strategyColor(strategy), Qt::DashLine, 1);
        for (const auto* g : line.rows) plot.add(ideal, g->world, base->throughput * g->world / base->world);
    }
    const bool timed = std::any_of(rep.groups.begin(), rep.groups.end(), [](const ReportGroupRow& g) { return std::isfinite(g.epochS); });
    plot.finish(
        QStringLiteral("Samples per second"), [](double lo, double hi) { return logTicks(lo, hi, 6); },
        timed ? QStringLiteral("No samples per epoch: these runs do not record them") : QString());
    return chart;
}

// Stacked bars of the time breakdown, in percent of the epoch, labelled.
QChart* breakdownChart(const ScalingReport& rep)
{
    auto* chart = new QChart;
    styleChart(chart, QStringLiteral("Where an epoch's time goes (compare within a strategy)") + gaps(rep));
    auto* series = new QStackedBarSeries;
    // Training's parts, then validation: each a share of the whole epoch (training + validation).
    const QStringList parts{QStringLiteral("compute"), QStringLiteral("exposed communication"), QStringLiteral("data wait"),
                            QStringLiteral("other"), QStringLiteral("validation")};
    const QColor colors[] = {QColor(0x00, 0x72, 0xB2), QColor(0xD5, 0x5E, 0x00), QColor(0xCC, 0x79, 0xA7), QColor(0x99, 0x99, 0x99),
                             QColor(0xF0, 0xE4, 0x42)};
    QList<QBarSet*> sets;
    for (int i = 0; i < parts.size(); ++i) {
        auto* set = new QBarSet(parts[i]);
        set->setColor(colors[i]);
        set->setLabelColor(i == 4 ? QColor(0x33, 0x33, 0x33) : QColor(Qt::white));  // dark text on the yellow
        sets << set;
    }
    QStringList categories;
    bool anyPart = false;
    for (const auto& g : rep.groups) {
        if (!std::isfinite(g.epochS)) continue;
        categories << QStringLiteral("%1 · %2").arg(g.strategy).arg(g.world);
        const TimeShares t = timeShares(g, rep.includesValidation);  // report.md's shares, the one definition
        const double v[] = {t.compute, t.comm, t.data, t.other, t.validation};
        for (int i = 0; i < 5; ++i) {
            sets[i]->append(std::isfinite(v[i]) ? 100 * v[i] : 0);
            anyPart = anyPart || (std::isfinite(v[i]) && v[i] > 0);
        }
    }
    // Runs that time their epochs but not its parts (the user's own code, unless it says): say so.
    if (!categories.isEmpty() && !anyPart)
        centredNote(chart, QStringLiteral("These runs do not record where an epoch's time goes\n(compute, communication, data wait)"));
    for (auto* s : sets) series->append(s);
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    x->setTitleText(QStringLiteral("strategy · ranks"));
    if (categories.size() > 6) x->setLabelsAngle(-45);  // names are never cut: tilted when many
    labelSegmentsThatFit(chart, series);
    QCategoryAxis* y = tickedAxis(QStringLiteral("Share of the epoch (%)"), linearTicks(0, 100, 6, AxisFit::Exact, true), Scale::Linear);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    return chart;
}

// Time-to-target: one bar per group, by strategy colour; groups that never got there are named.
QChart* timeToTargetChart(const ScalingReport& rep)
{
    auto* chart = new QChart;
    if (std::isnan(rep.target)) {  // no run has a validation loss: no target to reach
        styleChart(chart, QStringLiteral("Time to a validation loss"));
        centredNote(chart, rep.groups.isEmpty() ? QStringLiteral("No data yet") : QStringLiteral("No run recorded a validation loss"));
        return chart;
    }
    QStringList never;
    auto* series = new QBarSeries;
    QStringList categories;
    std::map<QString, QBarSet*> sets;
    for (const auto& g : rep.groups)
        if (!categories.contains(ranksLabel(g.world))) categories << ranksLabel(g.world);
    for (const auto& g : rep.groups) {
        QBarSet*& set = sets[g.strategy];
        if (!set) {
            set = new QBarSet(g.strategy);
            set->setColor(strategyColor(g.strategy));
            set->setLabelColor(QColor(0x33, 0x33, 0x33));
            for (int i = 0; i < categories.size(); ++i) set->append(0);
        }
        if (g.reachedTarget > 0)
            set->replace(int(categories.indexOf(ranksLabel(g.world))), g.timeToTargetS);
        else
            never << QStringLiteral("%1 at %2 ranks").arg(g.strategy).arg(g.world);
    }
    for (auto& [name, set] : sets) series->append(set);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value s"));
    series->setLabelsPrecision(3);
    series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    chart->addSeries(series);
    styleChart(chart,
               QStringLiteral("Time to validation loss %1 (%2)")
                   .arg(formatNumber(rep.target), rep.targetGiven ? QStringLiteral("given") : QStringLiteral("every run reached it")));
    // Groups that never got there: named under the plot, where there is room for all of them.
    if (!never.isEmpty()) bottomNote(chart, QStringLiteral("Not reached: ") + never.join(QStringLiteral(", ")));
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    double top = 0;
    for (const auto& g : rep.groups)
        if (std::isfinite(g.timeToTargetS)) top = std::max(top, g.timeToTargetS);
    // Room above the tallest bar for its label.
    QCategoryAxis* y =
        tickedAxis(QStringLiteral("Wall time (s)"), linearTicks(0, top > 0 ? top * 1.12 : 1, 6, AxisFit::Extend, true), Scale::Linear);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    return chart;
}

}  // namespace

QList<QPair<QString, QChart*>> buildScalingCharts(const ScalingReport& rep, const Plan* prediction)
{
    QList<QPair<QString, QChart*>> charts{
        {QStringLiteral("epoch_time"), epochTimeChart(rep, prediction)},  {QStringLiteral("speedup"), speedupChart(rep)},
        {QStringLiteral("efficiency"), efficiencyChart(rep, prediction)}, {QStringLiteral("throughput"), throughputChart(rep)},
        {QStringLiteral("time_breakdown"), breakdownChart(rep)},          {QStringLiteral("time_to_target"), timeToTargetChart(rep)},
    };
    // Where the trainer measured it: the gradient noise scale against the loss and the sweep's batches.
    if (!rep.noiseByLoss.isEmpty())
        charts << qMakePair(QStringLiteral("noise_scale"), noiseScaleChart(rep.noiseByLoss, rep.globalBatches, {}));
    return charts;
}

}  // namespace scaledesk::gui
