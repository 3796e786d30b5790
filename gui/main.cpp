// scaledesk: the window, or with a subcommand (`submit`, `status`, `report`, `demo`, …) the
// headless command line. A thin main: everything lives in the gui and backend libraries.
#include "cli/cli.h"

#ifdef SCALEDESK_HAVE_GUI
#include "headless.h"
#include "mainwindow.h"
#include "preferencesdialog.h"
#include "runs/runstore.h"
#include "workspacecontroller.h"

#include <QApplication>
#include <QIcon>
#endif

#include <QCoreApplication>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv)
{
#ifdef SCALEDESK_HAVE_GUI
    const bool display = qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
    if (scaledesk::isHeadlessCommand(argc, argv)) {
        // Charts render off screen; no window system is needed for a subcommand.
        if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        QApplication app(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("scaledesk"));
        return scaledesk::runCommandLine(argc, argv, scaledesk::gui::chartHooks());
    }
    if (!display && qEnvironmentVariable("QT_QPA_PLATFORM").isEmpty()) {
        std::fprintf(stderr, "scaledesk: no display; run `scaledesk demo` for the headless demo, or `scaledesk --help`\n");
        return 2;
    }
    QApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("scaledesk"));
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleDesk"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SCALEDESK_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("org.scaledesk.ScaleDesk"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/scaledesk.svg")));
    QString workspace = scaledesk::gui::PreferencesDialog::workspace();
    if (workspace.isEmpty()) workspace = scaledesk::Workspace::defaultRoot();
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--workspace") == 0) workspace = QString::fromLocal8Bit(argv[i + 1]);
    scaledesk::gui::WorkspaceController controller(workspace);
    scaledesk::gui::MainWindow window(controller);
    window.show();
    return app.exec();
#else
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("scaledesk"));
    return scaledesk::runCommandLine(argc, argv);
#endif
}
