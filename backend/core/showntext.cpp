#include "core/showntext.h"

namespace scaledesk {

namespace {
constexpr char16_t kEsc = 0x1b;

// The end of the escape sequence that starts at `i` (an ESC): CSI ends at a final byte 0x40–0x7e,
// OSC (and the string commands DCS, PM, APC) at BEL or ESC \; any other escape is two characters.
qsizetype escapeEnd(const QString& s, qsizetype i)
{
    const qsizetype n = s.size();
    if (i + 1 >= n) return n;
    const char16_t kind = s[i + 1].unicode();
    if (kind == u'[') {
        qsizetype j = i + 2;
        while (j < n && !(s[j].unicode() >= 0x40 && s[j].unicode() <= 0x7e)) ++j;
        return j < n ? j + 1 : n;
    }
    if (kind == u']' || kind == u'P' || kind == u'^' || kind == u'_') {
        for (qsizetype j = i + 2; j < n; ++j) {
            if (s[j].unicode() == 0x07) return j + 1;
            if (s[j].unicode() == kEsc && j + 1 < n && s[j + 1] == u'\\') return j + 2;
        }
        return n;
    }
    return i + 2;
}
}  // namespace

QString shownText(const QString& text, qsizetype maxChars)
{
    QString out;
    out.reserve(std::min(text.size(), maxChars));
    qsizetype i = 0;
    for (; i < text.size() && out.size() < maxChars;) {
        const char16_t c = text[i].unicode();
        if (c == kEsc) {
            i = escapeEnd(text, i);
            continue;
        }
        if (c == u'\r' && i + 1 < text.size() && text[i + 1] == u'\n') {  // CRLF: one newline
            ++i;
            continue;
        }
        const bool control = (c < 0x20 && c != u'\n' && c != u'\t') || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029 ||
            (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
        out += control ? QChar(0xfffd) : text[i];
        ++i;
    }
    if (i < text.size()) out += QStringLiteral("… (%1 more characters)").arg(text.size() - i);
    return out;
}

}  // namespace scaledesk
