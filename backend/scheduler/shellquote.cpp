#include "scheduler/shellquote.h"

#include <QRegularExpression>

namespace scaledesk {

QString shellQuote(const QString& value)
{
    QString out;
    out.reserve(value.size() + 2);
    out += QLatin1Char('\'');
    for (const QChar c : value) {
        if (c == QLatin1Char('\''))
            out += QStringLiteral("'\\''");
        else
            out += c;
    }
    out += QLatin1Char('\'');
    return out;
}

QString shellWord(const QString& value)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
    return plain.match(value).hasMatch() ? value : shellQuote(value);
}

QString shellJoin(const QStringList& words)
{
    QStringList quoted;
    quoted.reserve(words.size());
    for (const auto& w : words) quoted << shellQuote(w);
    return quoted.join(QLatin1Char(' '));
}

}  // namespace scaledesk
