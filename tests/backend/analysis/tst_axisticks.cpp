// Axis ticks and number formats: the labels a person reads, for the ranges the charts showed wrong.
#include "analysis/axisticks.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace scaledesk;
using namespace Qt::StringLiterals;

class TestAxisTicks : public QObject {
    Q_OBJECT
private slots:
    void linear_data()
    {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<int>("maxTicks");
        QTest::addColumn<bool>("extend");
        QTest::addColumn<bool>("nonNegative");
        QTest::addColumn<QStringList>("labels");
        QTest::addColumn<double>("rangeLo");
        QTest::addColumn<double>("rangeHi");
        // The loss axis that read 0.2849 / 0.2265 / 0.05144.
        QTest::newRow("loss") << 0.05144 << 0.2849 << 6 << true << false
                              << QStringList{u"0.05"_s, u"0.10"_s, u"0.15"_s, u"0.20"_s, u"0.25"_s, u"0.30"_s} << 0.05 << 0.30;
        // The same, as a zoom (ticks inside the range, the range kept).
        QTest::newRow("loss zoomed") << 0.05144 << 0.2849 << 6 << false << false << QStringList{u"0.10"_s, u"0.15"_s, u"0.20"_s, u"0.25"_s}
                                     << 0.05144 << 0.2849;
        // The learning rate that went to "-4.999e-05": a non-negative axis starts at 0.
        QTest::newRow("learning rate") << -4.999e-05 << 0.00105 << 7 << true << true
                                       << QStringList{u"0"_s, u"0.0002"_s, u"0.0004"_s, u"0.0006"_s, u"0.0008"_s, u"0.0010"_s, u"0.0012"_s}
                                       << 0.0 << 0.0012;
        QTest::newRow("learning rate, few ticks")
            << 0.0 << 0.00105 << 6 << true << true << QStringList{u"0"_s, u"0.0005"_s, u"0.0010"_s, u"0.0015"_s} << 0.0 << 0.0015;
        // The zoomed step axis that read "18.41437947".
        QTest::newRow("step zoom") << 18.41437947 << 57.3 << 6 << false << false << QStringList{u"20"_s, u"30"_s, u"40"_s, u"50"_s}
                                   << 18.41437947 << 57.3;
        // Efficiency that read 0 / 27 / 55 / 82 / 110.
        QTest::newRow("efficiency") << 0.0 << 110.0 << 6 << false << true
                                    << QStringList{u"0"_s, u"20"_s, u"40"_s, u"60"_s, u"80"_s, u"100"_s} << 0.0 << 110.0;
        // Step time that reached -0.0036 s.
        QTest::newRow("step time") << 0.0012 << 0.0431 << 6 << true << true
                                   << QStringList{u"0"_s, u"0.01"_s, u"0.02"_s, u"0.03"_s, u"0.04"_s, u"0.05"_s} << 0.0 << 0.05;
        QTest::newRow("tiny values") << 0.0 << 0.00042 << 5 << true << true << QStringList{u"0"_s, u"2e-04"_s, u"4e-04"_s, u"6e-04"_s}
                                     << 0.0 << 0.0006;
        QTest::newRow("huge values") << 1.0e6 << 4.2e6 << 5 << true << false
                                     << QStringList{u"1e+06"_s, u"2e+06"_s, u"3e+06"_s, u"4e+06"_s, u"5e+06"_s} << 1e6 << 5e6;
        QTest::newRow("negative and positive") << -0.7 << 0.4 << 6 << true << false << QStringList{u"-1.0"_s, u"-0.5"_s, u"0"_s, u"0.5"_s}
                                               << -1.0 << 0.5;
        QTest::newRow("one value") << 3.0 << 3.0 << 6 << true << false << QStringList{u"2.8"_s, u"2.9"_s, u"3.0"_s, u"3.1"_s, u"3.2"_s}
                                   << 2.8 << 3.2;
    }
    void linear()
    {
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(int, maxTicks);
        QFETCH(bool, extend);
        QFETCH(bool, nonNegative);
        QFETCH(QStringList, labels);
        QFETCH(double, rangeLo);
        QFETCH(double, rangeHi);
        const AxisTicks t = linearTicks(lo, hi, maxTicks, extend ? AxisFit::Extend : AxisFit::Exact, nonNegative);
        QCOMPARE(t.labels(), labels);
        QVERIFY2(std::abs(t.lo - rangeLo) < 1e-12 && std::abs(t.hi - rangeHi) < 1e-12,
                 qPrintable(QStringLiteral("range %1–%2").arg(t.lo, 0, 'g', 17).arg(t.hi, 0, 'g', 17)));
        for (const AxisTick& tick : t.ticks) QVERIFY(tick.value >= t.lo - 1e-12 && tick.value <= t.hi + 1e-12);
    }

