#pragma once

// For the tests that check what an exported SVG says (axis titles, legends, warnings).

#include <QFile>
#include <QStringList>
#include <QXmlStreamReader>

/// The text of each <text> element of the SVG file at `path`, simplified, in document order. On
/// an unreadable file or malformed XML, `error` says why (it is cleared otherwise).
inline QStringList svgTexts(const QString& path, QString* error)
{
    error->clear();
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = path + QStringLiteral(": ") + file.errorString();
        return {};
    }
    QXmlStreamReader xml(&file);
    QStringList texts;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).simplified();
    if (xml.hasError()) *error = path + QStringLiteral(": ") + xml.errorString();
    return texts;
}
