#include "charts/headless.h"

#include "analysis/comparison.h"
#include "charts/chartexport.h"
#include "charts/chartstyle.h"
#include "charts/scalingcharts.h"
#include "charts/serieschart.h"

#include <QChart>
#include <QDir>

namespace scaledesk::gui {

namespace {
// Each chart as <dir>/<name>.<format>; the charts are deleted.
Status exportCharts(const QList<QPair<QString, QChart*>>& charts, const QString& dir, const QStringList& formats, QStringList* written)
{
    Status result =
        QDir().mkpath(dir) ? Status(Done{}) : Status(Error{ErrorCode::ExportIo, QStringLiteral("cannot create the folder"), dir});
    for (const auto& [name, chart] : charts) {
        for (const QString& format : formats) {
            if (!result) break;
            const QString path = QDir(dir).absoluteFilePath(name + QLatin1Char('.') + format);
            result = exportChart(chart, path, QSize(1200, 800), 150);
            if (result && written) *written << path;
        }
    }
    for (const auto& [name, chart] : charts) delete chart;
    return result;
}
}  // namespace

Status renderPlanCharts(const Plan& plan, const QString& dir, const QStringList& formats, QStringList* written)
{
    return exportCharts(buildPlanCharts(plan), dir, formats, written);
}

Status renderReportCharts(const ScalingReport& report, const QString& dir, const QStringList& formats, QStringList* written,
                          const Plan* prediction)
{
    Status result = exportCharts(buildScalingCharts(report, prediction), dir, formats, written);
    // And all six on one page, with the warnings under them.
    for (const QString& format : formats) {
        if (!result) break;
        const QString path = QDir(dir).absoluteFilePath(QStringLiteral("scaling_report.") + format);
        result = renderReportPage(report, path, 150, prediction);
        if (result && written) *written << path;
    }
    return result;
}

Status renderReportPage(const ScalingReport& report, const QString& path, int dpi, const Plan* prediction)
{
    const auto charts = buildScalingCharts(report, prediction);
    QList<QChart*> list;
    for (const auto& [name, chart] : charts) list << chart;
    QStringList notes;
    for (const QString& w : report.warnings) notes << QStringLiteral("⚠ ") + w;
    if (prediction)
        for (const QString& w : prediction->warnings) notes << QStringLiteral("⚠ Prediction: ") + w;
    const Status ok = exportChartPage(list, QStringLiteral("Scaling report: %1").arg(report.sweep), notes, path, dpi);
    qDeleteAll(list);
    return ok;
}

Status renderSeriesChart(const std::vector<CompareRun>& runs, const QString& tag, XAxis axis, double smoothing, const QString& path)
{
    SeriesChart chart(tag);
    QList<SeriesChart::Curve> curves;
    QStringList ids;
    for (const CompareRun& r : runs) ids << r.record.id;
    const QStringList labels = distinguishingLabels(ids);  // as the Compare view labels and colours them
    for (std::size_t k = 0; k < runs.size(); ++k)
        curves << SeriesChart::Curve{labels[qsizetype(k)], compareColor(int(k)), runs[k].metrics.series(tag), runs[k].metrics.startTime(),
                                     runs[k].record.id};
    chart.resize(1600, 1000);
    chart.setYTitle(tag);
    chart.setCurves(curves);
    chart.setXAxis(axis);
    chart.setSmoothing(smoothing);
    chart.show();  // off screen: lays the plot area out so the decimation knows its width
    chart.resetZoom();
    return chart.exportTo(path);
}

CliHooks chartHooks()
{
    CliHooks h;
    h.renderReport = [](const ScalingReport& report, const QString& dir, const QStringList& formats, QStringList* written) {
        return renderReportCharts(report, dir, formats, written);
    };
    h.renderSeries = renderSeriesChart;
    h.renderPlan = renderPlanCharts;
    return h;
}

}  // namespace scaledesk::gui
