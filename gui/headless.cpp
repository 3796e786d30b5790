#include "headless.h"

#include "chartexport.h"
#include "scalingcharts.h"

#include <QChart>
#include <QDir>

namespace scaledesk::gui {

Status renderReportCharts(const ScalingReport& report, const QString& dir, const QStringList& formats, QStringList* written)
{
    if (!QDir().mkpath(dir)) return Error{QStringLiteral("export.io"), QStringLiteral("cannot create the folder"), dir};
    const auto charts = buildScalingCharts(report);
    Status result = Done{};
    for (const auto& [name, chart] : charts) {
        for (const QString& format : formats) {
            const QString path = QDir(dir).absoluteFilePath(name + QLatin1Char('.') + format);
            if (auto ok = exportChart(chart, path, QSize(1200, 800), 150); !ok) {
                result = ok.error();
                break;
            }
            if (written) *written << path;
        }
    }
    for (const auto& [name, chart] : charts) delete chart;
    return result;
}

CliHooks chartHooks()
{
    CliHooks h;
    h.renderReport = renderReportCharts;
    return h;
}

}  // namespace scaledesk::gui
