#include "charts/chartexport.h"

#include "charts/chartstyle.h"

#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSettings>
#include <QSvgGenerator>

#include <cmath>

namespace scaledesk::gui {

namespace {

// The scene's rectangle (0,0)–logical drawn onto `size` pixels (PNG at `dpi`), an SVG of that size,
// or a one-page PDF at `dpi`.
QByteArray render(QGraphicsScene* scene, const QSizeF& logical, const QString& suffix, QSize size, int dpi, const QString& title)
{
    QByteArray bytes;
    if (suffix == QLatin1String("png")) {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        image.setDotsPerMeterX(int(dpi / 0.0254));
        image.setDotsPerMeterY(int(dpi / 0.0254));
        QPainter p(&image);
        p.setRenderHint(QPainter::Antialiasing);
        scene->render(&p, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), logical));
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
        svg.setTitle(title);
        svg.setResolution(dpi);
        QPainter p(&svg);
        scene->render(&p, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), logical));
        p.end();
    } else {
        QBuffer buf(&bytes);
        buf.open(QIODevice::WriteOnly);
        QPdfWriter pdf(&buf);
        pdf.setResolution(dpi);
        pdf.setPageSize(QPageSize(QSizeF(size.width() * 72.0 / dpi, size.height() * 72.0 / dpi), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setTitle(title);
        QPainter p(&pdf);
        scene->render(&p, QRectF(QPointF(0, 0), QSizeF(pdf.width(), pdf.height())), QRectF(QPointF(0, 0), logical));
        p.end();
    }
    return bytes;
}

Status save(const QByteArray& bytes, const QString& path)
{
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly)) return Error{ErrorCode::ExportIo, out.errorString(), path};
    out.write(bytes);
    if (!out.commit()) return Error{ErrorCode::ExportIo, QStringLiteral("cannot write: ") + out.errorString(), path};
    return Done{};
}

}  // namespace

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
    const QString shownTitle = chart->title();
    fitChartTitle(chart, logical.width());  // the file's width, not the window's
    if (prepare) prepare();

    const QByteArray bytes = render(view.scene(), logical, suffix, size, dpi, fullChartTitle(chart));
    chart->setTitle(shownTitle);
    view.setChart(new QChart);  // the view must not delete the caller's chart
    if (previousScene && previousScene != chart->scene()) previousScene->addItem(chart);
    chart->setGeometry(previousGeometry);

    return save(bytes, path);
}

Status exportChartPage(const QList<QChart*>& charts, const QString& title, const QStringList& notes, const QString& path, int dpi,
                       int columns, QSize cell)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg") && suffix != QLatin1String("pdf"))
        return Error{ErrorCode::ExportFormat, QStringLiteral("unknown image format '%1' (png, svg or pdf)").arg(suffix), path};
    if (dpi < 10 || columns < 1 || cell.width() < 16 || cell.height() < 16)
        return Error{ErrorCode::ExportFormat, QStringLiteral("a page needs at least one column, cells of 16 px and 10 DPI"), path};
    QGraphicsScene scene;
    scene.setBackgroundBrush(Qt::white);
    QFont headFont;
    headFont.setPointSizeF(14);
    headFont.setBold(true);
    QGraphicsSimpleTextItem* head = scene.addSimpleText(title, headFont);
    head->setPos(12, 8);
    const double top = head->boundingRect().height() + 16;
    const int rows = int((charts.size() + columns - 1) / columns);
    for (qsizetype i = 0; i < charts.size(); ++i) {
        QChart* c = charts[i];
        scene.addItem(c);
        c->setGeometry(QRectF(QPointF(double(i % columns) * cell.width(), top + double(i / columns) * cell.height()), cell));
        fitChartTitle(c, cell.width());
        if (c->layout()) c->layout()->activate();
    }
    double bottom = top + double(rows) * cell.height();
    if (!notes.isEmpty()) {
        auto* text = new QGraphicsTextItem;
        text->setTextWidth(double(columns) * cell.width() - 24);
        text->setPlainText(notes.join(QLatin1Char('\n')));
        text->setPos(12, bottom + 4);
        scene.addItem(text);
        bottom += text->boundingRect().height() + 12;
    }
    const QSizeF logical(double(columns) * cell.width(), bottom);
    scene.setSceneRect(QRectF(QPointF(0, 0), logical));
    const double scale = dpi / 96.0;
    const QSize size(int(std::lround(logical.width() * scale)), int(std::lround(logical.height() * scale)));
    const QByteArray bytes = render(&scene, logical, suffix, size, dpi, title);
    for (QChart* c : charts) scene.removeItem(c);  // the caller's: the scene must not delete them
    return save(bytes, path);
}

namespace {
QString& defaultExportFolder()
{
    static QString folder;
    return folder;
}
}  // namespace

void setDefaultExportFolder(const QString& folder) { defaultExportFolder() = folder; }

QString exportStartPath(const QString& fileName)
{
    QString folder = QSettings().value(QStringLiteral("export/lastFolder")).toString();
    if (folder.isEmpty() || !QFileInfo(folder).isDir()) {
        folder = defaultExportFolder();
        if (!folder.isEmpty()) QDir().mkpath(folder);
        if (folder.isEmpty() || !QFileInfo(folder).isDir()) folder = QDir::homePath();
    }
    return fileName.isEmpty() ? folder : QDir(folder).filePath(fileName);
}

void rememberExportPath(const QString& path, bool isFolder)
{
    if (path.isEmpty()) return;
    QSettings().setValue(QStringLiteral("export/lastFolder"), isFolder ? path : QFileInfo(path).absolutePath());
}

}  // namespace scaledesk::gui
