// What the window's tests share: the headers, and a local run recorded through given states.
#pragma once

#include "analysis/axisticks.h"
#include "analysis/epochscsv.h"
#include "analysis/scalingreport.h"
#include "app/mainwindow.h"
#include "app/progresspanel.h"
#include "charts/chartexport.h"
#include "charts/chartstyle.h"
#include "charts/headless.h"
#include "charts/scalingcharts.h"
#include "charts/serieschart.h"
#include "dialogs/launchdialog.h"
#include "dialogs/plainmessage.h"
#include "dialogs/prompter.h"
#include "views/compareview.h"
#include "views/configeditor.h"
#include "views/runview.h"
#include "views/scalingview.h"
#include "views/welcomepanel.h"
#include "workspace/runlistmodel.h"
#include "workspace/workspacecontroller.h"

#include "../common/svgtexts.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDate>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QImage>
#include <QInputDialog>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPalette>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QValueAxis>
#include <QXYSeries>

#include <cmath>

namespace scaledesk::gui::test {

// A ddp run of the local profile, in sweep "demo", through the given states.
/// The window's toolbar button with this text (nullptr when there is none).
inline QWidget* toolbarButton(const QMainWindow& window, const QString& text)
{
    auto* tools = window.findChild<QToolBar*>(QStringLiteral("actions"));
    if (!tools) return nullptr;
    for (QAction* a : tools->actions())
        if (a->text() == text) return tools->widgetForAction(a);
    return nullptr;
}

inline bool saveLocalRun(const QString& root, const QString& id, int ranks, const QList<QPair<RunState, QString>>& states)
{
    auto store = RunStore::open(Workspace(root));
    if (!store) return false;
    RunRecord r;
    r.id = id;
    r.sweep = QStringLiteral("demo");
    r.profile = QStringLiteral("local");
    r.strategy = QStringLiteral("ddp");
    r.ranksPerNode = ranks;
    for (const auto& [state, message] : states) r.transition(state, message);
    return bool((*store)->save(r));
}

/// What every tst_gui_* class derives from: a temporary folder (m_tmp) that also holds QSettings
/// (the launch dialog and the export folders remember theirs), never the user's, cleared before
/// each test so that each starts from the dialogs' defaults. Qt Test runs these inherited slots.
class GuiTestCase : public QObject {
    Q_OBJECT
protected:
    QTemporaryDir m_tmp;

private slots:
    void initTestCase()
    {
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_tmp.filePath(QStringLiteral("settings")));
        QSettings::setDefaultFormat(QSettings::NativeFormat);
    }
    void cleanup() { QSettings().clear(); }
};

}  // namespace scaledesk::gui::test
