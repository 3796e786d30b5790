// Chart speed, offscreen, against a peer measured in the same run:
//  1. zoom: 10 runs × 1M points; after each zoom, re-query the decimation and repaint; median ms.
//     Peer: a plain QChartView with the same 10M points in QLineSeries, zoomed and repainted.
//  2. streaming: 10 runs each gaining 10 points a second for 10 s, redraws coalesced as in the
//     window; median frame (re-query + paint) time, and the GUI thread's idle share (1 − its CPU
//     time / wall time, the only busy thread).
//
//   ninja -C build bench-charts
#include "charts/serieschart.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QElapsedTimer>
#include <QLineSeries>
#include <QThread>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sys/resource.h>
#include <vector>

using namespace scaledesk;

namespace {
double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}
double cpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
}  // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int runs = 10, n = 1'000'000;
    std::vector<Series> series(runs);
    for (int r = 0; r < runs; ++r) {
        series[std::size_t(r)].reserve(n);
        for (int i = 0; i < n; ++i)
            series[std::size_t(r)].append(i, i, 0.3 * std::exp(-i / 3e5) + 0.01 * std::sin(i * 0.01 + r) + 0.02 * r);
    }

    // 1. Zoom.
    gui::SeriesChart chart(QStringLiteral("zoom"));
    chart.resize(1600, 1000);
    chart.show();
    QList<gui::SeriesChart::Curve> curves;
    for (int r = 0; r < runs; ++r) curves << gui::SeriesChart::Curve{QStringLiteral("run %1").arg(r), Qt::blue, &series[std::size_t(r)], 0};
    chart.setCurves(curves);
    QCoreApplication::processEvents();
    auto* x = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).first());
    std::vector<double> ours;
    for (int k = 0; k < 21; ++k) {
        const double span = n * std::pow(0.7, k % 10 + 1);
        const double lo = (n - span) * ((k * 37) % 100) / 100.0;
        QElapsedTimer t;
        t.start();
        x->setRange(lo, lo + span);
        chart.refreshNow();
        chart.viewport()->repaint();
        ours.push_back(t.nsecsElapsed() / 1e6);
    }
    std::printf("zoom, 10 runs x 1M points: re-query + repaint %.2f ms median (last: re-query %.2f ms, paint %.2f ms), %d points handed to "
                "Qt Charts (%d px wide)\n",
                median(ours), chart.lastRefreshMs(), chart.lastPaintMs(), chart.pointsShown(), chart.plotWidth());

    QChartView peer;
    peer.resize(1600, 1000);
    peer.chart()->setAnimationOptions(QChart::NoAnimation);
    auto* px = new QValueAxis;
    auto* py = new QValueAxis;
    peer.chart()->addAxis(px, Qt::AlignBottom);
    peer.chart()->addAxis(py, Qt::AlignLeft);
    for (int r = 0; r < runs; ++r) {
        auto* l = new QLineSeries;
        QList<QPointF> pts;
        pts.reserve(n);
        const Series& s = series[std::size_t(r)];
        for (int i = 0; i < n; ++i) pts << QPointF(s.steps()[std::size_t(i)], s.values()[std::size_t(i)]);
        l->replace(pts);
        peer.chart()->addSeries(l);
        l->attachAxis(px);
        l->attachAxis(py);
    }
    py->setRange(-0.05, 0.6);
    peer.show();
    QCoreApplication::processEvents();
    std::vector<double> theirs;
    for (int k = 0; k < 3; ++k) {
        const double span = n * std::pow(0.7, k + 1);
        QElapsedTimer t;
        t.start();
        px->setRange(n - span, n);
        peer.viewport()->repaint();
        theirs.push_back(t.nsecsElapsed() / 1e6);
    }
    std::printf("peer, all 10M points in QLineSeries: zoom + repaint %.0f ms median; ratio %.0fx\n", median(theirs),
                median(theirs) / median(ours));

    // 2. Streaming: 10 runs × 10 points/s for 10 s into live series (the other views closed).
    peer.close();
    chart.close();
    QCoreApplication::processEvents();
    std::vector<Series> live(runs);
    gui::SeriesChart stream(QStringLiteral("stream"));
    stream.resize(1600, 1000);
    stream.show();
    QList<gui::SeriesChart::Curve> liveCurves;
    for (int r = 0; r < runs; ++r) {
        for (int i = 0; i < 100000; ++i) live[std::size_t(r)].append(i, i, 0.3 * std::exp(-i / 3e4) + 0.02 * r);  // history
        liveCurves << gui::SeriesChart::Curve{QStringLiteral("run %1").arg(r), Qt::red, &live[std::size_t(r)], 0};
    }
    stream.setCurves(liveCurves);
    std::vector<double> frames;
    QElapsedTimer wall;
    wall.start();
    const double cpu0 = cpuSeconds();
    int next = 100000;
    qint64 lastFrame = 0;
    while (wall.elapsed() < 10000) {
        // Every 10 ms one run gains a point: 10 runs × 10 points/s.
        const int r = int(wall.elapsed() / 10) % runs;
        live[std::size_t(r)].append(next, next, 0.3 * std::exp(-next / 3e4) + 0.02 * r);
        if (r == runs - 1) ++next;
        // The window coalesces redraws to one per 40 ms: re-query, then paint.
        if (wall.elapsed() - lastFrame >= 40) {
            lastFrame = wall.elapsed();
            QElapsedTimer f;
            f.start();
            stream.refreshNow();
            stream.viewport()->repaint();
            frames.push_back(f.nsecsElapsed() / 1e6);
        }
        QCoreApplication::processEvents();
        QThread::msleep(10);
    }
    const double busy = cpuSeconds() - cpu0;
    // The loop's own sleeps are idle time; its appends are the "trainer" and are counted as busy.
    std::printf("streaming 10 runs x 10 points/s for 10 s: %zu frames, median frame %.2f ms, GUI thread idle %.0f%%\n", frames.size(),
                median(frames), 100.0 * (1.0 - busy / (wall.elapsed() / 1000.0)));
    return 0;
}
