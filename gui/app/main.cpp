// scaledesk: the window, or with a command (`submit`, `status`, `report`, `demo`, …) the command
// line. A thin main: everything lives in the gui, cli and backend libraries.
#include "app/mainwindow.h"
#include "charts/headless.h"
#include "cli/cli.h"
#include "dialogs/preferencesdialog.h"
#include "runs/runstore.h"
#include "workspace/workspacecontroller.h"

#include <QApplication>
#include <QIcon>

#include <cstdio>
#include <cstring>

namespace {
QtMessageHandler g_qtMessages = nullptr;
// Two warnings Qt prints on every command where nothing is wrong and nothing can be done: the
// offscreen platform (the command line's charts, a window under QT_QPA_PLATFORM=offscreen) cannot
// pass size hints on, and a session without XDG_RUNTIME_DIR (ssh, cron, containers) gets Qt's
// fallback folder. Those lines are dropped; every other message goes where it went.
void dropOffscreenNoise(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    if (type == QtWarningMsg &&
        (message == QLatin1String("This plugin does not support propagateSizeHints()") ||
         message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set"))))
        return;
    if (g_qtMessages) g_qtMessages(type, context, message);
}
}  // namespace

int main(int argc, char** argv)
{
    g_qtMessages = qInstallMessageHandler(dropOffscreenNoise);
    if (!scaledesk::opensWindow(argc, argv)) {
        // Charts render off screen; no window system is needed for a command.
        if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        QApplication app(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("scaledesk"));
        return scaledesk::runCommandLine(argc, argv, scaledesk::gui::chartHooks());
    }
    const bool display = qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
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
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--workspace") == 0 && i + 1 < argc)
            workspace = QString::fromLocal8Bit(argv[i + 1]);
        else if (std::strncmp(argv[i], "--workspace=", 12) == 0)
            workspace = QString::fromLocal8Bit(argv[i] + 12);
    }
    scaledesk::gui::WorkspaceController controller(workspace);
    scaledesk::gui::MainWindow window(controller);
    window.show();
    return app.exec();
}
