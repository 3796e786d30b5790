// scaledesk: the headless commands (`scaledesk submit …`, `scaledesk status`, …) over the backend.
#include "cli.h"

#include <QCoreApplication>

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("scaledesk"));
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleDesk"));
    return scaledesk::runCommandLine(argc, argv);
}
