#pragma once

#include <QString>

namespace scaledesk {

/// Text that came from elsewhere (a server's keyboard-interactive prompt, a command's output, a
/// build log) made fit to show: terminal escape sequences (CSI, OSC) removed, other control
/// characters but newline and tab shown as U+FFFD, and at most `maxChars` characters kept, with
/// "… (N more characters)" after them. Windows show the result as plain text.
QString shownText(const QString& text, qsizetype maxChars = 4000);

}  // namespace scaledesk
