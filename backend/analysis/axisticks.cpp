#include "axisticks.h"

#include <QDateTime>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace scaledesk {

QStringList AxisTicks::labels() const
{
    QStringList out;
    for (const AxisTick& t : ticks) out << t.label;
    return out;
}

namespace {

bool usable(double lo, double hi) { return std::isfinite(lo) && std::isfinite(hi) && hi >= lo; }

// A range narrower than a billionth of its values is flat: its ticks would be multiples of a step
// far below a double's precision there (a plan's range of 7.595e-07 to 7.595e-07 × (1 + 1e-15)
// made 1e16 of them, and the plot ran out of memory).
bool flat(double lo, double hi) { return !(hi - lo > 1e-9 * std::max(std::abs(lo), std::abs(hi))); }

// The unit a Snug range rounds out to: a fifth of a 1- or 5-step, half of a 2-step.
double snugUnit(double step)
{
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    return std::abs(mantissa - 2.0) < 1e-6 ? step / 2 : step / 5;
}

// The range an axis of `step` gets for [lo, hi] (Snug: rounded out to snugUnit) and the first
// and last multiples of `step` it labels: inside the range (Exact, Snug) or enclosing it (Extend).
struct Multiples {
    double lo, hi, first, last;
};
Multiples multiplesOf(double lo, double hi, double step, AxisFit fit)
{
    if (fit == AxisFit::Snug) {
        const double unit = snugUnit(step);
        lo = std::floor(lo / unit + 1e-9) * unit;
        hi = std::ceil(hi / unit - 1e-9) * unit;
    }
    const double first = fit != AxisFit::Extend ? std::ceil(lo / step - 1e-9) : std::floor(lo / step + 1e-9);
    const double last = fit != AxisFit::Extend ? std::floor(hi / step + 1e-9) : std::ceil(hi / step - 1e-9);
    return {lo, hi, first, last};
}

// The number of ticks an axis of `step` gets for [lo, hi].
long tickCount(double lo, double hi, double step, AxisFit fit)
{
    const Multiples m = multiplesOf(lo, hi, step, fit);
    return long(m.last - m.first) + 1;
}

// The smallest step of `candidates` (ascending) that gives at most maxTicks ticks; the last if none.
double chooseStep(double lo, double hi, int maxTicks, AxisFit fit, const std::vector<double>& candidates)
{
    for (double s : candidates)
        if (tickCount(lo, hi, s, fit) <= maxTicks) return s;
    return candidates.back();
}

// 1, 2 and 5 × 10^k around the span (the steps of Qt Charts' applyNiceNumbers()).
std::vector<double> niceSteps(double span, int maxTicks)
{
    std::vector<double> out;
    const double rough = span / std::max(1, maxTicks - 1);
    const int k0 = int(std::floor(std::log10(rough))) - 1;
    for (int k = k0; k <= k0 + 3; ++k)
        for (double m : {1.0, 2.0, 5.0}) out.push_back(m * std::pow(10.0, k));
    return out;
}

// Decimals a label of a tick at a multiple of `step` needs ("0.05" for 0.05, "2.5" for 2.5).
int decimalsFor(double step)
{
    int d = 0;
    while (d < 15 && std::abs(step * std::pow(10.0, d) - std::round(step * std::pow(10.0, d))) > 1e-6 * step * std::pow(10.0, d)) ++d;
    return d;
}

// Labels of ticks at multiples of `step`: the step's decimals, zero as "0", mantissa and exponent
// for tiny or huge values.
void labelLinear(AxisTicks& out, double step)
{
    double biggest = 0;
    for (const AxisTick& t : out.ticks) biggest = std::max(biggest, std::abs(t.value));
    const bool sci = biggest >= 1e6 || (biggest > 0 && biggest < 1e-3);
    const int decimals = decimalsFor(step);
    const int sciDigits =
        sci && biggest > 0 ? std::max(0, int(std::floor(std::log10(biggest))) - int(std::floor(std::log10(step) + 1e-9))) : 0;
    for (AxisTick& t : out.ticks) {
        if (std::abs(t.value) < step * 1e-6) {
            t.value = 0;
            t.label = QStringLiteral("0");
        } else if (sci) {
            t.label = QString::number(t.value, 'e', std::min(sciDigits, 15));
        } else {
            t.label = QString::number(t.value, 'f', decimals);
        }
    }
}

AxisTicks ticksAtMultiples(double lo, double hi, double step, AxisFit fit)
{
    const Multiples m = multiplesOf(lo, hi, step, fit);
    AxisTicks out;
    // A bounded count: never a loop whose ++i no longer changes i.
    if (!(m.last - m.first < 10000)) return out;
    for (double i = m.first; i <= m.last; ++i) out.ticks << AxisTick{i * step, QString()};
    out.lo = fit != AxisFit::Extend ? m.lo : std::min(m.lo, m.first * step);
    out.hi = fit != AxisFit::Extend ? m.hi : std::max(m.hi, m.last * step);
    return out;
}

// A range of zero width gets some room: ±5 % of the value, or 1 around zero; never below zero
// when the value is not.
void widenFlat(double* lo, double* hi)
{
    if (!flat(*lo, *hi)) return;
    *hi = *lo;
    const double d = *lo == 0 ? 1 : std::abs(*lo) * 0.05;
    *lo = *lo >= 0 ? std::max(0.0, *lo - d) : *lo - d;
    *hi += d;
}

// Keeps every k-th tick (k the smallest that fits maxTicks), anchored so that 1 (10^0) stays.
void thin(AxisTicks& out, int maxTicks, const std::function<bool(const AxisTick&)>& anchor)
{
    if (out.ticks.size() <= maxTicks || maxTicks < 1) return;
    const qsizetype k = (out.ticks.size() + maxTicks - 1) / maxTicks;
    qsizetype at = 0;
    for (qsizetype i = 0; i < out.ticks.size(); ++i)
        if (anchor(out.ticks[i])) at = i % k;
    QList<AxisTick> kept;
    for (qsizetype i = 0; i < out.ticks.size(); ++i)
        if (i % k == at) kept << out.ticks[i];
    out.ticks = kept;
}

// A log axis with fewer than `minTicks` ticks in [lo, hi] (lo > 0) gets linear 1-2-5 values placed
// on it instead, at a finer step than `maxTicks` asks for where that gives too few.
void atLeastLinearTicks(AxisTicks& out, double lo, double hi, int maxTicks, int minTicks)
{
    for (int m = maxTicks; out.ticks.size() < minTicks && m <= maxTicks + 4; ++m) {
        AxisTicks lin = linearTicks(lo, hi, m, AxisFit::Exact);
        QList<AxisTick> positive;
        for (const AxisTick& t : lin.ticks)
            if (t.value > 0) positive << t;
        if (positive.size() > out.ticks.size()) out.ticks = positive;
    }
}

}  // namespace

