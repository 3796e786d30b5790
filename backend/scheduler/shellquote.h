#pragma once

#include <QString>
#include <QStringList>

namespace scaledesk {

/// Quotes one value for a POSIX shell: single quotes, with each ' written as '\''. Whatever the
/// value holds (spaces, $(...), backticks, ;, newlines, unicode), the shell sees it as one word.
QString shellQuote(const QString& value);

/// The value as a shell word for a command shown to a person: as it is where every character is
/// one the shell reads as itself (letters, digits and _ @ % + = : , . / -), else shellQuote()d.
QString shellWord(const QString& value);

/// Quotes every word and joins them with spaces.
QString shellJoin(const QStringList& words);

}  // namespace scaledesk
