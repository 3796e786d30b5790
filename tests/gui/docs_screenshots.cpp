// docs_screenshots WORKSPACE OUTDIR: the pictures of docs/gui.md, taken of the real window on a
// workspace with the demo sweep (packaging/screenshots.sh makes one and runs this), in the light
// palette and again in a dark one (<name>-dark.png). Not a test: it asserts nothing, it draws.
#include "app/mainwindow.h"
#include "charts/serieschart.h"
#include "views/compareview.h"
#include "views/configeditor.h"
#include "views/runview.h"
#include "views/scalingview.h"
#include "views/welcomepanel.h"
#include "workspace/runlistmodel.h"
#include "workspace/workspacecontroller.h"

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QPalette>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include <cstdio>
#include <functional>

using namespace scaledesk;
using namespace scaledesk::gui;

namespace {
void waitUntil(const std::function<bool()>& done, int ms = 20000)
{
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    for (int i = 0; i < 10; ++i) QCoreApplication::processEvents(QEventLoop::AllEvents, 30);  // the last paints
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x3a));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::Highlight, QColor(0x2a, 0x82, 0xda));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3c, 0x3c));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    return p;
}

int shoot(const QString& workspace, const QString& out, const QString& suffix)
{
    WorkspaceController controller(workspace);
    MainWindow w(controller);
    w.resize(1400, 860);
    w.show();
    waitUntil([&] { return w.runModel()->rowCount() > 0; });
    if (w.runModel()->rowCount() == 0) {
        std::fprintf(stderr, "docs_screenshots: %s has no runs (run the demo first)\n", qPrintable(workspace));
        return 1;
    }
    auto save = [&](const QString& name) {
        const QString path = out + QLatin1Char('/') + name + suffix + QStringLiteral(".png");
        w.grab().save(path);
        std::printf("%s\n", qPrintable(path));
    };
    // Run: the 2-rank ddp run of the demo.
    QTableView* table = w.runTable();
    int row = 0;
    for (int r = 0; r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, 0).data(Qt::UserRole).toString().contains(QStringLiteral("ddp-1x2"))) row = r;
    table->selectRow(row);
    waitUntil([&] { return w.runView()->charts().first()->pointsShown() > 0; });
    save(QStringLiteral("run-view"));
    // Compare: every run of the sweep.
    table->selectAll();
    waitUntil([&] { return w.compareView()->runs().size() > 1 && w.compareView()->chart()->pointsShown() > 0; });
    save(QStringLiteral("compare-view"));
    // Scaling.
    w.tabs()->setCurrentWidget(w.scalingView());
    waitUntil([&] { return !w.scalingView()->report().runs.isEmpty(); });
    save(QStringLiteral("scaling-view"));
    // Scaling with the planner's prediction over the measured points.
    w.scalingView()->predictionBox()->setChecked(true);
    waitUntil([&] { return w.scalingView()->plan() != nullptr; });
    save(QStringLiteral("scaling-view-prediction"));
    w.scalingView()->predictionBox()->setChecked(false);
    // Config.
    w.tabs()->setCurrentWidget(w.configEditor());
    waitUntil([&] { return !w.configEditor()->validating(); }, 15000);
    save(QStringLiteral("config-editor"));
    return 0;
}

// A laptop's screen, 1280×800: the Run and Scaling tabs (the six charts in two columns, no
// horizontal scrolling) as they are at that size.
int shootLaptop(const QString& workspace, const QString& out)
{
    WorkspaceController controller(workspace);
    MainWindow w(controller);
    w.resize(1280, 800);
    w.show();
    waitUntil([&] { return w.runModel()->rowCount() > 0; });
    QTableView* table = w.runTable();
    for (int r = 0; r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, 0).data(Qt::UserRole).toString().contains(QStringLiteral("ddp-1x2"))) table->selectRow(r);
    waitUntil([&] { return w.runView()->charts().first()->pointsShown() > 0; });
    for (const auto& [name, tab] : {std::pair{QStringLiteral("run-view-1280x800"), static_cast<QWidget*>(w.runView())},
                                    std::pair{QStringLiteral("scaling-view-1280x800"), static_cast<QWidget*>(w.scalingView())}}) {
        w.tabs()->setCurrentWidget(tab);
        if (tab == w.scalingView()) waitUntil([&] { return !w.scalingView()->report().runs.isEmpty(); });
        const QString path = out + QLatin1Char('/') + name + QStringLiteral(".png");
        w.grab().save(path);
        std::printf("%s\n", qPrintable(path));
    }
    return 0;
}

int shootWelcome(const QString& out, const QString& suffix)
{
    QTemporaryDir empty;
    WorkspaceController controller(empty.path());
    MainWindow w(controller);
    w.resize(1400, 860);
    w.show();
    waitUntil([&] { return w.welcomeShown(); });
    const QString path = out + QStringLiteral("/welcome") + suffix + QStringLiteral(".png");
    w.grab().save(path);
    std::printf("%s\n", qPrintable(path));
    return 0;
}
}  // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleDesk-screenshots"));  // not the user's settings
    QSettings().clear();
    if (argc != 3) {
        std::fprintf(stderr, "usage: docs_screenshots WORKSPACE OUTDIR\n");
        return 2;
    }
    const QString workspace = QString::fromLocal8Bit(argv[1]), out = QString::fromLocal8Bit(argv[2]);
    QDir().mkpath(out);
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    const QPalette light = QApplication::style()->standardPalette();
    for (const auto& [palette, suffix] : {std::pair{light, QString()}, std::pair{darkPalette(), QStringLiteral("-dark")}}) {
        QApplication::setPalette(palette);
        if (int rc = shoot(workspace, out, suffix); rc != 0) return rc;
        if (int rc = shootWelcome(out, suffix); rc != 0) return rc;
        QSettings().clear();
    }
    QApplication::setPalette(light);
    return shootLaptop(workspace, out);
}