AxisTicks linearTicks(double lo, double hi, int maxTicks, AxisFit fit, bool nonNegative)
{
    if (!usable(lo, hi)) return {};
    if (nonNegative) {
        lo = std::max(lo, 0.0);
        hi = std::max(hi, lo);
    }
    widenFlat(&lo, &hi);  // never below zero when lo is not: with lo ≥ 0 no tick or range end is negative
    maxTicks = std::max(2, maxTicks);
    const std::vector<double> steps = niceSteps(hi - lo, maxTicks);
    double step = chooseStep(lo, hi, maxTicks, fit, steps);
    // At least three labels on a value axis: the next finer step where the count gives fewer.
    for (auto it = std::find(steps.rbegin(), steps.rend(), step); tickCount(lo, hi, step, fit) < 3 && it != steps.rend(); ++it) step = *it;
    AxisTicks out = ticksAtMultiples(lo, hi, step, fit);
    labelLinear(out, step);
    return out;
}

AxisTicks logTicks(double lo, double hi, int maxTicks, AxisFit fit)
{
    if (!usable(lo, hi) || lo <= 0) return {};
    if (flat(lo, hi)) {
        hi = lo * 1.25;
        lo /= 1.25;
    }
    maxTicks = std::max(2, maxTicks);
    if (fit == AxisFit::Extend) {  // 5 % of the log span as margin, as matplotlib's autoscale
        const double m = std::pow(hi / lo, 0.05);
        lo /= m;
        hi *= m;
    }
    AxisTicks out;
    out.lo = lo;
    out.hi = hi;
    const int k0 = int(std::floor(std::log10(lo))), k1 = int(std::ceil(std::log10(hi)));
    auto collect = [&](std::initializer_list<double> mantissas) {
        QList<AxisTick> ticks;
        for (int k = k0; k <= k1; ++k)
            for (double m : mantissas) {
                const double v = m * std::pow(10.0, k);
                if (v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12)) ticks << AxisTick{v, formatNumber(v)};
            }
        return ticks;
    };
    out.ticks = collect({1.0});
    if (out.ticks.size() < 3) {
        out.ticks = collect({1.0, 2.0, 5.0});
        if (out.ticks.size() > maxTicks) out.ticks = collect({1.0});
    }
    thin(out, maxTicks, [](const AxisTick& t) { return std::abs(std::log10(t.value)) < 1e-9; });
    // Within a factor of a few: linear 1-2-5 values (a value axis has at least three labels).
    atLeastLinearTicks(out, lo, hi, maxTicks, 3);
    return out;
}