    // A step axis ends near the data (issue 34): 65 steps end at 70, not at the next labelled
    // tick 100; 128 at 130 (not 200); 16 at 16; ticks stay at 1-2-5 steps inside the range.
    // (65 at 3 ticks: 0, 50 would be two labels; the next finer step gives four.)
    void aStepAxisEndsNearTheData_data()
    {
        QTest::addColumn<double>("hi");
        QTest::addColumn<int>("maxTicks");
        QTest::addColumn<QStringList>("labels");
        QTest::addColumn<double>("rangeHi");
        QTest::newRow("65, 3 ticks") << 65.0 << 3 << QStringList{u"0"_s, u"20"_s, u"40"_s, u"60"_s} << 70.0;  // 3 labels at least
        QTest::newRow("65, 5 ticks") << 65.0 << 5 << QStringList{u"0"_s, u"20"_s, u"40"_s, u"60"_s} << 70.0;
        QTest::newRow("128, 3 ticks") << 128.0 << 3 << QStringList{u"0"_s, u"50"_s, u"100"_s} << 130.0;
        QTest::newRow("128, 6 ticks") << 128.0 << 6 << QStringList{u"0"_s, u"50"_s, u"100"_s} << 130.0;
        QTest::newRow("16, 6 ticks") << 16.0 << 6 << QStringList{u"0"_s, u"5"_s, u"10"_s, u"15"_s} << 16.0;
        QTest::newRow("1000, 6 ticks") << 1000.0 << 6 << QStringList{u"0"_s, u"200"_s, u"400"_s, u"600"_s, u"800"_s, u"1000"_s} << 1000.0;
    }
    void aStepAxisEndsNearTheData()
    {
        QFETCH(double, hi);
        QFETCH(int, maxTicks);
        QFETCH(QStringList, labels);
        QFETCH(double, rangeHi);
        const AxisTicks t = linearTicks(0, hi, maxTicks, AxisFit::Snug, true);
        QCOMPARE(t.labels(), labels);
        QCOMPARE(t.lo, 0.0);
        QCOMPARE(t.hi, rangeHi);
        QVERIFY(t.hi >= hi);
    }

    // Every value axis has at least 3 labelled ticks (issue 34: a Throughput axis read only "70"),
    // over ranges from one value to six decades, linear and log, at the tick counts charts ask for.
    void everyValueAxisHasThreeTicks()
    {
        int checked = 0;
        for (double lo : {0.013, 0.9, 1.0, 7.7, 58.0, 69.5, 70.0, 99.0, 640.0, 12345.0})
            for (double factor : {1.0, 1.001, 1.01, 1.05, 1.2, 1.5, 2.0, 3.0, 9.0, 30.0, 1e3, 1e6})
                for (int maxTicks : {3, 4, 6, 8}) {
                    const double hi = lo * factor;
                    const AxisTicks lg = logTicks(lo, hi, maxTicks);
                    QVERIFY2(
                        lg.ticks.size() >= 3,
                        qPrintable(QStringLiteral("log %1–%2, %3 ticks: %4").arg(lo).arg(hi).arg(maxTicks).arg(lg.labels().join(u", "_s))));
                    const AxisTicks ln = linearTicks(lo, hi, maxTicks, AxisFit::Extend, true);
                    QVERIFY2(
                        ln.ticks.size() >= 3,
                        qPrintable(
                            QStringLiteral("linear %1–%2, %3 ticks: %4").arg(lo).arg(hi).arg(maxTicks).arg(ln.labels().join(u", "_s))));
                    ++checked;
                }
        QCOMPARE(checked, 10 * 12 * 4);
        // Speedups on a base-2 value axis: 1–2 read "1, 2" alone before.
        for (double lo : {1.0, 1.2, 2.0, 3.7})
            for (double factor : {1.0, 1.1, 1.5, 2.0, 4.0, 64.0})
                for (int maxTicks : {3, 6, 8}) {
                    const AxisTicks t = log2Ticks(lo, lo * factor, maxTicks, 3);
                    QVERIFY2(t.ticks.size() >= 3,
                             qPrintable(QStringLiteral("log2 %1–%2, %3 ticks: %4")
                                            .arg(lo)
                                            .arg(lo * factor)
                                            .arg(maxTicks)
                                            .arg(t.labels().join(u", "_s))));
                }
    }

