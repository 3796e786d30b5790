#pragma once

#include <QString>
#include <QStringList>

namespace scaledesk {

/// Quotes one value for a POSIX shell: single quotes, with each ' written as '\''. Whatever the
/// value holds (spaces, $(...), backticks, ;, newlines, unicode), the shell sees it as one word.
QString shellQuote(const QString& value);

/// Quotes every word and joins them with spaces.
QString shellJoin(const QStringList& words);

}  // namespace scaledesk
