#include "views/welcomepanel.h"

#include "runs/deploy.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

namespace scaledesk::gui {

QString WelcomePanel::docsPage()
{
    const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/doc/scaledesk/docs/gui.md");
    if (QFileInfo::exists(installed)) return QDir::cleanPath(installed);
    const QString source = bundledTrainerSources() + QStringLiteral("/docs/gui.md");
    return QFileInfo::exists(source) ? source : QString();
}

WelcomePanel::WelcomePanel(QWidget* parent)
    : QWidget(parent), m_demo(new QPushButton(tr("Run the demo sweep on this machine"))), m_cluster(new QPushButton(tr("Add a cluster…"))),
      m_editor(new QPushButton(tr("Open the config editor"))), m_import(new QPushButton(tr("Import runs…")))
{
    auto* title = new QLabel(tr("<h2>Welcome to ScaleDesk</h2>"));
    auto* intro = new QLabel(
        tr("This workspace has no runs yet. Start with one of these; everything here is also in the menus and on the command line "
           "(<code>scaledesk --help</code>)."));
    intro->setWordWrap(true);
    auto explain = [](const QString& text) {
        auto* l = new QLabel(text);
        l->setWordWrap(true);
        l->setIndent(12);
        return l;
    };
    auto* box = new QWidget;
    box->setFixedWidth(620);  // word-wrapped text needs a width to take its height from
    auto* l = new QVBoxLayout(box);
    l->addWidget(title);
    l->addWidget(intro);
    l->addSpacing(12);
    l->addWidget(m_demo);
    l->addWidget(explain(tr("Four short trainings of the bundled U-Net (config <code>cpu-demo</code>): 1 and 2 ranks × DDP and fused "
                            "allreduce, one after the other, with their data made first. Their curves fill the Run tab as they train; "
                            "the scaling report is on the Scaling tab at the end. A few minutes on a laptop.")));
    l->addSpacing(8);
    l->addWidget(m_cluster);
    l->addWidget(explain(tr("Connect to a SLURM cluster over SSH: test the connection, read its partitions and accounts, put the "
                            "trainer there, and save a profile.")));
    l->addSpacing(8);
    l->addWidget(m_editor);
    l->addWidget(explain(tr("Edit the training configs (YAML, named configs with anchors); every config an edit touches is "
                            "checked as you type.")));
    l->addSpacing(8);
    l->addWidget(m_import);
    l->addWidget(explain(tr("Bring in runs made elsewhere, to compare against: a NERSC Python run folder (out.log and its "
                            "TensorBoard logs), any TensorBoard log folder, or a ScaleDesk run folder.")));
    l->addSpacing(12);
    const QString docs = docsPage();
    auto* link = new QLabel(
        docs.isEmpty() ? tr("The documentation is in the docs/ folder of ScaleDesk's sources.")
                       : tr("Documentation: <a href=\"%1\">%2</a>").arg(QUrl::fromLocalFile(docs).toString(), docs.toHtmlEscaped()));
    link->setObjectName(QStringLiteral("docsLink"));
    link->setOpenExternalLinks(true);
    link->setWordWrap(true);
    link->setTextInteractionFlags(Qt::TextBrowserInteraction);
    l->addWidget(link);
    // Centred by stretches, not by an alignment flag: word-wrapped text then gets the height of its
    // lines at the box's width (an aligned widget only gets its size hint).
    auto* row = new QHBoxLayout;
    row->addStretch(1);
    row->addWidget(box);
    row->addStretch(1);
    auto* outer = new QVBoxLayout(this);
    outer->addStretch(1);
    outer->addLayout(row);
    outer->addStretch(2);
    connect(m_demo, &QPushButton::clicked, this, &WelcomePanel::demoRequested);
    connect(m_cluster, &QPushButton::clicked, this, &WelcomePanel::addClusterRequested);
    connect(m_editor, &QPushButton::clicked, this, &WelcomePanel::editorRequested);
    connect(m_import, &QPushButton::clicked, this, &WelcomePanel::importRequested);
}

}  // namespace scaledesk::gui
