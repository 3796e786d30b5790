#pragma once

#include "core/error.h"

#include <QString>

#include <optional>

namespace scaledesk::cli {

/// One line to stdout (flushed: scripts and tests read it as it comes).
void out(const QString& line);
/// One line to stderr.
void err(const QString& line);
/// Reports `e` on stderr as "scaledesk: <location>: <message>"; returns exit code 1.
int fail(const Error& e);

/// Asks a question: through $SCALEDESK_ASKPASS (like SSH_ASKPASS) when set, else on the terminal
/// (without echo when `echo` is false); nothing when there is neither.
std::optional<QString> ask(const QString& prompt, bool echo);

}  // namespace scaledesk::cli
