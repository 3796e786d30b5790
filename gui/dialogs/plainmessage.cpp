#include "dialogs/plainmessage.h"

#include "core/showntext.h"

#include <QTextDocument>

namespace scaledesk::gui {

QString labelText(const QString& untrusted, qsizetype maxChars) { return Qt::convertFromPlainText(shownText(untrusted, maxChars)); }

QMessageBox::StandardButton plainMessage(QWidget* parent, QMessageBox::Icon icon, const QString& title, const QString& text,
                                         const QString& details)
{
    QMessageBox box(icon, title, QString(), QMessageBox::Ok, parent);
    box.setTextFormat(Qt::PlainText);
    box.setText(shownText(text));
    if (!details.isEmpty()) box.setInformativeText(labelText(details));
    return QMessageBox::StandardButton(box.exec());
}

}  // namespace scaledesk::gui
