#include "scalingcharts.h"

#include "chartstyle.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <cmath>
#include <map>

namespace scaledesk::gui {

namespace {
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

QLogValueAxis* logAxis(const QString& title, double base, double lo, double hi)
{
    auto* a = new QLogValueAxis;
    a->setTitleText(title);
    a->setBase(base);
    a->setLabelFormat(QStringLiteral("%g"));
    a->setMinorTickCount(base == 2 ? 0 : 8);
    // A quarter of a power of margin around the data, widened to the enclosing whole powers so
    // at least two labelled ticks show (Qt labels only whole powers).
    const double margin = std::pow(base, 0.25);
    const double lb = std::log(lo) / std::log(base), hb = std::log(hi > lo ? hi : lo * base) / std::log(base);
    a->setRange(std::min(lo / margin, std::pow(base, std::floor(lb + 1e-9))) * (1 - 1e-9),
                std::max((hi > lo ? hi : lo * base) * margin, std::pow(base, std::ceil(hb - 1e-9))) * (1 + 1e-9));
    return a;
}

QLineSeries* addLine(QChart* chart, const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine, qreal width = 2)
{
    auto* s = new QLineSeries;
    s->setName(name);
    QPen pen(color);
    pen.setWidthF(width);
    pen.setStyle(style);
    s->setPen(pen);
    chart->addSeries(s);
    return s;
}

void attach(QChart* chart, QAbstractAxis* x, QAbstractAxis* y)
{
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries* s : chart->series()) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
}

QString gaps(const ScalingReport& rep)
{
    QStringList missing;
    for (const auto& g : rep.groups)
        if (!std::isfinite(g.epochS)) missing << QStringLiteral("%1 at %2 ranks").arg(g.strategy).arg(g.world);
    return missing.isEmpty() ? QString() : QStringLiteral(" — no data: ") + missing.join(QStringLiteral(", "));
}

// A line per strategy of value(g) against ranks, with markers; error bars from err(g) when given.
QChart* lineChart(const ScalingReport& rep, const QString& title, const QString& yTitle, bool logY, double yBase,
                  const std::function<double(const ReportGroupRow&)>& value, const std::function<double(const ReportGroupRow&)>& err = {})
{
    auto* chart = new QChart;
    styleChart(chart, title + gaps(rep));
    double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = -1e300;
    for (const auto& [strategy, line] : byStrategy(rep)) {
        const QColor c = strategyColor(strategy);
        auto* l = addLine(chart, strategy, c);
        auto* dots = new QScatterSeries;
        dots->setColor(c);
        dots->setBorderColor(c);
        dots->setMarkerSize(9);
        chart->addSeries(dots);
        for (const auto* g : line.rows) {
            const double v = value(*g);
            if (!std::isfinite(v) || (logY && v <= 0)) continue;
            l->append(g->world, v);
            dots->append(g->world, v);
            xlo = std::min(xlo, double(g->world));
            xhi = std::max(xhi, double(g->world));
            ylo = std::min(ylo, v);
            yhi = std::max(yhi, v);
            if (err) {
                const double e = err(*g);
                if (std::isfinite(e) && e > 0) {
                    auto* bar = addLine(chart, QString(), c, Qt::SolidLine, 1.5);
                    const double lo = logY ? std::max(v - e, v * 0.05) : v - e;
                    bar->append(g->world, lo);
                    bar->append(g->world, v + e);
                    ylo = std::min(ylo, lo);
                    yhi = std::max(yhi, v + e);
                }
            }
        }
    }
    if (xhi == 0) {  // no data at all
        xlo = 1;
        xhi = 2;
        ylo = 1;
        yhi = 2;
    }
    QAbstractAxis* x = logAxis(QStringLiteral("Ranks (GPUs or CPU ranks)"), 2, xlo, xhi);
    QAbstractAxis* y = nullptr;
    if (logY) {
        y = logAxis(yTitle, yBase, ylo, yhi);
    } else {
        auto* v = new QValueAxis;
        v->setTitleText(yTitle);
        v->setRange(0, std::max(1.1, yhi * 1.1));
        y = v;
    }
    attach(chart, x, y);
    for (QAbstractSeries* s : chart->series())
        if (s->name().isEmpty() || qobject_cast<QScatterSeries*>(s)) hideFromLegend(chart, s);
    return chart;
}
}  // namespace

