#include "dialogs/preferencesdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSpinBox>

namespace scaledesk::gui {

PreferencesDialog::PreferencesDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Preferences"));
    auto* form = new QFormLayout(this);
    m_workspace = new QLineEdit(workspace());
    m_workspace->setPlaceholderText(tr("default ($SCALEDESK_HOME, else ~/.local/share/scaledesk)"));
    form->addRow(tr("Workspace (next start)"), m_workspace);
    m_active = new QSpinBox;
    m_active->setRange(200, 60000);
    m_active->setSuffix(tr(" ms"));
    m_active->setValue(activePollMs());
    form->addRow(tr("Poll interval while runs write"), m_active);
    m_idle = new QSpinBox;
    m_idle->setRange(1000, 600000);
    m_idle->setSuffix(tr(" ms"));
    m_idle->setValue(maxIdlePollMs());
    form->addRow(tr("Longest poll interval when idle"), m_idle);
    form->addRow(new QLabel(tr("Colours and dark mode follow the system theme.")));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &PreferencesDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

void PreferencesDialog::accept()
{
    QSettings s;
    s.setValue(QStringLiteral("workspace"), m_workspace->text());
    s.setValue(QStringLiteral("poll/activeMs"), m_active->value());
    s.setValue(QStringLiteral("poll/maxIdleMs"), std::max(m_idle->value(), m_active->value()));
    QDialog::accept();
}

QString PreferencesDialog::workspace() { return QSettings().value(QStringLiteral("workspace")).toString(); }
int PreferencesDialog::activePollMs() { return QSettings().value(QStringLiteral("poll/activeMs"), 1000).toInt(); }
int PreferencesDialog::maxIdlePollMs() { return QSettings().value(QStringLiteral("poll/maxIdleMs"), 30000).toInt(); }

}  // namespace scaledesk::gui
