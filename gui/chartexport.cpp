#include "chartexport.h"

#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace scaledesk::gui {

Status exportChart(QChart* chart, const QString& path, QSize size, int dpi, const std::function<void()>& prepare)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg") && suffix != QLatin1String("pdf"))
        return Error{ErrorCode::ExportFormat, QStringLiteral("unknown image format '%1' (png, svg or pdf)").arg(suffix), path};
    // A view of its own, off screen, sized for the file; the chart goes back where it was.
    QGraphicsScene* previousScene = chart->scene();
    const QRectF previousGeometry = chart->geometry();
    if (dpi < 10 || size.width() < 16 || size.height() < 16)
        return Error{ErrorCode::ExportFormat,
                     QStringLiteral("size %1x%2 at %3 DPI is too small").arg(size.width()).arg(size.height()).arg(dpi), path};
    const double scale = dpi / 96.0;
    const QSizeF logical(size.width() / scale, size.height() / scale);
    QChartView view;
    view.setRenderHint(QPainter::Antialiasing);
    view.setFrameShape(QFrame::NoFrame);
    view.setChart(chart);
    view.resize(logical.toSize());
    chart->resize(logical);
    if (chart->layout()) chart->layout()->activate();  // the plot area now, not at the next event
    view.scene()->setSceneRect(QRectF(QPointF(0, 0), logical));
    if (prepare) prepare();

    QByteArray bytes;
    if (suffix == QLatin1String("png")) {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        image.setDotsPerMeterX(int(dpi / 0.0254));
        image.setDotsPerMeterY(int(dpi / 0.0254));
        QPainter p(&image);
        p.setRenderHint(QPainter::Antialiasing);
        view.scene()->render(&p, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), logical));
        p.end();
        QBuffer buf(&bytes);
        buf.open(QIODevice::WriteOnly);
        image.save(&buf, "PNG");
    } else if (suffix == QLatin1String("svg")) {
        QBuffer buf(&bytes);
        QSvgGenerator svg;
        svg.setOutputDevice(&buf);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(chart->title());
        svg.setResolution(dpi);
        QPainter p(&svg);
        view.scene()->render(&p, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), logical));
        p.end();
    } else {
        QBuffer buf(&bytes);
        buf.open(QIODevice::WriteOnly);
        QPdfWriter pdf(&buf);
        pdf.setResolution(dpi);
        pdf.setPageSize(QPageSize(QSizeF(size.width() * 72.0 / dpi, size.height() * 72.0 / dpi), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setTitle(chart->title());
        QPainter p(&pdf);
        view.scene()->render(&p, QRectF(QPointF(0, 0), QSizeF(pdf.width(), pdf.height())), QRectF(QPointF(0, 0), logical));
        p.end();
    }
    view.setChart(new QChart);  // the view must not delete the caller's chart
    if (previousScene && previousScene != chart->scene()) previousScene->addItem(chart);
    chart->setGeometry(previousGeometry);

    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly)) return Error{ErrorCode::ExportIo, out.errorString(), path};
    out.write(bytes);
    if (!out.commit()) return Error{ErrorCode::ExportIo, QStringLiteral("cannot write: ") + out.errorString(), path};
    return Done{};
}

}  // namespace scaledesk::gui