AxisTicks log2Ticks(double lo, double hi, int maxTicks, int minTicks)
{
    if (!usable(lo, hi) || lo <= 0) return {};
    if (flat(lo, hi)) {
        hi = lo * 2;
        lo /= 2;
    }
    maxTicks = std::max(2, maxTicks);
    AxisTicks out;
    out.lo = lo / std::pow(2.0, 0.25);
    out.hi = hi * std::pow(2.0, 0.25);
    for (int k = int(std::ceil(std::log2(out.lo) - 1e-9)); k <= int(std::floor(std::log2(out.hi) + 1e-9)); ++k) {
        const double v = std::ldexp(1.0, k);
        out.ticks << AxisTick{v, v >= 1 ? QString::number(qint64(v)) : formatNumber(v)};
    }
    thin(out, maxTicks, [](const AxisTick& t) { return t.value == 1; });
    // Fewer than `minTicks` powers of two (up to a doubling or so): linear 1-2-5 values.
    atLeastLinearTicks(out, out.lo, out.hi, maxTicks, minTicks);
    return out;
}

AxisTicks durationTicks(double lo, double hi, int maxTicks, AxisFit fit)
{
    if (!usable(lo, hi)) return {};
    widenFlat(&lo, &hi);
    maxTicks = std::max(2, maxTicks);
    const double biggest = std::max(std::abs(lo), std::abs(hi));
    const double unit = biggest < 120 ? 1 : biggest < 7200 ? 60 : 3600;
    const double l = lo / unit, h = hi / unit;
    // 1-2-5 below one unit; clock-like steps above it.
    std::vector<double> steps;
    for (double s : niceSteps(h - l, maxTicks))
        if (unit == 1 || s < 1) steps.push_back(s);
    const std::vector<double> whole =
        unit == 60 ? std::vector<double>{1, 2, 5, 10, 15, 20, 30, 60, 120} : std::vector<double>{1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 720};
    if (unit != 1)
        for (double s : whole) steps.push_back(s);
    std::sort(steps.begin(), steps.end());
    const double step = chooseStep(l, h, maxTicks, fit, steps);
    AxisTicks out = ticksAtMultiples(l, h, step, fit);
    labelLinear(out, step);
    for (AxisTick& t : out.ticks) t.value *= unit;
    out.lo *= unit;
    out.hi *= unit;
    out.unit = unit == 1 ? QStringLiteral("s") : unit == 60 ? QStringLiteral("min") : QStringLiteral("h");
    return out;
}