    void anEmptyChartHasNoTicks()
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        QVERIFY(linearTicks(nan, nan, 6).empty());
        QVERIFY(logTicks(nan, 1, 6).empty());
        QVERIFY(logTicks(0, 1, 6).empty());  // log of a range that starts at 0 has no ticks
        QVERIFY(log2Ticks(nan, nan, 6).empty());
        QVERIFY(durationTicks(nan, nan, 6).empty());
        QVERIFY(clockTicks(std::numeric_limits<double>::infinity(), 1, 6).empty());
        QVERIFY(linearTicks(2, 1, 6).empty());  // reversed
    }

    // A range narrower than a billionth of its values gets the ticks of a flat one. A plan's
    // node-hours band of a point measured exactly, nodeHours × low / epoch, came out one ulp above
    // nodeHours (7.430551890764988e-07): its ticks were multiples of a step below a double's
    // precision there, ++i stopped changing i, and `scaledesk plan` ran out of memory (std::bad_alloc).
    void aNearlyFlatRangeIsAFlatOne()
    {
        const double v = 7.430551890764988e-07;
        for (const double w : {std::nextafter(v, 1.0), v * (1 + 1e-15), v * (1 + 1e-11)}) {
            const AxisTicks t = logTicks(v, w, 6);
            QVERIFY2(t.ticks.size() >= 3 && t.ticks.size() <= 8, qPrintable(t.labels().join(u", "_s)));
            QVERIFY(t.lo < v && t.hi > w);
            QCOMPARE(t.labels(), logTicks(v, v, 6).labels());
        }
        const double w = std::nextafter(v, 1.0);
        QCOMPARE(log2Ticks(v, w, 6).labels(), log2Ticks(v, v, 6).labels());
        QCOMPARE(linearTicks(1e6, 1e6 + 1e-7, 6).labels(), linearTicks(1e6, 1e6, 6).labels());
        QVERIFY(linearTicks(1e6, 1e6 + 1e-7, 6).ticks.size() >= 3);
        QCOMPARE(durationTicks(2.73e-3, 2.73e-3 * (1 + 1e-14), 6).labels(), durationTicks(2.73e-3, 2.73e-3, 6).labels());
    }

    void logarithmic_data()
    {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<int>("maxTicks");
        QTest::addColumn<QStringList>("labels");
        // The epoch-time axis that showed 1 and 2 for values 1.2–1.7.
        QTest::newRow("epoch time 1.2–1.7") << 1.2 << 1.7 << 6 << QStringList{u"1.2"_s, u"1.3"_s, u"1.4"_s, u"1.5"_s, u"1.6"_s, u"1.7"_s};
        // Compare's log loss axis that showed only "0.1".
        QTest::newRow("loss 0.05–0.3") << 0.05 << 0.3 << 6 << QStringList{u"0.05"_s, u"0.1"_s, u"0.2"_s};
        // Throughput that showed 64 and 128.
        QTest::newRow("throughput 64–128") << 64.0 << 128.0 << 6 << QStringList{u"80"_s, u"100"_s, u"120"_s};
        QTest::newRow("three decades") << 0.03 << 50.0 << 6 << QStringList{u"0.1"_s, u"1"_s, u"10"_s};
        QTest::newRow("nine decades, thinned") << 1e-4 << 2e4 << 5 << QStringList{u"0.0001"_s, u"0.01"_s, u"1"_s, u"100"_s, u"10000"_s};
    }
    void logarithmic()
    {
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(int, maxTicks);
        QFETCH(QStringList, labels);
        const AxisTicks t = logTicks(lo, hi, maxTicks);
        QCOMPARE(t.labels(), labels);
        QVERIFY(t.lo <= lo && t.hi >= hi);  // every drawn value is inside
    }

    void ranksOnLog2()
    {
        const AxisTicks all = log2Ticks(1, 128, 8);
        QCOMPARE(all.labels(), (QStringList{u"1"_s, u"2"_s, u"4"_s, u"8"_s, u"16"_s, u"32"_s, u"64"_s, u"128"_s}));
        QVERIFY(all.lo < 1 && all.hi > 128);  // end markers are not cut
        QCOMPARE(log2Ticks(1, 128, 4).labels(), (QStringList{u"1"_s, u"4"_s, u"16"_s, u"64"_s}));
        QCOMPARE(log2Ticks(2, 2048, 6).labels(), (QStringList{u"2"_s, u"8"_s, u"32"_s, u"128"_s, u"512"_s, u"2048"_s}));
        QCOMPARE(log2Ticks(4, 4, 6).labels(), (QStringList{u"2"_s, u"4"_s, u"8"_s}));  // one point: a doubling each side
        // A speedup below one doubling gets 1-2-5 values rather than a lone tick.
        QCOMPARE(log2Ticks(1.1, 1.5, 6).labels(), (QStringList{u"1.0"_s, u"1.2"_s, u"1.4"_s, u"1.6"_s}));
    }

    void durations_data()
    {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<QStringList>("labels");
        QTest::addColumn<QString>("unit");
        // Relative time that read "0.08410000801".
        QTest::newRow("half a second") << 0.0 << 0.5 << QStringList{u"0"_s, u"0.1"_s, u"0.2"_s, u"0.3"_s, u"0.4"_s, u"0.5"_s} << u"s"_s;
        QTest::newRow("a minute") << 0.0 << 71.0 << QStringList{u"0"_s, u"20"_s, u"40"_s, u"60"_s, u"80"_s} << u"s"_s;
        QTest::newRow("25 minutes") << 0.0 << 1500.0 << QStringList{u"0"_s, u"5"_s, u"10"_s, u"15"_s, u"20"_s, u"25"_s} << u"min"_s;
        QTest::newRow("an hour and a half") << 0.0 << 5400.0 << QStringList{u"0"_s, u"20"_s, u"40"_s, u"60"_s, u"80"_s, u"100"_s}
                                            << u"min"_s;
        QTest::newRow("four hours") << 0.0 << 4 * 3600.0 + 600 << QStringList{u"0"_s, u"1"_s, u"2"_s, u"3"_s, u"4"_s, u"5"_s} << u"h"_s;
        QTest::newRow("three days") << 0.0 << 3 * 86400.0 << QStringList{u"0"_s, u"24"_s, u"48"_s, u"72"_s} << u"h"_s;
    }
    void durations()
    {
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(QStringList, labels);
        QFETCH(QString, unit);
        const AxisTicks t = durationTicks(lo, hi, 6);
        QCOMPARE(t.labels(), labels);
        QCOMPARE(t.unit, unit);
    }

    void wallClockAcrossMidnight()
    {
        // 23:47:10 to 00:21:40 UTC, the night of 1 to 2 December 2026: ticks every 10 minutes on the
        // clock, the date on the first tick and on the first tick of the new day.
        const double lo = QDateTime(QDate(2026, 12, 1), QTime(23, 47, 10), QTimeZone::utc()).toSecsSinceEpoch();
        const double hi = QDateTime(QDate(2026, 12, 2), QTime(0, 21, 40), QTimeZone::utc()).toSecsSinceEpoch();
        const AxisTicks utc = clockTicks(lo, hi, 6, QTimeZone::utc());
        QCOMPARE(utc.labels(), (QStringList{u"Dec 1 23:50"_s, u"Dec 2 00:00"_s, u"00:10"_s, u"00:20"_s}));
        QCOMPARE(utc.ticks[1].value, double(QDateTime(QDate(2026, 12, 2), QTime(0, 0), QTimeZone::utc()).toSecsSinceEpoch()));
        // One hour east, the same instants are 00:47–01:21 of 2 December; the ticks follow that clock.
        QCOMPARE(clockTicks(lo, hi, 6, QTimeZone(3600)).labels(), (QStringList{u"Dec 2 00:50"_s, u"01:00"_s, u"01:10"_s, u"01:20"_s}));
        // Seconds show when the step is below a minute.
        QCOMPARE(clockTicks(lo, lo + 40, 5, QTimeZone::utc()).labels(),
                 (QStringList{u"Dec 1 23:47:10"_s, u"23:47:20"_s, u"23:47:30"_s, u"23:47:40"_s, u"23:47:50"_s}));
        // Days show as dates.
        QCOMPARE(clockTicks(lo, lo + 3.5 * 86400, 5, QTimeZone::utc()).labels(),
                 (QStringList{u"Dec 2"_s, u"Dec 3"_s, u"Dec 4"_s, u"Dec 5"_s}));
    }

    void numbers_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        QTest::newRow("table loss") << 0.07206913875415921 << u"0.07207"_s;
        QTest::newRow("crosshair x") << 57.7939 << u"57.79"_s;
        QTest::newRow("crosshair y") << 0.143318 << u"0.1433"_s;
        QTest::newRow("unix seconds") << 1796114598.0 << u"1.796e+09"_s;
        QTest::newRow("five digits") << 12346.0 << u"12350"_s;
        QTest::newRow("negative") << -0.0036 << u"-0.0036"_s;
        QTest::newRow("tiny") << 3.2e-05 << u"3.2e-05"_s;
        QTest::newRow("whole") << 100.0 << u"100"_s;
        QTest::newRow("half") << 0.5 << u"0.5"_s;
        QTest::newRow("rounds up a digit") << 99999.9 << u"100000"_s;
        QTest::newRow("zero") << 0.0 << u"0"_s;
        QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN() << u"–"_s;
        QTest::newRow("infinity") << std::numeric_limits<double>::infinity() << u"∞"_s;
    }
    void numbers()
    {
        QFETCH(double, value);
        QFETCH(QString, text);
        QCOMPARE(formatNumber(value), text);
        // At most four significant digits, whatever the value.
        QString digits = text;
        digits.remove(QRegularExpression(QStringLiteral("e[+-]\\d+$")));
        digits.remove(QRegularExpression(QStringLiteral("[^0-9]")));
        digits.remove(QRegularExpression(QStringLiteral("^0+")));
        digits.remove(QRegularExpression(QStringLiteral("0+$")));
        QVERIFY2(digits.size() <= 4, qPrintable(text));
    }

    void durationsForPeople()
    {
        QCOMPARE(formatDuration(0.85), QStringLiteral("850 ms"));
        QCOMPARE(formatDuration(42.31), QStringLiteral("42.3 s"));
        QCOMPARE(formatDuration(750), QStringLiteral("12.5 min"));
        QCOMPARE(formatDuration(11700), QStringLiteral("3.25 h"));
    }

    // A value and its range to the digits the range supports (two significant digits of the
    // half-width), the range left out where it would not show (issue 36: no "99.7 % ± 0.05").
    void rangesShowTheDigitsTheySupport()
    {
        QCOMPARE(formatWithRange(94.1, 79.37, 100, QStringLiteral(" %")), QStringLiteral("94 % (79–100)"));
        QCOMPARE(formatWithRange(1.3218, 1.0812, 1.5734, QStringLiteral(" s")), QStringLiteral("1.32 s (1.08–1.57)"));
        QCOMPARE(formatWithRange(99.7, 99.68, 99.72, QStringLiteral(" %")), QStringLiteral("99.700 % (99.680–99.720)"));
        QCOMPARE(formatWithRange(0.13, 0.13, 0.13), QStringLiteral("0.13"));
        QCOMPARE(formatWithRange(1234.4, 900, 1600), QStringLiteral("1234 (900–1600)"));
        QCOMPARE(formatWithRange(std::nan(""), 1, 2), QStringLiteral("–"));
    }
};

QTEST_GUILESS_MAIN(TestAxisTicks)
#include "tst_axisticks.moc"
