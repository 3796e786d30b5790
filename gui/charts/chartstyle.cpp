#include "charts/chartstyle.h"

#include <QApplication>
#include <QChart>
#include <QCryptographicHash>
#include <QFontMetricsF>
#include <QLegend>
#include <QPalette>
#include <QResizeEvent>

namespace scaledesk::gui {

namespace {
// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
const QColor kPalette[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73), QColor(0xCC, 0x79, 0xA7),
                           QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00), QColor(0xF0, 0xE4, 0x42), QColor(0x55, 0x55, 0x55)};

int stableIndex(const QString& key)
{
    const QByteArray h = QCryptographicHash::hash(key.toUtf8(), QCryptographicHash::Sha1);
    return int(static_cast<unsigned char>(h[0])) % int(std::size(kPalette));
}
}  // namespace

QColor strategyColor(const QString& strategy)
{
    if (strategy == QLatin1String("ddp")) return kPalette[0];
    if (strategy == QLatin1String("fused")) return kPalette[1];
    if (strategy == QLatin1String("zero1")) return kPalette[2];
    // itwinai's strategies, apart from the blue of ddp they are often plotted beside.
    if (strategy == QLatin1String("horovod")) return kPalette[5];
    if (strategy == QLatin1String("deepspeed")) return kPalette[3];
    // Any other name: reddish purple, vermillion or sky blue (not yellow, faint on white, nor grey, "other").
    static const int others[] = {3, 5, 4};
    return kPalette[others[stableIndex(strategy) % 3]];
}

QColor runColor(const QString& runId) { return kPalette[stableIndex(runId) % 6]; }  // not yellow (faint on white) or grey ("other")

QColor compareColor(int index)
{
    // Yellow left out (faint on white); orange and vermillion kept apart.
    static const int order[] = {0, 5, 2, 3, 1, 4, 7};
    return kPalette[order[std::max(0, index) % int(std::size(order))]];
}

void styleLineLegend(QChart* chart)
{
    // Legend entries drawn like their series: a dashed ideal line is a dashed line, not a square.
    // (Bars keep filled squares: drawn "from the series" they come out hollow.)
    chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
}

QColor referenceColor()
{
    return QApplication::palette().color(QPalette::Window).lightness() < 128 ? QColor(0xe6, 0xe6, 0xe6) : QColor(Qt::black);
}

void styleChart(QChart* chart, const QString& title)
{
    // Follow the system: a dark window gets a dark chart. The theme first: it resets fonts.
    const QPalette pal = QApplication::palette();
    const bool dark = pal.color(QPalette::Window).lightness() < 128;
    chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(title);
    chart->setProperty("scaledeskFullTitle", title);
    chart->setAnimationOptions(QChart::NoAnimation);
    QFont f = chart->titleFont();
    f.setPointSizeF(11);
    f.setBold(true);
    chart->setTitleFont(f);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(6, 6, 6, 6));
}

QString fullChartTitle(const QChart* chart)
{
    const QVariant full = chart->property("scaledeskFullTitle");
    return full.isValid() ? full.toString() : chart->title();
}

QString fitChartTitle(QChart* chart, qreal width)
{
    const QString full = fullChartTitle(chart);
    const QFontMetricsF fm(chart->titleFont());
    const qreal room = width - chart->margins().left() - chart->margins().right() - 8;
    const QString shown = fm.horizontalAdvance(full) <= room ? full : fm.elidedText(full, Qt::ElideRight, std::max<qreal>(room, 40));
    if (chart->title() != shown) chart->setTitle(shown);
    return shown == full ? QString() : full;
}

void FittedChartView::resizeEvent(QResizeEvent* e)
{
    QChartView::resizeEvent(e);
    if (chart()) setToolTip(fitChartTitle(chart(), width()));
}

}  // namespace scaledesk::gui
