// scaledesk without the window (SCALEDESK_BUILD_GUI=OFF): the command line alone.
#include "cli/cli.h"

#include <QCoreApplication>

#include <cstdio>

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("scaledesk"));
    if (scaledesk::opensWindow(argc, argv)) {
        std::fprintf(stderr, "scaledesk: this build has no window (SCALEDESK_BUILD_GUI=OFF); see `scaledesk --help`\n");
        return 2;
    }
    return scaledesk::runCommandLine(argc, argv);
}