AxisTicks clockTicks(double lo, double hi, int maxTicks, const QTimeZone& zone)
{
    if (!usable(lo, hi)) return {};
    if (hi <= lo) {  // one instant: a minute around it
        lo -= 30;
        hi += 30;
    }
    maxTicks = std::max(2, maxTicks);
    static const std::vector<double> steps{1,   2,    5,    10,   15,    30,    60,    120,   300,    600,
                                           900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800};
    // Steps align to the local clock: shift by the zone's offset at the range's start.
    const double offset = zone.offsetFromUtc(QDateTime::fromSecsSinceEpoch(qint64(std::floor(lo)), zone));
    const double step = chooseStep(lo + offset, hi + offset, maxTicks, AxisFit::Exact, steps);
    AxisTicks out = ticksAtMultiples(lo + offset, hi + offset, step, AxisFit::Exact);
    out.lo = lo;
    out.hi = hi;
    QDate lastDay;
    for (AxisTick& t : out.ticks) {
        t.value -= offset;
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(qint64(std::llround(t.value * 1000)), zone);
        const QString clock = at.toString(step < 60 ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm"));
        if (step >= 86400)
            t.label = at.toString(QStringLiteral("MMM d"));
        else if (at.date() != lastDay)
            t.label = at.toString(QStringLiteral("MMM d ")) + clock;
        else
            t.label = clock;
        lastDay = at.date();
    }
    return out;
}

QString formatNumber(double value, int significant)
{
    if (std::isnan(value)) return QStringLiteral("–");
    if (std::isinf(value)) return value > 0 ? QStringLiteral("∞") : QStringLiteral("−∞");
    if (value == 0) return QStringLiteral("0");
    significant = std::clamp(significant, 1, 17);
    const double rounded = QString::number(value, 'g', significant).toDouble();
    const double a = std::abs(rounded);
    if (a >= 1e-4 && a < 1e6) {
        const int decimals = std::max(0, significant - 1 - int(std::floor(std::log10(a))));
        QString s = QString::number(rounded, 'f', decimals);
        if (s.contains(QLatin1Char('.'))) {
            while (s.endsWith(QLatin1Char('0'))) s.chop(1);
            if (s.endsWith(QLatin1Char('.'))) s.chop(1);
        }
        return s;
    }
    return QString::number(rounded, 'g', significant);
}

QString formatChange(double fraction)
{
    if (!std::isfinite(fraction)) return QStringLiteral("–");
    return QStringLiteral("%1%2 %").arg(fraction >= 0 ? QStringLiteral("+") : QString(), formatNumber(100 * fraction, 3));
}

QString formatDuration(double seconds)
{
    if (!std::isfinite(seconds)) return formatNumber(seconds);
    const double a = std::abs(seconds);
    if (a < 1) return formatNumber(seconds * 1000, 3) + QStringLiteral(" ms");
    if (a < 120) return formatNumber(seconds, 3) + QStringLiteral(" s");
    if (a < 7200) return formatNumber(seconds / 60, 3) + QStringLiteral(" min");
    return formatNumber(seconds / 3600, 3) + QStringLiteral(" h");
}

QString formatWithRange(double value, double low, double high, const QString& unit)
{
    if (!std::isfinite(value)) return formatNumber(value);
    const double half = (high - low) / 2;
    if (!(half > 0) || !std::isfinite(half)) return formatNumber(value, 3) + unit;
    const int decimals = std::clamp(1 - int(std::floor(std::log10(half))), 0, 6);
    auto at = [&](double x) { return QString::number(x, 'f', decimals); };
    if (at(low) == at(high)) return at(value) + unit;
    return QStringLiteral("%1%2 (%3–%4)").arg(at(value), unit, at(low), at(high));
}

}  // namespace scaledesk
