#pragma once

#include <QDialog>

class QLineEdit;
class QSpinBox;

namespace scaledesk::gui {

/// Preferences, kept with QSettings: the workspace the window opens (next start), and the live
/// poll intervals (while runs write; the longest wait while they are idle). The look follows the
/// system's theme, dark included; there is nothing to set for it.
class PreferencesDialog : public QDialog {
    Q_OBJECT
public:
    explicit PreferencesDialog(QWidget* parent = nullptr);
    void accept() override;

    static QString workspace();  ///< empty: the default
    static int activePollMs();   ///< default 1000
    static int maxIdlePollMs();  ///< default 30000

private:
    QLineEdit* m_workspace;
    QSpinBox* m_active;
    QSpinBox* m_idle;
};

}  // namespace scaledesk::gui
