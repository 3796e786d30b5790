#pragma once

#include <QMessageBox>
#include <QString>

namespace scaledesk::gui {

/// Text from elsewhere (a server, a command's output, a file) for a label that guesses its format
/// (QInputDialog's, QMessageBox's informative text): bounded and cleaned by shownText(), then
/// escaped, so markup in it shows as the characters it is and never as rich text or a link.
QString labelText(const QString& untrusted, qsizetype maxChars = 4000);

/// A message box whose text, from elsewhere, is shown as plain text (shownText()). `details`, when
/// not empty, goes under it (bounded too). Returns the button pressed.
QMessageBox::StandardButton plainMessage(QWidget* parent, QMessageBox::Icon icon, const QString& title, const QString& text,
                                         const QString& details = QString());

}  // namespace scaledesk::gui