QList<QPair<QString, QChart*>> buildScalingCharts(const ScalingReport& rep)
{
    QList<QPair<QString, QChart*>> charts;
    charts << qMakePair(QStringLiteral("epoch_time"),
                        lineChart(
                            rep, QStringLiteral("Average epoch time vs ranks"), QStringLiteral("Epoch time (s)"), true, 2,
                            [](const ReportGroupRow& g) { return g.epochS; }, [](const ReportGroupRow& g) { return g.epochSStd; }));

    QChart* speedup = lineChart(rep, QStringLiteral("Speedup of the average epoch time"), QStringLiteral("Speedup (×)"), true, 2,
                                [](const ReportGroupRow& g) { return g.speedup; });
    {
        // Ideal n / n_min from the smallest to the largest run, black and dashed.
        double lo = 1e300, hi = 0;
        for (const auto& g : rep.groups)
            if (std::isfinite(g.ideal)) {
                lo = std::min(lo, g.world / g.ideal);
                hi = std::max(hi, double(g.world));
            }
        if (hi > 0) {
            auto* ideal = addLine(speedup, QStringLiteral("ideal (n / n_min)"), Qt::black, Qt::DashLine, 1.5);
            ideal->append(lo, 1);
            ideal->append(hi, hi / lo);
            ideal->attachAxis(speedup->axes(Qt::Horizontal).first());
            ideal->attachAxis(speedup->axes(Qt::Vertical).first());
            auto* y = static_cast<QLogValueAxis*>(speedup->axes(Qt::Vertical).first());
            y->setMax(std::max(y->max(), std::pow(2, std::ceil(std::log2(hi / lo)))));
        }
    }
    charts << qMakePair(QStringLiteral("speedup"), speedup);

    QChart* eff = lineChart(rep, QStringLiteral("Scaling efficiency"), QStringLiteral("Efficiency (%)"), false, 0,
                            [](const ReportGroupRow& g) { return 100 * g.efficiency; });
    {
        auto* y = static_cast<QValueAxis*>(eff->axes(Qt::Vertical).first());
        y->setRange(0, 110);
        y->setLabelFormat(QStringLiteral("%d"));
        auto* x = static_cast<QLogValueAxis*>(eff->axes(Qt::Horizontal).first());
        auto* full = addLine(eff, QStringLiteral("100 %"), Qt::black, Qt::DashLine, 1);
        full->append(x->min(), 100);
        full->append(x->max(), 100);
        full->attachAxis(x);
        full->attachAxis(y);
    }
    charts << qMakePair(QStringLiteral("efficiency"), eff);

    QChart* thr = lineChart(rep, QStringLiteral("Throughput"), QStringLiteral("Samples per second"), true, 2,
                            [](const ReportGroupRow& g) { return g.throughput; });
    for (const auto& [strategy, line] : byStrategy(rep)) {
        const ReportGroupRow* base = nullptr;
        for (const auto* g : line.rows)
            if (!base || g->world < base->world) base = g;
        if (!base || line.rows.size() < 2) continue;
        auto* ideal = addLine(thr, strategy + QStringLiteral(" ideal"), strategyColor(strategy), Qt::DashLine, 1);
        for (const auto* g : line.rows) ideal->append(g->world, base->throughput * g->world / base->world);
        ideal->attachAxis(thr->axes(Qt::Horizontal).first());
        ideal->attachAxis(thr->axes(Qt::Vertical).first());
    }
    charts << qMakePair(QStringLiteral("throughput"), thr);

    // Stacked bars of the time breakdown, in percent of the epoch, labelled.
    {
        auto* chart = new QChart;
        styleChart(chart, QStringLiteral("Where an epoch's time goes (compare within a strategy)") + gaps(rep));
        auto* series = new QStackedBarSeries;
        const QStringList parts{QStringLiteral("compute"), QStringLiteral("exposed communication"), QStringLiteral("data wait"),
                                QStringLiteral("other")};
        const QColor colors[] = {QColor(0x00, 0x72, 0xB2), QColor(0xD5, 0x5E, 0x00), QColor(0xCC, 0x79, 0xA7), QColor(0x99, 0x99, 0x99)};
        QList<QBarSet*> sets;
        for (int i = 0; i < parts.size(); ++i) {
            auto* set = new QBarSet(parts[i]);
            set->setColor(colors[i]);
            set->setLabelColor(Qt::white);
            sets << set;
        }
        QStringList categories;
        for (const auto& g : rep.groups) {
            if (!std::isfinite(g.epochS)) continue;
            categories << QStringLiteral("%1\n%2 ranks").arg(g.strategy).arg(g.world);
            const double e = g.epochS;
            const double v[] = {g.computeS / e, g.commS / e, g.dataS / e, std::max(0.0, g.otherS / e)};
            for (int i = 0; i < 4; ++i) sets[i]->append(std::isfinite(v[i]) ? 100 * v[i] : 0);
        }
        for (auto* s : sets) series->append(s);
        series->setLabelsVisible(true);
        series->setLabelsFormat(QStringLiteral("@value %"));
        series->setLabelsPrecision(2);
        chart->addSeries(series);
        auto* x = new QBarCategoryAxis;
        x->append(categories);
        auto* y = new QValueAxis;
        y->setRange(0, 100);
        y->setTitleText(QStringLiteral("Share of the epoch (%)"));
        y->setLabelFormat(QStringLiteral("%d"));
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(x);
        series->attachAxis(y);
        charts << qMakePair(QStringLiteral("time_breakdown"), chart);
    }

    // Time-to-target: one bar per group, by strategy colour; groups that never got there are named.
    {
        auto* chart = new QChart;
        QStringList never;
        auto* series = new QBarSeries;
        QStringList categories;
        std::map<QString, QBarSet*> sets;
        for (const auto& g : rep.groups)
            if (!categories.contains(QStringLiteral("%1 ranks").arg(g.world))) categories << QStringLiteral("%1 ranks").arg(g.world);
        for (const auto& g : rep.groups) {
            QBarSet*& set = sets[g.strategy];
            if (!set) {
                set = new QBarSet(g.strategy);
                set->setColor(strategyColor(g.strategy));
                set->setLabelColor(QColor(0x33, 0x33, 0x33));
                for (int i = 0; i < categories.size(); ++i) set->append(0);
            }
            if (g.reachedTarget > 0)
                set->replace(int(categories.indexOf(QStringLiteral("%1 ranks").arg(g.world))), g.timeToTargetS);
            else
                never << QStringLiteral("%1 at %2 ranks").arg(g.strategy).arg(g.world);
        }
        for (auto& [name, set] : sets) series->append(set);
        series->setLabelsVisible(true);
        series->setLabelsFormat(QStringLiteral("@value s"));
        series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
        chart->addSeries(series);
        styleChart(chart,
                   QStringLiteral("Time to validation loss %1").arg(rep.target, 0, 'g', 5) +
                       (never.isEmpty() ? QString() : QStringLiteral(" — not reached: ") + never.join(QStringLiteral(", "))));
        auto* x = new QBarCategoryAxis;
        x->append(categories);
        auto* y = new QValueAxis;
        y->setTitleText(QStringLiteral("Wall time (s)"));
        double top = 1;
        for (const auto& g : rep.groups)
            if (std::isfinite(g.timeToTargetS)) top = std::max(top, g.timeToTargetS);
        y->setRange(0, top * 1.15);
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(x);
        series->attachAxis(y);
        charts << qMakePair(QStringLiteral("time_to_target"), chart);
    }
    return charts;
}

}  // namespace scaledesk::gui
