#pragma once

#include "core/error.h"
#include "core/progress.h"

#include <QString>

#include <optional>

namespace scaledesk::cli {

/// One line to stdout (flushed: scripts and tests read it as it comes).
void out(const QString& line);
/// One line to stderr.
void err(const QString& line);
/// A step of long work. On a terminal (stderr a TTY): a line at the bottom redrawn in place, with a
/// bar when the amount is known, and lines that are not transient printed above it, as apt and
/// cargo do. Elsewhere (pipes, logs, tests): the lines that are not transient, as out() writes them.
/// out() and err() clear the bar first; progressDone() removes it.
void progress(const QString& prefix, const ProgressStep& step);
void progressDone();
/// Reports `e` on stderr as "scaledesk: <location>: <message>"; returns exit code 1.
int fail(const Error& e);
/// The same for a value a command line gave that cannot be used (a count that is not one, an
/// empty list item, options that contradict each other): exit code 2, as a usage error.
int usageFail(const Error& e);

/// While one lives, Ctrl-C (SIGINT) and SIGTERM only set a flag that interrupted() reads, so that
/// long work (a deploy's build on the far side) stops itself, cleans up and returns; a second
/// Ctrl-C ends the process at once (exit 130). The previous handlers come back when it goes.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
};
/// Whether Ctrl-C or SIGTERM came while an InterruptGuard lived.
bool interrupted();

/// Asks a question: through $SCALEDESK_ASKPASS (like SSH_ASKPASS) when set, else on the terminal
/// (without echo when `echo` is false); nothing when there is neither.
std::optional<QString> ask(const QString& prompt, bool echo);

}  // namespace scaledesk::cli
