// Decimation never loses the min or max of any pixel column (checked against brute force on
// random data with spikes and NaNs, at full range and when zoomed); TensorBoard's EMA equals a
// reference computed here the way TensorBoard writes it.
#include "analysis/metrics.h"
#include "analysis/minmaxindex.h"

#include <QRandomGenerator>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace scaledesk;

namespace {
struct Brute {
    double min = std::numeric_limits<double>::quiet_NaN(), max = std::numeric_limits<double>::quiet_NaN();
    bool nonFinite = false;
    std::uint32_t count = 0;
};
// The points of each column by the same edges, the slow way.
Brute brute(const std::vector<double>& xs, const std::vector<double>& v, double lo, double hi, bool lastColumn)
{
    Brute b;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        if (xs[i] < lo || (lastColumn ? xs[i] > hi : xs[i] >= hi)) continue;
        ++b.count;
        if (!std::isfinite(v[i])) {
            b.nonFinite = true;
            continue;
        }
        if (!(v[i] >= b.min)) b.min = v[i];
        if (!(v[i] <= b.max)) b.max = v[i];
    }
    return b;
}
bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }
}  // namespace

class TestDecimation : public QObject {
    Q_OBJECT
private slots:
    void columnsKeepEveryMinAndMax_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("width");
        QTest::addColumn<double>("from");
        QTest::addColumn<double>("to");
        QTest::newRow("full range") << 200000 << 500 << 0.0 << 1.0;
        QTest::newRow("1% zoom") << 200000 << 500 << 0.4 << 0.41;
        QTest::newRow("odd sizes") << 99991 << 333 << 0.123 << 0.9;
        QTest::newRow("fewer points than 2x width: exact") << 700 << 500 << 0.0 << 1.0;
    }
    void columnsKeepEveryMinAndMax()
    {
        QFETCH(int, n);
        QFETCH(int, width);
        QFETCH(double, from);
        QFETCH(double, to);
        QRandomGenerator rng(42);
        std::vector<double> xs(static_cast<std::size_t>(n)), v(static_cast<std::size_t>(n));
        double x = 0;
        for (int i = 0; i < n; ++i) {
            x += rng.generateDouble() * 2.0 / n;  // uneven spacing
            xs[std::size_t(i)] = x;
            v[std::size_t(i)] = std::sin(i * 0.001) + rng.generateDouble() * 0.01;
            if (rng.bounded(5000) == 0) v[std::size_t(i)] = 100 + rng.generateDouble();  // spikes
            if (rng.bounded(7000) == 0) v[std::size_t(i)] = -100 - rng.generateDouble();
            if (rng.bounded(9000) == 0) v[std::size_t(i)] = std::numeric_limits<double>::quiet_NaN();
        }
        const double x0 = xs.front() + (xs.back() - xs.front()) * from, x1 = xs.front() + (xs.back() - xs.front()) * to;
        MinMaxIndex index;
        // Built as a live series would be: one append at a time.
        std::vector<double> grown;
        for (double value : v) {
            grown.push_back(value);
            index.appended(grown);
        }
        const auto cols = decimate(xs, v, index, x0, x1, width);
        std::size_t inRange = 0;
        for (double xi : xs) inRange += (xi >= x0 && xi <= x1);
        std::size_t counted = 0;
        for (const auto& c : cols) counted += c.count;
        QCOMPARE(counted, inRange);  // every point in exactly one column
        if (inRange <= std::size_t(2 * width)) {
            QCOMPARE(cols.size(), inRange);  // exact points
            return;
        }
        QVERIFY(int(cols.size()) <= width);
        const double w = (x1 - x0) / width;
        int checked = 0;
        double globalMax = -1e300, bruteMax = -1e300;
        for (int c = 0; c < width; ++c) {
            const Brute b = brute(xs, v, x0 + w * c, c + 1 == width ? x1 : x0 + w * (c + 1), c + 1 == width);
            if (b.count == 0) continue;
            const auto it = std::find_if(cols.begin(), cols.end(),
                                         [&](const Column& col) { return col.x0 >= x0 + w * c && col.x1 <= x0 + w * (c + 1) + 1e-12; });
            QVERIFY2(it != cols.end(), qPrintable(QStringLiteral("column %1 missing").arg(c)));
            QVERIFY2(same(it->min, b.min) && same(it->max, b.max),
                     qPrintable(QStringLiteral("column %1: %2..%3 vs %4..%5").arg(c).arg(it->min).arg(it->max).arg(b.min).arg(b.max)));
            QCOMPARE(it->nonFinite, b.nonFinite);
            QCOMPARE(it->count, b.count);
            if (std::isfinite(it->max)) globalMax = std::max(globalMax, it->max);
            if (std::isfinite(b.max)) bruteMax = std::max(bruteMax, b.max);
            ++checked;
        }
        QVERIFY(checked > width / 2);
        QCOMPARE(globalMax, bruteMax);
    }

    void seriesTruncationKeepsTheIndexRight()
    {
        Series s;
        for (int i = 0; i < 5000; ++i) s.append(i, i, i == 4000 ? 1e6 : i % 100);
        (void)s.index();                                    // built now, then kept up to date
        QCOMPARE(s.append(3990, 0, 5), std::size_t(1010));  // a resume from step 3990 drops the spike
        for (int i = 3991; i < 6000; ++i) s.append(i, i, 7);
        const auto r = s.index().range(s.values(), 0, s.size());
        QCOMPARE(r.max, 99.0);
        QCOMPARE(r.min, 0.0);
    }

    void neighboursExtendALineToTheEdges()
    {
        std::vector<double> xs{0, 1, 2, 3, 4, 5}, v{10, 11, 12, 13, 14, 15};
        MinMaxIndex index;
        index.rebuild(v);
        const auto cols = decimate(xs, v, index, 1.5, 3.5, 100, true);
        QCOMPARE(cols.size(), std::size_t(4));
        QCOMPARE(cols.front().x0, 1.0);
        QCOMPARE(cols.back().x0, 4.0);
    }

    // TensorBoard (vz_line_chart2/line-chart.ts): last = last * w + (1 - w) * y;
    // smoothed = last / (1 - w^numAccum), non-finite values passed through; constant data as is.
    void emaEqualsTensorBoardsFormula_data()
    {
        QTest::addColumn<double>("weight");
        QTest::newRow("0.6") << 0.6;
        QTest::newRow("0.9") << 0.9;
        QTest::newRow("0.999") << 0.999;
    }
    void emaEqualsTensorBoardsFormula()
    {
        QFETCH(double, weight);
        QRandomGenerator rng(7);
        std::vector<double> y(3000);
        for (auto& v : y) v = rng.generateDouble();
        y[10] = std::numeric_limits<double>::quiet_NaN();
        y[20] = std::numeric_limits<double>::infinity();
        const auto got = smoothTensorBoard(y, weight);
        double last = 0;
        int numAccum = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
            if (!std::isfinite(y[i])) {
                QVERIFY(!std::isfinite(got[i]));
                continue;
            }
            last = last * weight + (1 - weight) * y[i];
            ++numAccum;
            const double expect = last / (1 - std::pow(weight, numAccum));
            QVERIFY2(std::abs(got[i] - expect) <= 1e-12 * std::max(1.0, std::abs(expect)),
                     qPrintable(QStringLiteral("%1: %2 vs %3").arg(i).arg(got[i]).arg(expect)));
        }
        const std::vector<double> constant(50, 0.25);
        QCOMPARE(smoothTensorBoard(constant, weight), constant);
        QCOMPARE(smoothTensorBoard(y, 0.0).size(), y.size());
    }
};

QTEST_GUILESS_MAIN(TestDecimation)
#include "tst_decimation.moc"
