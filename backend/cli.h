#pragma once

#include "transport.h"  // Status

#include <QStringList>

#include <functional>

namespace scaledesk {

struct ScalingReport;

/// What the command line cannot do without a window system and hands to whoever can (the
/// `scaledesk` program passes the GUI library's renderers; the tests may pass none).
struct CliHooks {
    /// Writes the report's plots into `dir` in each of `formats` (png, svg, pdf); the paths written
    /// go to `written`.
    std::function<Status(const ScalingReport& report, const QString& dir, const QStringList& formats, QStringList* written)> renderReport;
};

/// The headless `scaledesk` commands (profiles, deploy, submit, status, cancel, requeue, runs).
/// Needs a QCoreApplication (or QApplication); returns the process exit code: 0 success, 1 a
/// failure that was reported, 2 a usage error.
int runCommandLine(int argc, char** argv, const CliHooks& hooks = {});

/// True when argv names one of those commands (so a GUI main knows to stay headless).
bool isHeadlessCommand(int argc, char** argv);

}  // namespace scaledesk
