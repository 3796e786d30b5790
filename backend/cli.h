#pragma once

namespace scaledesk {

/// The headless `scaledesk` commands (profiles, deploy, submit, status, cancel, requeue, runs).
/// Needs a QCoreApplication (or QApplication); returns the process exit code: 0 success, 1 a
/// failure that was reported, 2 a usage error.
int runCommandLine(int argc, char** argv);

/// True when argv names one of those commands (so a GUI main knows to stay headless).
bool isHeadlessCommand(int argc, char** argv);

}  // namespace scaledesk
