#pragma once

#include <QWidget>

class QLabel;
class QPushButton;

namespace scaledesk::gui {

/// What an empty workspace shows first: run the demo sweep on this machine, add a cluster, open
/// the config editor, import runs made elsewhere, and where the documentation is.
class WelcomePanel : public QWidget {
    Q_OBJECT
public:
    explicit WelcomePanel(QWidget* parent = nullptr);
    QPushButton* demoButton() const { return m_demo; }
    QPushButton* clusterButton() const { return m_cluster; }
    QPushButton* editorButton() const { return m_editor; }
    QPushButton* importButton() const { return m_import; }
    /// The documentation's gui.md: installed (share/doc/scaledesk/docs) or in the source tree.
    static QString docsPage();

signals:
    void demoRequested();
    void addClusterRequested();
    void editorRequested();
    void importRequested();

private:
    QPushButton* m_demo;
    QPushButton* m_cluster;
    QPushButton* m_editor;
    QPushButton* m_import;
};

}  // namespace scaledesk::gui
