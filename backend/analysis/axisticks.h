#pragma once

#include <QList>
#include <QString>
#include <QTimeZone>

namespace scaledesk {

/// One labelled tick of an axis, at a value in data units (for log axes: the value itself, not its
/// logarithm).
struct AxisTick {
    double value = 0;
    QString label;
};

/// What an axis shows: its range and its labelled ticks. `unit` names the unit the labels are in
/// where the axis chose it (durations: "s", "min" or "h"); the caller puts it in the axis title.
struct AxisTicks {
    double lo = 0, hi = 0;
    QList<AxisTick> ticks;
    QString unit;
    bool empty() const { return ticks.isEmpty(); }
    QStringList labels() const;
};

/// How the range is chosen from the data's range.
enum class AxisFit {
    Exact,   ///< the range is [lo, hi] as given (a zoom): ticks fall inside it
    Extend,  ///< the range grows to the enclosing ticks, as Qt's applyNiceNumbers() and matplotlib's round_numbers do
    Snug,    ///< ticks inside the data, the range out to the next fifth of a step (a half of a 2-step):
             ///< data ending at 65 with ticks every 50 ends at 70, not at 100
};

/// Ticks at 1-2-5 steps (Heckbert's "nice numbers", as matplotlib's MaxNLocator and Qt Charts'
/// applyNiceNumbers() choose them): at most `maxTicks` ticks, step 1, 2 or 5 × 10^k. Labels carry
/// the decimals of the step ("0.05", "0.10"), zero is "0", and values below 1e-3 or from 1e6 up
/// are written as mantissa and exponent ("2e-04"). `nonNegative` clamps the range at 0 for a
/// quantity that cannot be negative. An empty or non-finite range gives no ticks.
AxisTicks linearTicks(double lo, double hi, int maxTicks, AxisFit fit = AxisFit::Extend, bool nonNegative = false);

/// Ticks of a base-10 log axis (lo > 0): every decade; 2 and 5 of each decade too where fewer than
/// three decades are in range; where even that gives fewer than three ticks (a range within a
/// factor of ~2, such as 1.2–1.7), 1-2-5 ticks of the linear values, placed on the log scale.
/// Decades that would crowd past `maxTicks` are thinned to every 2nd, 3rd… decade.
AxisTicks logTicks(double lo, double hi, int maxTicks, AxisFit fit = AxisFit::Extend);

/// Ticks of a base-2 axis of rank or GPU counts (lo ≥ 1): every power of two, written as an integer
/// (1, 2, 4 … 1024, 2048), thinned to every 2nd, 4th… power past `maxTicks`. The range is widened
/// by a quarter of a power on each side, so end markers are not cut. Where fewer than `minTicks`
/// powers fall in range, 1-2-5 values instead (a value axis such as speedup asks for 3; a rank
/// axis keeps its 1 and 2).
AxisTicks log2Ticks(double lo, double hi, int maxTicks, int minTicks = 2);

/// Ticks of a duration axis in seconds (relative time): the unit is s below 2 minutes, min below
/// 2 hours and h above; steps are 1-2-5 in seconds, 1, 2, 5, 10, 15, 20, 30 in minutes and 1, 2, 3,
/// 6, 12, 24 … in hours. Labels are numbers in that unit; `unit` says which.
AxisTicks durationTicks(double lo, double hi, int maxTicks, AxisFit fit = AxisFit::Extend);

/// Ticks of a wall-clock axis of Unix seconds, as clock times in `zone`: steps of 1, 2, 5, 10, 15,
/// 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h or days, aligned to the clock. Labels are HH:mm
/// (HH:mm:ss for steps below a minute); the first tick and every tick on a new day carry the date
/// ("Dec 2 00:00").
AxisTicks clockTicks(double lo, double hi, int maxTicks, const QTimeZone& zone = QTimeZone::systemTimeZone());

/// A number for a person to read: at most `significant` significant digits, trailing zeros dropped,
/// plain below 1e6 and from 1e-4 up ("0.07207", "57.79", "12350", "1.796e+09", "3.2e-05"); "–"
/// for NaN, "∞"/"−∞" for infinities. CSV keeps full precision (csvNumber).
QString formatNumber(double value, int significant = 4);

/// A duration in seconds for a person to read: "850 ms", "42.3 s", "12.5 min", "3.25 h".
QString formatDuration(double seconds);

/// A relative change (a fraction) as a signed percentage to 3 significant digits: "+2.85 %",
/// "-20.9 %"; "–" for NaN.
QString formatChange(double fraction);

/// A value with its range, to the digits the range supports: the decimals that give the range's
/// half-width two significant digits ("94 % (79–100)", "1.32 s (1.08–1.57)", not "94.1 %
/// (79.37–100)"); a range too narrow to show at those digits is left out ("1.3 s"); `unit` follows
/// the value. NaN: "–".
QString formatWithRange(double value, double low, double high, const QString& unit = {});

}  // namespace scaledesk
