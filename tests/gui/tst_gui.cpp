// The window's pieces under the offscreen platform: the run model (QAbstractItemModelTester),
// charts that never hand Qt Charts more than two points per pixel column yet keep every spike,
// exports in every format (and a clear error for an unwritable path), the report's plots, and the
// main window on a workspace with a run (a screenshot is written when SCALEDESK_SCREENSHOT_DIR is set).
#include "analysis/axisticks.h"
#include "analysis/epochscsv.h"
#include "analysis/scalingreport.h"
#include "chartexport.h"
#include "chartstyle.h"
#include "compareview.h"
#include "configeditor.h"
#include "headless.h"
#include "launchdialog.h"
#include "mainwindow.h"
#include "plainmessage.h"
#include "progresspanel.h"
#include "prompter.h"
#include "runlistmodel.h"
#include "runview.h"
#include "scalingcharts.h"
#include "scalingview.h"
#include "serieschart.h"
#include "welcomepanel.h"
#include "workspacecontroller.h"

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

using namespace scaledesk;
using namespace scaledesk::gui;

// A ddp run of the local profile, in sweep "demo", through the given states.
bool saveLocalRun(const QString& root, const QString& id, int ranks, const QList<QPair<RunState, QString>>& states)
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

class TestGui : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

private slots:
    void initTestCase()
    {
        // The launch dialog remembers its settings: in this test's own folder, never the user's.
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_tmp.filePath(QStringLiteral("settings")));
        QSettings::setDefaultFormat(QSettings::NativeFormat);
    }
    // Each test starts from the dialog's defaults.
    void cleanup() { QSettings().clear(); }

    // Export dialogs open in the workspace's exports/ folder, then in the folder of the last export
    // (issue 34 item 10: they opened in the process's current directory).
    void exportDialogsStartInTheExportsFolderThenTheLastOne()
    {
        QTemporaryDir root, elsewhere;
        WorkspaceController controller(root.path());
        MainWindow w(controller);
        QCOMPARE(exportStartPath(QStringLiteral("view.png")), root.filePath(QStringLiteral("exports/view.png")));
        QVERIFY(QFileInfo(root.filePath(QStringLiteral("exports"))).isDir());
        rememberExportPath(elsewhere.filePath(QStringLiteral("loss.svg")));
        QCOMPARE(exportStartPath(QStringLiteral("lr.png")), elsewhere.filePath(QStringLiteral("lr.png")));
        rememberExportPath(root.path(), true);
        QCOMPARE(exportStartPath(), root.path());
    }

    void runModelPassesTheModelTester()
    {
        RunListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<RunSummary> runs;
        for (int i = 0; i < 50; ++i) {
            RunSummary s;
            s.id = QStringLiteral("run-%1").arg(i);
            s.state = i % 3 ? RunState::Completed : RunState::Running;
            s.strategy = QStringLiteral("ddp");
            s.nodes = 1 + i % 4;
            s.ranksPerNode = 4;
            if (i == 5) s.state = RunState::Queued, s.message = QStringLiteral("local: PENDING (waiting for 2 of 2 slots (cores))");
            runs << s;
        }
        model.setRuns(runs);
        QCOMPARE(model.rowCount(), 50);
        // Why a queued run waits is in its Detail column.
        QCOMPARE(model.headerData(RunListModel::Detail, Qt::Horizontal).toString(), QStringLiteral("Detail"));
        QCOMPARE(model.data(model.index(5, RunListModel::State)).toString(), QStringLiteral("queued"));
        QCOMPARE(model.data(model.index(5, RunListModel::Detail)).toString(),
                 QStringLiteral("local: PENDING (waiting for 2 of 2 slots (cores))"));
        QCOMPARE(model.data(model.index(7, RunListModel::Ranks)).toInt(), 16);
        QCOMPARE(model.data(model.index(3, RunListModel::State)).toString(), QStringLiteral("running"));
        // The table sorts by the stored values (SortRole): times as ISO, ranks as numbers.
        for (int i = 0; i < runs.size(); ++i)
            runs[i].created = QStringLiteral("2026-12-05T%1:00:00.000Z").arg(23 - i % 24, 2, 10, QLatin1Char('0'));
        model.setRuns(runs);
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(RunListModel::SortRole);
        proxy.sort(RunListModel::Created, Qt::AscendingOrder);
        QCOMPARE(proxy.index(0, RunListModel::Created).data().toString(), QStringLiteral("2026-12-05 00:00:00"));
        QCOMPARE(proxy.index(49, RunListModel::Created).data().toString(), QStringLiteral("2026-12-05 23:00:00"));
        proxy.sort(RunListModel::Ranks, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, RunListModel::Ranks).data().toInt(), 16);
        QCOMPARE(proxy.index(49, RunListModel::Ranks).data().toInt(), 4);
        model.setRuns({});
        QCOMPARE(model.rowCount(), 0);
    }

    void chartHandsAtMostTwoPointsPerColumnAndKeepsSpikes()
    {
        Series s;
        const int n = 1'000'000;
        s.reserve(n);
        for (int i = 0; i < n; ++i) s.append(i, 1000 + i * 0.1, i == 654321 ? 99.0 : std::sin(i * 1e-4));
        SeriesChart chart(QStringLiteral("loss"));
        chart.resize(800, 500);
        chart.show();
        chart.setCurves({{QStringLiteral("run"), Qt::blue, &s, 1000}});
        QTRY_VERIFY(chart.plotWidth() > 100);
        chart.resetZoom();
        QVERIFY2(chart.pointsShown() <= 2 * chart.plotWidth() + 2,
                 qPrintable(QStringLiteral("%1 points for %2 px").arg(chart.pointsShown()).arg(chart.plotWidth())));
        double top = -1e300;
        for (const QPointF& p : chart.curvePoints(0)) top = std::max(top, p.y());
        QCOMPARE(top, 99.0);  // one point in a million, still drawn
        // Zoom to 1 % around the spike: re-queried, still bounded, spike still there.
        auto* x = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).first());
        x->setRange(650000, 660000);
        QTRY_VERIFY(chart.curvePoints(0).size() > 0 && chart.curvePoints(0).first().x() >= 649999);
        QVERIFY(chart.pointsShown() <= 2 * chart.plotWidth() + 2);
        top = -1e300;
        for (const QPointF& p : chart.curvePoints(0)) top = std::max(top, p.y());
        QCOMPARE(top, 99.0);
        // Smoothing is applied to the full data, then decimated: the spike is damped, not dropped.
        chart.setSmoothing(0.9);
        QTRY_VERIFY(!chart.csv().isEmpty());
        QVERIFY(chart.pointsShown() <= 2 * chart.plotWidth() + 2);
    }

    void logYLeavesOutNonPositiveValues()
    {
        Series s;
        for (int i = 0; i < 1000; ++i) s.append(i, i, i % 10 == 0 ? 0.0 : (i % 7 == 0 ? -1.0 : std::exp(-i / 100.0)));
        SeriesChart chart(QStringLiteral("log"));
        chart.resize(600, 400);
        chart.show();
        chart.setCurves({{QStringLiteral("c"), Qt::blue, &s, 0}});
        chart.setLogY(true);
        QTRY_VERIFY(chart.pointsShown() > 0);
        for (const QPointF& p : chart.curvePoints(0)) QVERIFY(p.y() > 0);
        chart.setLogY(false);
        double lowest = 1e300;
        for (const QPointF& p : chart.curvePoints(0)) lowest = std::min(lowest, p.y());
        QCOMPARE(lowest, -1.0);
    }

    void axesReadLikeAPlottingLibrary()
    {
        // A loss from 0.2849 down to about 0.0525 over 1,089 steps, half a second apart.
        Series s;
        const double t0 = 1796114000;
        for (int i = 0; i <= 1088; ++i) s.append(i, t0 + i * 0.5, 0.05144 + (0.2849 - 0.05144) * std::exp(-i / 200.0));
        SeriesChart chart(QStringLiteral("Loss"));
        chart.resize(700, 450);
        chart.show();
        chart.setCurves({{QStringLiteral("train"), Qt::blue, &s, t0}});
        QTRY_VERIFY(chart.pointsShown() > 0);
        // y: 1-2-5 ticks with the step's decimals (it read 0.2849 / 0.2265 / 0.05144).
        QCOMPARE(chart.yTickLabels(),
                 (QStringList{QStringLiteral("0.05"), QStringLiteral("0.10"), QStringLiteral("0.15"), QStringLiteral("0.20"),
                              QStringLiteral("0.25")}));
        // x (steps): at least three labels, evenly spaced by 1, 2 or 5 × 10^k, none with a fraction.
        auto evenOneTwoFive = [](const QStringList& labels) {
            if (labels.size() < 3) return false;
            QList<double> v;
            for (const QString& l : labels) {
                bool ok = false;
                v << l.toDouble(&ok);
                if (!ok) return false;
            }
            const double step = v[1] - v[0];
            const double m = step / std::pow(10.0, std::floor(std::log10(step)));
            for (qsizetype i = 2; i < v.size(); ++i)
                if (std::abs(v[i] - v[i - 1] - step) > 1e-9 * step) return false;
            return std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9;
        };
        QVERIFY2(evenOneTwoFive(chart.xTickLabels()), qPrintable(chart.xTickLabels().join(QLatin1Char(' '))));
        for (const QString& l : chart.xTickLabels()) QVERIFY2(!l.contains(QLatin1Char('.')), qPrintable(l));
        // Relative time: 0–544 s is read in minutes, and the title says so.
        chart.setXAxis(XAxis::RelativeTime);
        QTRY_VERIFY(chart.chart()->axes(Qt::Horizontal).first()->titleText().contains(QStringLiteral("(min)")));
        QVERIFY2(evenOneTwoFive(chart.xTickLabels()), qPrintable(chart.xTickLabels().join(QLatin1Char(' '))));
        // Wall time: clock times, the first with its date (it read 1796114598).
        chart.setXAxis(XAxis::WallTime);
        const QStringList wall = chart.xTickLabels();
        QVERIFY2(wall.size() >= 3, qPrintable(wall.join(QLatin1Char(' '))));
        QVERIFY2(QRegularExpression(QStringLiteral("^[A-Z][a-z]{2} \\d{1,2} \\d\\d:\\d\\d$")).match(wall.first()).hasMatch(),
                 qPrintable(wall.first()));
        for (qsizetype i = 1; i < wall.size(); ++i)
            QVERIFY2(QRegularExpression(QStringLiteral("^\\d\\d:\\d\\d$")).match(wall[i]).hasMatch(), qPrintable(wall[i]));
        // Log y: decades with 2 and 5 where they are sparse (compare's log y showed only "0.1").
        chart.setXAxis(XAxis::Step);
        chart.setLogY(true);
        QCOMPARE(chart.yTickLabels(), (QStringList{QStringLiteral("0.05"), QStringLiteral("0.1"), QStringLiteral("0.2")}));
        chart.setLogY(false);

        // The crosshair snaps to the nearest point and shows it with at most 4 significant digits.
        chart.showCrosshairAt(57.7939);
        QVERIFY2(chart.crosshairText().contains(QStringLiteral("step 58")), qPrintable(chart.crosshairText()));
        QVERIFY2(chart.crosshairText().contains(formatNumber(s.values()[58])), qPrintable(chart.crosshairText()));
        QVERIFY(!chart.crosshairText().contains(QString::number(s.values()[58], 'g', 6)));
        // …and leaves with the mouse.
        QEvent leave(QEvent::Leave);
        QCoreApplication::sendEvent(&chart, &leave);
        QVERIFY(chart.crosshairText().isEmpty());
        // The mouse over the plot shows it too.
        const QPointF inside = chart.mapFromScene(chart.chart()->mapToScene(chart.chart()->plotArea().center()));
        QTest::mouseMove(chart.viewport(), inside.toPoint());
        QTRY_VERIFY(!chart.crosshairText().isEmpty());

        // CSV: every point in the visible range, not the decimated ones drawn.
        static_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).first())->setRange(100, 199.5);
        const QStringList rows = chart.csv().trimmed().split(QLatin1Char('\n'));
        QCOMPARE(rows.size(), 1 + 100);
        QCOMPARE(rows[1], QStringLiteral("train,100,") + csvNumber(s.values()[100]));

        // A chart without data says so, with no 0–1 axes.
        SeriesChart empty(QStringLiteral("Nothing"));
        empty.resize(400, 300);
        empty.show();
        empty.setCurves({});
        QVERIFY(empty.xTickLabels().isEmpty());
        QVERIFY(!empty.chart()->axes(Qt::Horizontal).first()->isVisible());
        QVERIFY(!empty.chart()->axes(Qt::Vertical).first()->isVisible());
    }

    void chartsFollowADarkPalette()
    {
        // A dark system palette: charts get a dark background and light text, axes and crosshair included.
        const QPalette light = QApplication::palette();
        QPalette dark(QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::WindowText, Qt::white);
        dark.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3c, 0x3c));
        dark.setColor(QPalette::ToolTipText, Qt::white);
        QApplication::setPalette(dark);
        Series s;
        for (int i = 0; i < 200; ++i) s.append(i, i, 1.0 / (1 + i));
        {
            SeriesChart chart(QStringLiteral("Dark"));
            chart.resize(600, 400);
            chart.show();
            chart.setCurves({{QStringLiteral("c"), QColor(0x56, 0xB4, 0xE9), &s, 0}});
            QTRY_VERIFY(chart.pointsShown() > 0);
            QVERIFY(chart.chart()->backgroundBrush().color().lightness() < 100);
            for (QAbstractAxis* a : chart.chart()->axes())
                QVERIFY2(a->labelsBrush().color().lightness() > 150, qPrintable(a->labelsBrush().color().name()));
            chart.showCrosshairAt(50);
            QTest::qWait(100);
            if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
                chart.grab().save(shots + QStringLiteral("/chart-dark.png"));
        }
        QApplication::setPalette(light);
    }

    void exportHonoursTheResolution()
    {
        // The same pixel size at 96 and at 200 DPI: the text of the second is twice as tall, as a
        // plotting library scales a figure's fonts with its DPI.
        Series s;
        for (int i = 0; i < 100; ++i) s.append(i, i, i * i);
        SeriesChart chart(QStringLiteral("Resolution"));
        chart.setCurves({{QStringLiteral("curve"), Qt::red, &s, 0}});
        auto titleHeight = [&](int dpi) {
            const QString path = m_tmp.filePath(QStringLiteral("dpi%1.png").arg(dpi));
            const auto ok = chart.exportTo(path, QSize(1600, 1000), dpi);
            if (!ok) return -1;
            const QImage png(path);
            // The title is the first ink from the top in the middle third; its rows are contiguous.
            int first = -1, last = -1;
            for (int y = 0; y < png.height() / 3; ++y) {
                bool ink = false;
                for (int x = png.width() / 3; x < 2 * png.width() / 3 && !ink; ++x) ink = png.pixelColor(x, y).lightness() < 160;
                if (ink && first < 0) first = y;
                if (ink) last = y;
                if (!ink && first >= 0) break;
            }
            return first < 0 ? -1 : last - first + 1;
        };
        const int at96 = titleHeight(96), at200 = titleHeight(200);
        QVERIFY2(at96 > 5, qPrintable(QString::number(at96)));
        QVERIFY2(at200 >= 2 * at96, qPrintable(QStringLiteral("%1 px at 96 DPI, %2 px at 200 DPI").arg(at96).arg(at200)));
    }

    void exportsEveryFormatAndNamesAnUnwritablePath()
    {
        Series s;
        for (int i = 0; i < 100; ++i) s.append(i, i, i * i);
        SeriesChart chart(QStringLiteral("Export me"));
        chart.setYTitle(QStringLiteral("value (units)"));
        chart.setCurves({{QStringLiteral("curve"), Qt::red, &s, 0}});
        for (const char* ext : {"png", "svg", "pdf"}) {
            const QString path = m_tmp.filePath(QStringLiteral("chart.%1").arg(QLatin1String(ext)));
            const auto ok = chart.exportTo(path, QSize(640, 480), 96);
            QVERIFY2(ok, qPrintable(ok ? QString() : ok.error().text()));
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray head = f.read(8);
            if (QLatin1String(ext) == QLatin1String("png")) QVERIFY(head.startsWith("\x89PNG"));
            if (QLatin1String(ext) == QLatin1String("pdf")) QVERIFY(head.startsWith("%PDF"));
            if (QLatin1String(ext) == QLatin1String("svg")) QVERIFY(f.readAll().contains("Export me"));
        }
        const QImage png(m_tmp.filePath(QStringLiteral("chart.png")));
        QCOMPARE(png.size(), QSize(640, 480));
        int inked = 0;  // non-blank: a real share of the pixels is not background
        for (int y = 0; y < png.height(); y += 2)
            for (int x = 0; x < png.width(); x += 2) inked += (png.pixelColor(x, y).lightness() < 200);
        QVERIFY2(inked > 500, qPrintable(QString::number(inked)));
        QString chartError;
        const QString svgText = svgTexts(m_tmp.filePath(QStringLiteral("chart.svg")), &chartError).join(QLatin1Char('|'));
        QVERIFY2(chartError.isEmpty(), qPrintable(chartError));
        QVERIFY(svgText.contains(QStringLiteral("value (units)")));  // the y axis title
        QVERIFY(svgText.contains(QStringLiteral("Step")));           // the x axis title
        QVERIFY(svgText.contains(QStringLiteral("curve")));          // the legend entry
        QFile pdf(m_tmp.filePath(QStringLiteral("chart.pdf")));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray pdfBytes = pdf.readAll();
        QVERIFY(pdfBytes.size() > 4000);  // more than an empty page
        QVERIFY2(pdfBytes.contains("/MediaBox [0 0 480.000000 360.000000]"), "the PDF page is not 640 x 480 px at 96 dpi");
        const auto bad = exportChart(chart.chart(), QStringLiteral("/proc/nope/chart.png"));
        QVERIFY(!bad);
        QVERIFY(bad.error().text().startsWith(QStringLiteral("/proc/nope/chart.png")));
        const auto fmt = exportChart(chart.chart(), m_tmp.filePath(QStringLiteral("chart.bmp")));
        QVERIFY(!fmt);
        QVERIFY(fmt.error().message.contains(QStringLiteral("png, svg or pdf")));
        QVERIFY(chart.chart()->scene() != nullptr);  // still shown after exporting
    }

    void reportPlotsAreWrittenInEveryFormat()
    {
        ScalingReport rep;
        rep.sweep = QStringLiteral("s");
        rep.target = 0.3;
        rep.targetSource = QStringLiteral("given");
        rep.targetGiven = true;
        for (const auto& [strategy, world, t] : {std::tuple{"ddp", 1, 10.0}, std::tuple{"ddp", 2, 6.0}, std::tuple{"ddp", 4, 4.0},
                                                 std::tuple{"fused", 1, 11.0}, std::tuple{"fused", 2, 7.0}}) {
            ReportGroupRow g;
            g.strategy = QString::fromLatin1(strategy);
            g.world = world;
            g.nodes = 1;
            g.repetitions = 2;
            g.epochS = t;
            g.epochSStd = 0.5;
            g.samplesPerEpoch = 64;
            g.throughput = 64 / t;
            g.ideal = world;
            g.speedup = (strategy[0] == 'd' ? 10.0 : 11.0) / t;
            g.efficiency = g.speedup / world;
            g.computeS = 0.6 * t;
            g.commS = 0.2 * t;
            g.dataS = 0.1 * t;
            g.otherS = 0.1 * t;
            g.timeToTargetS = 100 / world;
            g.reachedTarget = world == 4 ? 0 : 2;
            rep.groups << g;
        }
        QStringList written;
        const QString dir = m_tmp.filePath(QStringLiteral("plots"));
        const auto ok = renderReportCharts(rep, dir, {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}, &written);
        QVERIFY2(ok, qPrintable(ok ? QString() : ok.error().text()));
        QCOMPARE(written.size(), 21);
        for (const QString& name : {QStringLiteral("epoch_time"), QStringLiteral("speedup"), QStringLiteral("efficiency"),
                                    QStringLiteral("throughput"), QStringLiteral("time_breakdown"), QStringLiteral("time_to_target")})
            QVERIFY2(QImage(dir + QLatin1Char('/') + name + QStringLiteral(".png")).width() == 1200, qPrintable(name));
        QFile svg(dir + QStringLiteral("/speedup.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        QVERIFY(text.contains("ideal (n / n_min)"));
        QVERIFY(text.contains("Ranks (GPUs or CPU ranks)"));

        // The Scaling view's export: one page with all six plots and the warnings, not a screen grab.
        rep.sweep = QStringLiteral("s1");
        rep.warnings << QStringLiteral("ddp at 4 ranks: never reached the target");
        QFile pdf(dir + QStringLiteral("/scaling_report.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray pdfBytes = pdf.readAll();
        QCOMPARE(pdfBytes.count("/Type /Page\n") + pdfBytes.count("/Type /Page\r") + pdfBytes.count("/Type /Page "), 1);
        const QString pageSvg = m_tmp.filePath(QStringLiteral("page.svg"));
        const auto page = renderReportPage(rep, pageSvg);
        QVERIFY2(page, qPrintable(page ? QString() : page.error().text()));
        QString svgError;
        const QStringList texts = svgTexts(pageSvg, &svgError);
        QVERIFY2(svgError.isEmpty(), qPrintable(svgError));
        const QString all = texts.join(QLatin1Char('|'));
        for (const QString& title : {QStringLiteral("Average epoch time vs ranks"), QStringLiteral("Speedup of the average epoch time"),
                                     QStringLiteral("Scaling efficiency"), QStringLiteral("Throughput"),
                                     QStringLiteral("Where an epoch's time goes"), QStringLiteral("Time to validation loss 0.3 (given)")})
            QVERIFY2(all.contains(title), qPrintable(title));
        QVERIFY(all.contains(QStringLiteral("never reached the target")));
        QVERIFY(all.contains(QStringLiteral("Scaling report: s1")));
        const QString pagePng = m_tmp.filePath(QStringLiteral("page.png"));
        QVERIFY(renderReportPage(rep, pagePng, 96));
        const QImage png(pagePng);
        QVERIFY(png.width() == 1200 && png.height() > 3 * 420);  // two columns of three plots
        if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
            QFile::copy(pagePng, shots + QStringLiteral("/scaling-page.png"));
    }

    void launchDialogSaysWhyItCannotLaunch()
    {
        const QString root = m_tmp.filePath(QStringLiteral("launch-ws"));
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QCOMPARE(d.configCombo()->currentText(), QStringLiteral("cpu-tiny"));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        d.ranksEdit()->setText(QStringLiteral("1,2"));
        QVERIFY(d.summary().startsWith(QStringLiteral("2 job(s) on local (this machine)")));
        QVERIFY2(!d.summary().contains(QStringLiteral("node-hours")), qPrintable(d.summary()));  // a laptop has no node-hours
        QStringList ids;
        for (const RunPoint& p : d.request().points) ids << p.runId + QStringLiteral("/%1").arg(p.worldSize());
        // The default sweep name is unique: <config>-<date>-<n>.
        const QString sweep = QStringLiteral("cpu-tiny-%1-1").arg(QDate::currentDate().toString(QStringLiteral("yyyyMMdd")));
        QCOMPARE(d.sweepEdit()->text(), sweep);
        QCOMPARE(ids, (QStringList{sweep + QStringLiteral("-ddp-1x1-r1/1"), sweep + QStringLiteral("-ddp-1x2-r1/2")}));
        QVERIFY(d.makeDataCheck()->isChecked());  // a cpu config on the local profile: its data is generated
        QCOMPARE(d.request().options.configName, QStringLiteral("cpu-tiny"));
        QVERIFY2(d.preview().contains(QStringLiteral("mpirun")), qPrintable(d.preview()));  // the local job script
        // No run of the config has finished on the profile: no model to predict with, and it says so.
        QTRY_VERIFY_WITH_TIMEOUT(d.prediction().contains(QStringLiteral("No prediction")), 20000);
        QVERIFY2(d.prediction().contains(QStringLiteral("no completed run of config 'cpu-tiny' on profile 'local'")),
                 qPrintable(d.prediction()));
        d.nodesEdit()->setText(QStringLiteral("1,x"));
        QVERIFY(!d.canLaunch());
        QVERIFY(d.whyNot().startsWith(QStringLiteral("Nodes")));
        d.nodesEdit()->setText(QStringLiteral("1"));
        d.timeEdit()->setText(QStringLiteral("soon"));
        QVERIFY(!d.canLaunch());
        QVERIFY(d.whyNot().contains(QStringLiteral("not a SLURM time")));
        d.timeEdit()->setText(QStringLiteral("00:20:00"));
        QVERIFY(d.canLaunch());
        // Without its data the cpu config's runs could not start: Launch is off, and says which line.
        d.makeDataCheck()->click();
        QVERIFY(!d.canLaunch());
        QVERIFY2(d.whyNot().contains(QStringLiteral("configs/unet.yaml:89: train_path 'data/train.h5' (config cpu-tiny)")) &&
                     d.whyNot().contains(QStringLiteral("Generate the cpu configs' data")),
                 qPrintable(d.whyNot()));
        if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty()) {
            d.show();
            QTest::qWait(100);
            d.grab().save(shots + QStringLiteral("/launch-no-data.png"));
        }
        d.makeDataCheck()->click();
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        d.configCombo()->setEditable(true);
        d.configCombo()->setCurrentText(QStringLiteral("no-such-config"));
        QVERIFY(!d.canLaunch());
        QVERIFY(d.whyNot().contains(QStringLiteral("no config named 'no-such-config'")));
    }

    // The dialog fits a 720 px screen with its buttons on it: the job script is folded away until
    // asked for (issue 34: the preview took half the height and pushed Launch off an 800 px screen).
    void launchDialogFitsA720pxScreen()
    {
        const QString root = m_tmp.filePath(QStringLiteral("fit-ws"));
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        QVERIFY2(d.height() <= 720, qPrintable(QString::number(d.height())));
        QVERIFY(d.buttons()->isVisible());
        QVERIFY(d.buttons()->geometry().bottom() <= d.height());
        QVERIFY(!d.scriptToggle()->isChecked());
        if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
            d.grab().save(shots + QStringLiteral("/launch-dialog.png"));
        d.scriptToggle()->click();
        QTRY_VERIFY(d.findChild<QPlainTextEdit*>()->isVisible());
        QVERIFY(d.findChild<QPlainTextEdit*>()->toPlainText().contains(QStringLiteral("#!/bin/bash")));
        if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
            d.grab().save(shots + QStringLiteral("/launch-dialog-script.png"));
        d.scriptToggle()->click();
        QTRY_VERIFY(d.height() <= 720);
    }

    // A GPU profile: one rank per GPU by default, and more ranks than GPUs are refused, with the
    // numbers, by the same check as the command line's.
    void launchDialogGivesEachGpuARank()
    {
        const QString root = m_tmp.filePath(QStringLiteral("gpu-ws"));
        QVERIFY(QDir().mkpath(root + QStringLiteral("/profiles")));
        QFile p(root + QStringLiteral("/profiles/gpu4.yaml"));
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write("kind: ssh+slurm\nhost: gpu.invalid\nremote_root: /r\nslurm:\n  gpus_per_node: 4\ntrainer: {path: /t}\n");
        p.close();
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QCOMPARE(d.ranksEdit()->text(), QStringLiteral("1"));  // the local profile first: one rank
        d.profileCombo()->setCurrentIndex(d.profileCombo()->findData(QStringLiteral("gpu4")));
        QCOMPARE(d.ranksEdit()->text(), QStringLiteral("4"));
        d.configCombo()->setCurrentIndex(d.configCombo()->findText(QStringLiteral("bs64_opt")));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        QVERIFY2(d.preview().contains(QStringLiteral("#SBATCH --ntasks-per-node=4\n")), qPrintable(d.preview()));
        QVERIFY2(d.preview().contains(QStringLiteral("#SBATCH --gpus-per-node=4\n")), qPrintable(d.preview()));
        d.ranksEdit()->setText(QStringLiteral("8"));
        QVERIFY(!d.canLaunch());
        QVERIFY2(d.whyNot().contains(QStringLiteral("8 ranks on a node of profile gpu4, whose nodes have 4 GPU(s)")),
                 qPrintable(d.whyNot()));
    }

    // Names are unique by default, a name that is taken keeps the dialog open with the field marked,
    // and the last launch's settings come back for the profile.
    void launchDialogKeepsNamesUniqueAndRemembers()
    {
        const QString root = m_tmp.filePath(QStringLiteral("names-ws"));
        const QString date = QDate::currentDate().toString(QStringLiteral("yyyyMMdd"));
        {
            auto store = RunStore::open(Workspace(root));
            QVERIFY(store);
            RunRecord r;
            r.id = QStringLiteral("cpu-tiny-%1-1-ddp-1x1-r1").arg(date);
            r.profile = QStringLiteral("local");
            r.transition(RunState::Completed);
            QVERIFY((*store)->save(r));
        }
        {
            LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
            QCOMPARE(d.sweepEdit()->text(), QStringLiteral("cpu-tiny-%1-2").arg(date));  // -1 is taken
            QVERIFY(d.canLaunch());
            d.sweepEdit()->setText(QStringLiteral("cpu-tiny-%1-1").arg(date));
            QVERIFY(!d.canLaunch());
            QVERIFY2(d.whyNot().startsWith(QStringLiteral("Sweep name:")), qPrintable(d.whyNot()));
            QVERIFY(d.sweepEdit()->styleSheet().contains(QStringLiteral("border")));
            QVERIFY(!d.buttons()->button(QDialogButtonBox::Ok)->isEnabled());
            d.sweepEdit()->setText(QStringLiteral("fresh"));
            QVERIFY(d.canLaunch());
            QVERIFY(d.sweepEdit()->styleSheet().isEmpty());
            d.nodesEdit()->setText(QStringLiteral("1,2"));
            d.stopOnFailureCheck()->setChecked(true);
            QTest::mouseClick(d.buttons()->button(QDialogButtonBox::Ok), Qt::LeftButton);
            QCOMPARE(d.result(), int(QDialog::Accepted));
        }
        LaunchDialog again(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QCOMPARE(again.nodesEdit()->text(), QStringLiteral("1,2"));
        QVERIFY(again.stopOnFailureCheck()->isChecked());
        QCOMPARE(again.request().onFailure, OnSubmitFailure::Stop);
    }

    // The run navigator hides and shows from the toolbar, the View menu and Ctrl+B, and starts at
    // about a quarter of a 1280 px window (issue 34 item 9).
    void theRunNavigatorCollapses()
    {
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("dock-ws")));
        MainWindow w(controller);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* dock = w.findChild<QDockWidget*>(QStringLiteral("runs"));
        QVERIFY(dock);
        QTRY_VERIFY(dock->isVisible());
        QVERIFY2(dock->width() <= 1280 * 0.32, qPrintable(QString::number(dock->width())));
        QAction* toggle = dock->toggleViewAction();
        QVERIFY(toggle->isEnabled());
        QCOMPARE(toggle->shortcut(), QKeySequence(QStringLiteral("Ctrl+B")));
        bool onToolbar = false;
        for (auto* bar : w.findChildren<QToolBar*>()) onToolbar = onToolbar || bar->actions().contains(toggle);
        QVERIFY(onToolbar);
        toggle->trigger();
        QTRY_VERIFY(!dock->isVisible());
        toggle->trigger();
        QTRY_VERIFY(dock->isVisible());
        // The config editor's errors wrap instead of being cut.
        QVERIFY(w.configEditor()->errorsList()->wordWrap());
    }

    // The Scaling view reflows its six charts to the width, 2 columns where two fit and 1 where they
    // do not, never scrolls sideways, and its warnings pane is as tall as its lines (issue 34 item 4).
    void theScalingViewReflowsToItsWidth()
    {
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("reflow-ws")));
        ScalingView view(controller);
        view.setSweeps({QStringLiteral("s")});
        ScalingReport rep;
        rep.sweep = QStringLiteral("s");
        for (int world : {1, 2}) {
            ReportGroupRow g;
            g.strategy = QStringLiteral("ddp");
            g.world = g.nodes = world;
            g.repetitions = 1;
            g.epochS = 10.0 / world;
            g.throughput = 100.0 * world;
            g.speedup = world;
            g.ideal = world;
            g.efficiency = 1;
            rep.groups << g;
        }
        emit controller.reportReady(QStringLiteral("s"), rep);
        QCOMPARE(view.chartCount(), 6);
        view.resize(1280, 760);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_COMPARE(view.chartColumns(), 2);
        QTRY_VERIFY(view.chartViews()[1]->geometry().left() > view.chartViews()[0]->geometry().right());
        const int oneLine = view.warningsList()->height();
        QVERIFY2(oneLine < 60, qPrintable(QString::number(oneLine)));  // "No warnings." is one line, not 110 px
        view.resize(700, 760);
        QTRY_COMPARE(view.chartColumns(), 1);
        QTRY_COMPARE(view.chartViews()[1]->geometry().left(), view.chartViews()[0]->geometry().left());
        for (QScrollBar* bar : view.findChildren<QScrollBar*>())
            if (bar->orientation() == Qt::Horizontal && bar->parentWidget() &&
                qobject_cast<QScrollArea*>(bar->parentWidget()->parentWidget()))
                QVERIFY(!bar->isVisible());
        for (QWidget* v : view.chartViews()) QVERIFY2(v->width() <= 700, qPrintable(QString::number(v->width())));
    }

    // The Profiles panel follows the profile files: one added while the window is open shows.
    void profilesPanelFollowsTheFiles()
    {
        const QString root = m_tmp.filePath(QStringLiteral("profiles-ws"));
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.show();
        const int before = w.profileList()->count();
        QFile p(root + QStringLiteral("/profiles/added.yaml"));
        QVERIFY(p.open(QIODevice::WriteOnly));
        p.write("kind: ssh+slurm\nhost: cluster.example.org\nremote_root: /scratch/me\ntrainer: {path: /opt/bin/scaledesk-train}\n");
        p.close();
        QTRY_COMPARE(w.profileList()->count(), before + 1);
        bool shown = false;
        for (int i = 0; i < w.profileList()->count(); ++i)
            shown = shown || w.profileList()->item(i)->text().startsWith(QStringLiteral("added — ssh+slurm"));
        QVERIFY(shown);
    }

    // The whole loop from the window's side: launch a local run, watch it arrive and complete.
    void launchedRunAppearsAndCompletes()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        const QString root = m_tmp.filePath(QStringLiteral("loop-ws"));
        WorkspaceController controller(root);
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        LaunchRequest r = d.request();
        r.makeData = true;
        QList<RunSummary> seen;
        connect(&controller, &WorkspaceController::runsChanged, this, [&](const QList<RunSummary>& runs) { seen = runs; });
        controller.launch(r);
        QTRY_VERIFY_WITH_TIMEOUT(seen.size() == 1 && seen[0].state == RunState::Completed, 180000);
        QCOMPARE(seen[0].id, r.points.first().runId);
        QVERIFY(controller.reader(seen[0].id).read({}).newPoints > 0);
#endif
    }

    void configEditorValidatesResolvesAndAutosaves()
    {
#ifdef SCALEDESK_TRAIN_BIN
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
#endif
        const QString path = m_tmp.filePath(QStringLiteral("edit/unet.yaml"));
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile::remove(path);
        QVERIFY(QFile::copy(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"), path));
        QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("edit-ws")));
        {
            ConfigEditor e(controller);
            QVERIFY(e.open(path));
            QTRY_VERIFY(!e.validating());
            QCOMPARE(e.errors(), QStringList());
            auto* configs = e.configsTree();
            QVERIFY(configs);
            const auto found = configs->findItems(QStringLiteral("cpu-tiny"), Qt::MatchExactly);
            QCOMPARE(found.size(), 1);
            QCOMPARE(found[0]->text(1), QStringLiteral("cpu"));
            configs->setCurrentItem(found[0]);
            auto* resolved = e.resolvedTree();
            QVERIFY(resolved->topLevelItemCount() > 10);
            bool sawOwn = false, sawInherited = false;
            for (int i = 0; i < resolved->topLevelItemCount(); ++i) {
                const auto* item = resolved->topLevelItem(i);
                if (item->text(0) == QLatin1String("Nsamples"))
                    sawOwn = item->text(1) == QLatin1String("16") && item->text(2).startsWith(QStringLiteral("cpu-tiny"));
                if (item->text(0) == QLatin1String("data_size")) sawInherited = item->text(2).startsWith(QStringLiteral("cpu "));
            }
            QVERIFY(sawOwn);
            QVERIFY(sawInherited);

            // A wrong type: the trainer's own check names line and column.
            QSignalSpy validity(&e, &ConfigEditor::validityChanged);
            QString text = e.editor()->toPlainText();
            const int at = int(text.indexOf(QStringLiteral("Nsamples: 16")));
            QVERIFY(at > 0);
            text.replace(at, 12, QStringLiteral("Nsamples: many"));
            e.editor()->setPlainText(text);
            QTRY_VERIFY_WITH_TIMEOUT(!e.validating() && !e.errors().isEmpty(), 20000);
            QVERIFY2(e.errors().join(QString()).contains(QStringLiteral("Nsamples")), qPrintable(e.errors().join(QLatin1Char('\n'))));
            const int line = int(text.left(at).count(QLatin1Char('\n'))) + 1;
            QVERIFY2(e.errors().first().startsWith(QString::number(line) + QLatin1Char(':')), qPrintable(e.errors().first()));
            QVERIFY(!validity.isEmpty() && !validity.last().at(0).toBool());
            // An error planted in `base` is reported for base and for the configs that inherit it, with
            // the selection left where it was (cpu-tiny).
            QString planted = text;
            planted.replace(at, 14, QStringLiteral("Nsamples: 16"));
            const int epochs = int(planted.indexOf(QStringLiteral("num_epochs: 10")));
            QVERIFY(epochs > 0 && epochs < planted.indexOf(QStringLiteral("short:")));
            planted.replace(epochs, 14, QStringLiteral("num_epochs: ten"));
            e.editor()->setPlainText(planted);
            QVERIFY(e.errors().isEmpty() || !e.errors().join(QString()).contains(QStringLiteral("No errors")));
            QTRY_VERIFY_WITH_TIMEOUT(!e.validating() && !e.errors().isEmpty(), 20000);
            const int epochsLine = int(planted.left(epochs).count(QLatin1Char('\n'))) + 1;
            QCOMPARE(e.errors().size(), 1);  // one error, listed once with every config it breaks
            const QString err = e.errors().first();
            QVERIFY2(err.startsWith(QString::number(epochsLine) + QLatin1Char(':')) && err.contains(QStringLiteral("num_epochs")),
                     qPrintable(err));
            QVERIFY2(err.contains(QStringLiteral("(in base, ")) && err.contains(QStringLiteral("bs64_opt")), qPrintable(err));
            QCOMPARE(configs->currentItem()->text(0), QStringLiteral("cpu-tiny"));
            e.editor()->setPlainText(text);  // back to the Nsamples error, which the autosave checks below
            // Broken YAML is caught at once, before the trainer runs.
            e.editor()->appendPlainText(QStringLiteral("broken: [1, 2"));
            QTRY_VERIFY_WITH_TIMEOUT(!e.validating() && e.errors().join(QString()).contains(QStringLiteral("YAML")), 20000);
            // Unsaved text reaches the autosave folder within a second or so.
            QTRY_VERIFY_WITH_TIMEOUT(
                [&] {
                    QFile f(e.autosavePath());
                    return f.open(QIODevice::ReadOnly) && f.readAll().contains("broken: [1, 2");
                }(),
                5000);
        }
        // As after a crash: the next editor offers the unsaved text back; saving clears it.
        ConfigEditor again(controller);
        QVERIFY(again.open(path));
        QVERIFY(!again.restoredFrom().isEmpty());
        QVERIFY(again.editor()->toPlainText().contains(QStringLiteral("broken: [1, 2")));
        QVERIFY(again.save());
        QVERIFY(!QFile::exists(again.autosavePath()));
        QFile saved(path);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QVERIFY(saved.readAll().contains("Nsamples: many"));
    }

    // The "changes since" list compares the selected config with the config.yaml of the newest
    // run launched from it (found and resolved on the pool).
    void configEditorListsChangesSinceTheNewestRun()
    {
        const QString path = m_tmp.filePath(QStringLiteral("since/unet.yaml"));
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile::remove(path);
        QVERIFY(QFile::copy(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"), path));
        QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        const QString root = m_tmp.filePath(QStringLiteral("since-ws"));
        auto store = RunStore::open(Workspace(root));
        QVERIFY(store);
        auto addRun = [&](const QString& id, const QString& config, const QByteArray& yaml) {
            RunRecord r;
            r.id = id;
            r.profile = QStringLiteral("local");
            r.configFile = path;
            r.configName = config;
            r.transition(RunState::Completed, QStringLiteral("done"));
            QVERIFY((*store)->save(r));
            if (yaml.isEmpty()) return;
            QFile f(Workspace(root).runDir(id) + QStringLiteral("/config.yaml"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(yaml);
        };
        QFile original(path);
        QVERIFY(original.open(QIODevice::ReadOnly));
        QByteArray before = original.readAll();
        const qsizetype at = before.indexOf("Nsamples: 16");
        QVERIFY(at > 0);
        before.replace(at, 12, "Nsamples: 8");
        addRun(QStringLiteral("tiny-old"), QStringLiteral("cpu-tiny"), before);
        QTest::qWait(5);
        addRun(QStringLiteral("tiny-new"), QStringLiteral("cpu-tiny"), before);
        addRun(QStringLiteral("short-lost"), QStringLiteral("cpu-short"), QByteArray());  // its config.yaml is gone

        WorkspaceController controller(root);
        ConfigEditor e(controller);
        QVERIFY(e.open(path));
        auto select = [&](const QString& name) {
            const auto found = e.configsTree()->findItems(name, Qt::MatchExactly);
            QCOMPARE(found.size(), 1);
            e.configsTree()->setCurrentItem(found[0]);
        };
        auto lines = [&] {
            QStringList out;
            for (int i = 0; i < e.changesList()->count(); ++i) out << e.changesList()->item(i)->text();
            return out;
        };
        select(QStringLiteral("cpu-tiny"));
        QTRY_COMPARE(lines(), QStringList({QStringLiteral("1 change(s) since run tiny-new:"), QStringLiteral("Nsamples: 8 → 16")}));
        select(QStringLiteral("cpu-short"));
        QTRY_VERIFY(!lines().isEmpty());
        QVERIFY2(lines().join(QString()).contains(QStringLiteral("short-lost/config.yaml")), qPrintable(lines().join(QLatin1Char('\n'))));
        select(QStringLiteral("base"));
        QTRY_COMPARE(lines(), QStringList({QStringLiteral("No run was launched from this config yet.")}));
    }

    // A run that another process (the command line's `status --wait`) saw complete: the window's
    // next read of the index brings its record, not only its row (the header and the actions
    // follow the snapshot).
    void aRecordChangedByAnotherProcessReachesTheSnapshot()
    {
        const QString root = m_tmp.filePath(QStringLiteral("elsewhere-ws"));
        RunRecord r;
        r.id = QStringLiteral("elsewhere");
        r.profile = QStringLiteral("no-such-profile");  // no poll of its own: only the index can tell
        r.transition(RunState::Queued, QStringLiteral("job 1"));
        r.transition(RunState::Running, QStringLiteral("running"));
        {
            auto store = RunStore::open(Workspace(root));
            QVERIFY(store);
            QVERIFY((*store)->save(r));
        }
        WorkspaceController controller(root);
        controller.loadRun(r.id);
        QTRY_VERIFY(controller.snapshot(r.id));
        QCOMPARE(controller.snapshot(r.id)->record.state, RunState::Running);
        QSignalSpy updated(&controller, &WorkspaceController::runsUpdated);
        {
            auto other = RunStore::open(Workspace(root));  // as another process would
            QVERIFY(other);
            QVERIFY((*other)->update(r.id, [](RunRecord& x) {
                x.transition(RunState::Completed, QStringLiteral("local: COMPLETED (exit 0)"));
                return Status(Done{});
            }));
        }
        controller.refresh();
        QTRY_COMPARE(controller.snapshot(r.id)->record.state, RunState::Completed);
        QCOMPARE(controller.snapshot(r.id)->record.message, QStringLiteral("local: COMPLETED (exit 0)"));
        QVERIFY(!updated.isEmpty());
        QVERIFY(updated.last().at(0).toStringList().contains(r.id));
    }

    // The real window, driven by clicks: launch cpu-tiny twice on the local profile, wait for both
    // to complete, see a run's points in the run view and both runs in the compare view.
    void endToEndThroughTheWindow()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        qputenv("SCALEDESK_TRAINER_SOURCES", SCALEDESK_SOURCE_DIR);
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("e2e-ws")));
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* tools = w.findChild<QToolBar*>(QStringLiteral("actions"));
        QVERIFY(tools);
        QAction* launch = nullptr;
        for (QAction* a : tools->actions())
            if (a->text() == QStringLiteral("Launch…")) launch = a;
        QVERIFY(launch);
        auto launchOnce = [&](const QString& sweep) {
            bool filled = false;
            QTimer::singleShot(100, this, [&] {
                auto* d = qobject_cast<LaunchDialog*>(QApplication::activeModalWidget());
                if (!d) return;
                d->sweepEdit()->setText(sweep);
                d->makeDataCheck()->setChecked(true);
                filled = d->canLaunch();
                QTest::mouseClick(d->buttons()->button(QDialogButtonBox::Ok), Qt::LeftButton);
            });
            QTest::mouseClick(tools->widgetForAction(launch), Qt::LeftButton);
            QVERIFY2(filled, "the launch dialog did not accept the form");
        };
        launchOnce(QStringLiteral("first"));
        launchOnce(QStringLiteral("second"));
        auto completed = [&] {
            int n = 0;
            for (int r = 0; r < w.runModel()->rowCount(); ++r)
                if (w.runModel()->data(w.runModel()->index(r, RunListModel::State)).toString() == QLatin1String("completed")) ++n;
            return n;
        };
        QTRY_COMPARE_WITH_TIMEOUT(completed(), 2, 240000);
        // Click the first run in the navigator: its points are in the run view's loss chart.
        QTableView* table = w.runTable();
        const QRect row0 = table->visualRect(table->model()->index(0, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, row0.center());
        QTRY_VERIFY(w.runView()->charts().first()->pointsShown() > 0);
        // Ctrl-click the second: the compare view takes both.
        const QRect row1 = table->visualRect(table->model()->index(1, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::ControlModifier, row1.center());
        QTRY_COMPARE(w.compareView()->runs().size(), 2);
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.compareView()));
        QTRY_VERIFY(w.compareView()->chart()->pointsShown() > 0);
        // Each curve is labelled by what tells it apart (the sweep here), in colours of its own.
        QStringList names;
        QSet<QRgb> colours;
        for (QAbstractSeries* s : w.compareView()->chart()->chart()->series())
            if (auto* line = qobject_cast<QXYSeries*>(s); line && !line->name().isEmpty()) {
                names << line->name();
                colours.insert(line->color().rgb());
            }
        QVERIFY2(names.contains(QStringLiteral("first")) && names.contains(QStringLiteral("second")),
                 qPrintable(names.join(QLatin1Char(','))));
        QCOMPARE(colours.size(), 2);
#endif
    }

    // The pictures a user sees, rendered offscreen at fixed sizes from fixed data, against reference
    // images checked in under tests/gui/reference (looked at before they were checked in). A small
    // tolerance absorbs antialiasing; a changed tick, label, colour or layout does not pass.
    // SCALEDESK_UPDATE_REFERENCES=1 writes the references anew (then look at them before committing).
    void chartsMatchTheirReferenceImages()
    {
        const QString refDir = QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/gui/reference");
        const bool update = qEnvironmentVariableIsSet("SCALEDESK_UPDATE_REFERENCES");
        const QString outDir = m_tmp.filePath(QStringLiteral("reference-actual"));
        QVERIFY(QDir().mkpath(outDir));
        QStringList failures;
        auto compare = [&](const QString& name) {
            const QString actualPath = outDir + QLatin1Char('/') + name;
            const QImage actual(actualPath);
            if (actual.isNull()) {
                failures << name + QStringLiteral(": not rendered");
                return;
            }
            if (update) {
                QFile::remove(refDir + QLatin1Char('/') + name);
                QVERIFY(QFile::copy(actualPath, refDir + QLatin1Char('/') + name));
                return;
            }
            const QImage ref(refDir + QLatin1Char('/') + name);
            if (ref.isNull() || ref.size() != actual.size()) {
                failures << QStringLiteral("%1: size %2x%3, reference %4x%5 (%6)")
                                .arg(name)
                                .arg(actual.width())
                                .arg(actual.height())
                                .arg(ref.width())
                                .arg(ref.height())
                                .arg(actualPath);
                return;
            }
            const QImage a = actual.convertToFormat(QImage::Format_ARGB32), b = ref.convertToFormat(QImage::Format_ARGB32);
            qint64 differing = 0;
            for (int y = 0; y < a.height(); ++y) {
                const auto* pa = reinterpret_cast<const QRgb*>(a.constScanLine(y));
                const auto* pb = reinterpret_cast<const QRgb*>(b.constScanLine(y));
                for (int x = 0; x < a.width(); ++x) {
                    const int d = std::max({std::abs(qRed(pa[x]) - qRed(pb[x])), std::abs(qGreen(pa[x]) - qGreen(pb[x])),
                                            std::abs(qBlue(pa[x]) - qBlue(pb[x]))});
                    if (d > 40) ++differing;
                }
            }
            const double share = double(differing) / (double(a.width()) * a.height());
            // 0.1 %: about 500 pixels of a 900×560 chart, less than one changed tick label.
            if (share > 0.001)
                failures << QStringLiteral("%1: %2 % of pixels differ (%3)").arg(name).arg(share * 100, 0, 'f', 3).arg(actualPath);
            qInfo("%s: %lld pixels differ", qPrintable(name), differing);
        };

        // The scaling report's six plots: two strategies at 1, 2 and 4 ranks, two repetitions each.
        QList<ReportRun> runs;
        for (const QString& strategy : {QStringLiteral("ddp"), QStringLiteral("fused")})
            for (int world : {1, 2, 4})
                for (int rep : {1, 2}) {
                    const double perEpoch = 12.0 / std::pow(world, strategy == QLatin1String("ddp") ? 0.85 : 0.92) * (1 + 0.03 * rep);
                    QByteArray csv = "epoch,step,wall_s,train_s,val_s,samples_processed_global,steps,throughput_samples_s,data_wait_s,"
                                     "compute_s,allreduce_wait_s,max_rank_wall_s,min_rank_wall_s,train_loss,val_loss,lr,t_end\n";
                    double t = 0;
                    for (int e = 1; e <= 4; ++e) {
                        t += 1.15 * perEpoch;
                        // wall = training + validation (15 % of training)
                        csv += QStringLiteral("%1,%2,%3,%12,%13,256,%4,%5,%6,%7,%8,%3,%3,%9,%10,0.001,%11\n")
                                   .arg(e)
                                   .arg(e * 64 / world)
                                   .arg(1.15 * perEpoch)
                                   .arg(64 / world)
                                   .arg(256 / perEpoch)
                                   .arg(0.08 * perEpoch)
                                   .arg(0.6 * perEpoch)
                                   .arg((world - 1) * 0.05 * perEpoch)
                                   .arg(0.3 / e)
                                   .arg(0.25 / e * (1 - 0.02 * world) * (strategy == QLatin1String("fused") && world == 4 ? 1.2 : 1.0))
                                   .arg(1000 + t, 0, 'f', 3)
                                   .arg(perEpoch)
                                   .arg(0.15 * perEpoch)
                                   .toUtf8();
                    }
                    ReportRun r;
                    r.record.id = QStringLiteral("ref-%1-1x%2-r%3").arg(strategy).arg(world).arg(rep);
                    r.record.strategy = strategy;
                    r.record.nodes = 1;
                    r.record.ranksPerNode = world;
                    r.record.repetition = rep;
                    r.record.state = RunState::Completed;
                    r.epochs = parseEpochsCsv(csv, r.record.id + QStringLiteral("/epochs.csv"));
                    r.manifest.insert(QStringLiteral("start_utc"),
                                      QDateTime::fromSecsSinceEpoch(1000, Qt::UTC).toString(Qt::ISODateWithMs));  // t_end counts from here
                    runs << r;
                }
        const ScalingReport report = buildScalingReport(QStringLiteral("reference"), runs);
        QCOMPARE(report.groups.size(), 6);
        QStringList written;
        QVERIFY(renderReportCharts(report, outDir, {QStringLiteral("png")}, &written));
        const auto charts = buildScalingCharts(report);
        QCOMPARE(charts.size(), 6);
        for (const auto& [name, chart] : charts) {
            compare(name + QStringLiteral(".png"));
            delete chart;
        }

        // The Run tab's four charts of a finished run, exported at their default size.
        const QString root = m_tmp.filePath(QStringLiteral("ws-reference"));
        const QString id = QStringLiteral("ref-ddp-1x2-r1");
        QVERIFY(saveLocalRun(
            root, id, 2,
            {{RunState::Queued, QStringLiteral("local: job 1")}, {RunState::Completed, QStringLiteral("local: COMPLETED (exit 0)")}}));
        QFile m(Workspace(root).runDir(id) + QStringLiteral("/metrics.jsonl"));
        QVERIFY(m.open(QIODevice::WriteOnly));
        for (int i = 1; i <= 400; ++i) {
            m.write(QStringLiteral("{\"kind\":\"step\",\"step\":%1,\"t\":%2,\"loss\":%3,\"lr\":%4,\"compute_s\":%5,\"comm_exposed_s\":0.05,"
                                   "\"data_s\":0.01}\n")
                        .arg(i)
                        .arg(1000 + 0.3 * i)
                        .arg(0.3 * std::exp(-i / 150.0) + 0.02 + 0.01 * std::sin(i * 0.7))
                        .arg(0.001 * (1 + std::cos(3.14159265 * i / 400)) / 2)
                        .arg(0.2 + 0.02 * std::sin(i * 0.3))
                        .toUtf8());
            if (i % 100 == 0)
                m.write(
                    QStringLiteral("{\"kind\":\"epoch\",\"epoch\":%1,\"step\":%2,\"t\":%3,\"train_loss\":%4,\"val_loss\":%5,\"lr\":0.001,"
                                   "\"samples_per_s\":%6,\"epoch_s\":30}\n")
                        .arg(i / 100)
                        .arg(i)
                        .arg(1000 + 0.3 * i)
                        .arg(0.3 * std::exp(-i / 150.0) + 0.03)
                        .arg(0.3 * std::exp(-i / 170.0) + 0.04)
                        .arg(100 + 5 * (i / 100))
                        .toUtf8());
        }
        m.close();
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QTRY_COMPARE(w.runModel()->rowCount(), 1);
        w.runTable()->selectRow(0);
        QTRY_VERIFY(w.runView()->charts().first()->pointsShown() > 0);
        const QStringList names{QStringLiteral("run_loss"), QStringLiteral("run_lr"), QStringLiteral("run_throughput"),
                                QStringLiteral("run_breakdown")};
        QCOMPARE(w.runView()->charts().size(), names.size());
        for (int i = 0; i < names.size(); ++i) {
            QVERIFY(w.runView()->charts()[i]->exportTo(outDir + QLatin1Char('/') + names[i] + QStringLiteral(".png"), QSize(900, 560), 96));
            compare(names[i] + QStringLiteral(".png"));
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }

    // A title longer than its chart is cut with "…" and whole in the tooltip; a wide chart shows it
    // whole; an export lays the title out at the file's width.
    void longTitlesElideWithTheirTextInATooltip()
    {
        const QString title = QStringLiteral("Time to reach the target validation loss of 0.0800 by strategy and ranks");
        SeriesChart chart(title);
        chart.resize(300, 240);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QTRY_VERIFY(chart.chart()->title().endsWith(QStringLiteral("…")));
        QCOMPARE(chart.toolTip(), title);
        QCOMPARE(fullChartTitle(chart.chart()), title);
        QVERIFY(QFontMetricsF(chart.chart()->titleFont()).horizontalAdvance(chart.chart()->title()) <= 300);
        chart.resize(1400, 500);
        QTRY_COMPARE(chart.chart()->title(), title);
        QCOMPARE(chart.toolTip(), QString());
        // The scaling view's charts: the same rule.
        const ScalingReport rep = buildScalingReport(QStringLiteral("empty"), {});
        auto charts = buildScalingCharts(rep);
        QVERIFY(!charts.isEmpty());
        FittedChartView view(charts.first().second);
        const QString full = fullChartTitle(view.chart());
        view.chart()->setProperty("scaledeskFullTitle", full + QStringLiteral(" with a much longer explanation than fits"));
        view.resize(260, 200);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(view.chart()->title().endsWith(QStringLiteral("…")));
        QVERIFY(view.toolTip().startsWith(full));
        for (qsizetype i = 1; i < charts.size(); ++i) delete charts[i].second;
    }

    // `scaledesk plan --nodes 2` predicts one point per strategy: no line or band can be drawn
    // through it, so each predicted point has a hollow marker, and a lone one its ±2σ range as a
    // vertical bar; two points get markers and the band, no bar.
    void aPlanOfOnePointStillShowsIt()
    {
        for (int count : {1, 2}) {
            Plan plan;
            for (int i = 0; i < count; ++i) {
                PlanPoint p;
                p.strategy = QStringLiteral("ddp");
                p.ranks = 2 << i;
                p.epochS = 4.5 * (i + 1);
                p.epochLowS = 4.2 * (i + 1);
                p.epochHighS = 4.8 * (i + 1);
                p.efficiency = p.efficiencyLow = p.efficiencyHigh = 0.8;
                p.nodeHours = 0.01;
                plan.points << p;
            }
            const auto charts = buildPlanCharts(plan);
            QCOMPARE(charts.first().first, QStringLiteral("plan_epoch_time"));
            int markers = 0, bars = 0;
            for (QAbstractSeries* s : charts.first().second->series()) {
                if (auto* dots = qobject_cast<QScatterSeries*>(s)) {
                    markers += int(dots->count());
                    // Hollow (filled with the chart's background): predicted, not measured.
                    QVERIFY(dots->color() != dots->borderColor());
                    QVERIFY(dots->color().lightness() > 240);  // this test's light theme: white
                }
                auto* line = qobject_cast<QLineSeries*>(s);
                if (line && !qobject_cast<QScatterSeries*>(s) && line->name().isEmpty() && line->count() == 2 &&
                    line->at(0).x() == line->at(1).x()) {
                    ++bars;  // log10 of the range's ends
                    QVERIFY(std::abs(line->at(0).y() - std::log10(4.2)) < 1e-9 && std::abs(line->at(1).y() - std::log10(4.8)) < 1e-9);
                }
            }
            QCOMPARE(markers, count);
            QCOMPARE(bars, count == 1 ? 1 : 0);
            for (const auto& c : charts) delete c.second;
        }
    }

    // An empty workspace opens on the welcome panel. Its demo button runs the demo sweep on this
    // machine, one run at a time with a progress bar in the status bar; each run is selected as it
    // starts, so the Run tab's charts fill live; at the end the Scaling tab has the sweep's report.
    void welcomePanelRunsTheDemoAndChartsFill()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        qputenv("SCALEDESK_TRAINER_SOURCES", SCALEDESK_SOURCE_DIR);
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("welcome-ws")));
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY(w.welcomeShown());
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) w.grab().save(shots + QStringLiteral("/welcome.png"));
        WelcomePanel* welcome = w.welcome();
        QVERIFY(welcome->isVisible());
        QVERIFY(welcome->clusterButton()->isVisible() && welcome->editorButton()->isVisible());
        auto* docs = welcome->findChild<QLabel*>(QStringLiteral("docsLink"));
        QVERIFY(docs && docs->text().contains(QStringLiteral("gui.md")));
        // The config editor button leaves the panel for the Config tab; Help → Welcome comes back.
        QTest::mouseClick(welcome->editorButton(), Qt::LeftButton);
        QVERIFY(!w.welcomeShown());
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.configEditor()));
        QAction* back = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QStringLiteral("Welcome")) back = a;
        QVERIFY(back);
        back->trigger();
        QVERIFY(w.welcomeShown());

        QSignalSpy finished(&controller, &WorkspaceController::demoFinished);
        QStringList tasks;
        qint64 lastTotal = -1;
        connect(&controller, &WorkspaceController::taskProgress, this, [&](const QString& t, const QString&, qint64, qint64 total) {
            tasks << t;
            if (t == QLatin1String("demo")) lastTotal = total;
        });
        QTest::mouseClick(welcome->demoButton(), Qt::LeftButton);
        QVERIFY(!w.welcomeShown());
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.runView()));
        // The status bar shows the demo's progress with a Cancel button.
        QTRY_VERIFY(w.progressPanel()->isVisible());
        QVERIFY(w.progressPanel()->cancelButton()->isVisible());
        QTRY_COMPARE(lastTotal, qint64(4));
        // The first run is selected as it starts and its loss curve fills while it trains.
        QTRY_VERIFY_WITH_TIMEOUT(w.runView()->runId() == QStringLiteral("demo-ddp-1x1-r1"), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(w.runView()->charts().first()->pointsShown() > 0, 120000);
        if (!shots.isEmpty()) {
            QTest::qWait(3000);
            w.grab().save(shots + QStringLiteral("/demo-running.png"));
        }
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 600000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(w.runModel()->rowCount(), 4);
        for (int r = 0; r < 4; ++r)
            QCOMPARE(w.runModel()->data(w.runModel()->index(r, RunListModel::State)).toString(), QStringLiteral("completed"));
        QVERIFY(w.runView()->runId().startsWith(QStringLiteral("demo-")));
        QTRY_VERIFY(!w.progressPanel()->isVisible());
        // The Scaling tab shows the demo's report: four runs.
        QTRY_COMPARE_WITH_TIMEOUT(w.scalingView()->report().runs.size(), qsizetype(4), 30000);
        QCOMPARE(w.scalingView()->report().sweep, QStringLiteral("demo"));
        QVERIFY(tasks.contains(QStringLiteral("demo")));
        // A true weak-scaling sweep, from what the runs wrote: the 2-rank run trains twice the 1-rank
        // run's global batch per step, at NERSC's scaled learning rate: cpu-demo's sqrt scaling makes
        // the 2-rank run's peak √(8/4) × 1e-3, reached by a linear warm-up over 16 steps (NERSC warms
        // up only a global batch above base_batch_size: the 1-rank run starts its cosine at 1e-3).
        QCOMPARE(w.scalingView()->report().scalingMeasured, QStringLiteral("weak"));
        auto stepRecords = [&](const QString& id) {
            QList<QJsonObject> out;
            QFile f(controller.workspace().runDir(id) + QStringLiteral("/metrics.jsonl"));
            if (!f.open(QIODevice::ReadOnly)) return out;
            for (const QByteArray& line : f.readAll().split('\n')) {
                const QJsonObject o = QJsonDocument::fromJson(line).object();
                if (o.value(QStringLiteral("kind")).toString() == QLatin1String("step")) out << o;
            }
            return out;
        };
        const QList<QJsonObject> one = stepRecords(QStringLiteral("demo-ddp-1x1-r1")), two = stepRecords(QStringLiteral("demo-ddp-1x2-r1"));
        QVERIFY(one.size() >= 8 && two.size() >= 8);
        QCOMPARE(two.first().value(QStringLiteral("samples")).toDouble(), 2 * one.first().value(QStringLiteral("samples")).toDouble());
        QVERIFY(std::abs(one.first().value(QStringLiteral("lr")).toDouble() - 1e-3) < 1e-6);
        for (int i = 0; i < 8; ++i) {
            const double step = two[i].value(QStringLiteral("step")).toDouble();
            const double expected = step / 16 * std::sqrt(8.0 / 4.0) * 1e-3;
            QVERIFY2(std::abs(two[i].value(QStringLiteral("lr")).toDouble() - expected) < 1e-12 * 1e3 * expected,
                     qPrintable(QStringLiteral("step %1: lr %2, expected %3")
                                    .arg(step)
                                    .arg(two[i].value(QStringLiteral("lr")).toDouble())
                                    .arg(expected)));
        }
        // Validation in epoch time (as `report --include-validation`): each run's epoch time grows
        // by its validation time.
        const ReportRunRow trainOnly = w.scalingView()->report().runs.first();
        QVERIFY(!w.scalingView()->includeValidationBox()->isChecked());
        QVERIFY(trainOnly.validationS > 0);
        w.scalingView()->includeValidationBox()->setChecked(true);
        QTRY_VERIFY(std::abs(w.scalingView()->report().runs.first().epochS - trainOnly.epochS) > 1e-9);
        QVERIFY2(std::abs(w.scalingView()->report().runs.first().epochS - (trainOnly.epochS + trainOnly.validationS)) <
                     1e-3 * trainOnly.epochS,
                 qPrintable(QStringLiteral("%1 vs %2 + %3")
                                .arg(w.scalingView()->report().runs.first().epochS)
                                .arg(trainOnly.epochS)
                                .arg(trainOnly.validationS)));
        // The prediction overlay: the model fitted to the demo's runs, each strategy's prediction
        // dashed over its band on epoch time and efficiency, beside the measured lines.
        QVERIFY(!w.scalingView()->plan());
        w.scalingView()->predictionBox()->setChecked(true);
        QTRY_VERIFY_WITH_TIMEOUT(w.scalingView()->plan() != nullptr, 60000);
        QVERIFY(!w.scalingView()->plan()->points.isEmpty());
        for (int chart : {0, 2}) {
            QStringList names;
            int bands = 0;
            for (QAbstractSeries* s : w.scalingView()->chartAt(chart)->series()) {
                names << s->name();
                bands += s->type() == QAbstractSeries::SeriesTypeArea;
            }
            QVERIFY2(names.contains(QStringLiteral("ddp predicted")) && names.contains(QStringLiteral("ddp")),
                     qPrintable(names.join(QLatin1Char(','))));
            QSet<QString> strategies;
            for (const PlanPoint& p : w.scalingView()->plan()->points) strategies.insert(p.strategy);
            QCOMPARE(bands, int(strategies.size()));  // a band per strategy predicted
        }
        // The view's export (its one page) carries the prediction it shows.
        const QString page = m_tmp.filePath(QStringLiteral("predicted-page.svg"));
        QVERIFY(renderReportPage(w.scalingView()->report(), page, 96, w.scalingView()->plan()));
        QFile pageFile(page);
        QVERIFY(pageFile.open(QIODevice::ReadOnly));
        QVERIFY(pageFile.readAll().contains("ddp predicted"));
        w.scalingView()->predictionBox()->setChecked(false);
        QTRY_VERIFY(!w.scalingView()->plan());
        // Runs exist: the next window opens on the tabs.
        MainWindow again(controller);
        controller.refresh();
        QTRY_VERIFY(!again.welcomeShown());
#endif
    }

    // Cancel, Checkpoint & stop and Requeue follow the run's state: enabled where the lifecycle
    // layer allows them, disabled with its reason as the tooltip elsewhere, and with no run shown.
    void actionButtonsFollowTheRunState()
    {
        const QString root = m_tmp.filePath(QStringLiteral("states-ws"));
        const QList<RunState> states{RunState::Submitting, RunState::Queued,       RunState::Running,
                                     RunState::Requeued,   RunState::Completed,    RunState::Failed,
                                     RunState::Cancelled,  RunState::SubmitFailed, RunState::Lost};
        {
            auto store = RunStore::open(Workspace(root));
            QVERIFY(store);
            for (RunState st : states) {
                RunRecord r;
                r.id = QStringLiteral("state-") + runStateName(st);
                r.profile = QStringLiteral("offline");  // no such profile: no poll moves these states on
                r.remoteDir = QStringLiteral("/nowhere/") + r.id;
                r.jobId = st == RunState::Submitting ? QString() : QStringLiteral("1");
                r.submitStep = st == RunState::SubmitFailed ? QStringLiteral("sbatch") : QStringLiteral("recorded");
                r.transition(st);
                QVERIFY((*store)->save(r));
            }
        }
        WorkspaceController controller(root);
        RunView view(controller);
        for (QPushButton* b : {view.cancelButton(), view.stopButton(), view.requeueButton()}) {
            QVERIFY(!b->isEnabled());
            QCOMPARE(b->toolTip(), QStringLiteral("Select a run first."));
        }
        QVERIFY(!view.folderButton()->isEnabled());  // no run, no folder to open (issue 34 item 10)
        // The loss on a log axis, as Compare's "Log y" (issue 34); the other charts stay linear.
        QVERIFY(!view.charts()[0]->logY());
        view.logLossBox()->click();
        QVERIFY(view.charts()[0]->logY());
        QVERIFY(!view.charts()[1]->logY());
        view.logLossBox()->click();
        QVERIFY(!view.charts()[0]->logY());
        for (RunState st : states) {
            const QString id = QStringLiteral("state-") + runStateName(st);
            view.showRun(id);
            QTRY_VERIFY(controller.snapshot(id));
            RunRecord r = controller.snapshot(id)->record;
            for (auto [button, action] :
                 {std::pair{view.cancelButton(), RunAction::Cancel}, std::pair{view.stopButton(), RunAction::CheckpointStop},
                  std::pair{view.requeueButton(), RunAction::Requeue}}) {
                const ActionCheck c = checkAction(action, r);
                QCOMPARE(button->isEnabled(), c.allowed);
                QCOMPARE(button->toolTip(), c.reason);
                if (!c.allowed) QVERIFY(!button->toolTip().isEmpty());
            }
            // Spot checks of the rule itself, as a user reads it.
            if (st == RunState::Running)
                QVERIFY(view.cancelButton()->isEnabled() && view.stopButton()->isEnabled() && !view.requeueButton()->isEnabled());
            if (st == RunState::Queued) QVERIFY(view.stopButton()->toolTip().contains(QStringLiteral("not running yet")));
            if (st == RunState::Completed) QVERIFY(!view.cancelButton()->isEnabled() && view.requeueButton()->isEnabled());
            QVERIFY(view.folderButton()->isEnabled());
        }
    }

    // The window's launch and cancel go through the lifecycle layer: the sweep's partial-failure
    // policy is the command line's (tests/backend/cli), and a cancel is in the run's history.
    void windowLaunchAndCancelFollowTheLifecycleLayer()
    {
#ifndef SCALEDESK_TRAIN_BIN
        QSKIP("the trainer is not built (SCALEDESK_BUILD_TRAINER=OFF)");
#else
        qputenv("SCALEDESK_TRAIN", SCALEDESK_TRAIN_BIN);
        const QString root = m_tmp.filePath(QStringLiteral("policy-ws"));
        WorkspaceController controller(root);
        LaunchDialog d(root, QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"));
        d.sweepEdit()->setText(QStringLiteral("pf"));
        d.configCombo()->setCurrentText(QStringLiteral("cpu-short"));
        QVERIFY2(d.canLaunch(), qPrintable(d.whyNot()));
        LaunchRequest r = d.request();
        r.makeData = true;
        r.points = {r.points[0], r.points[0], r.points[0]};
        for (int i = 0; i < 3; ++i) {
            r.points[i].repetition = i + 1;
            r.points[i].runId = QStringLiteral("pf-ddp-1x1-r%1").arg(i + 1);
        }
        QDir().mkpath(root + QStringLiteral("/local/runs"));
        QFile blocker(root + QStringLiteral("/local/runs/pf-ddp-1x1-r2"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QSignalSpy launched(&controller, &WorkspaceController::launchFinished);
        controller.launch(r);
        QTRY_COMPARE_WITH_TIMEOUT(launched.size(), 1, 120000);
        QCOMPARE(launched.at(0).at(0).toBool(), false);
        QVERIFY2(launched.at(0).at(1).toString().contains(QStringLiteral("2 of 3 run(s) submitted; 1 failed")),
                 qPrintable(launched.at(0).at(1).toString()));
        auto state = [&](const QString& id) {
            for (const RunSummary& s : controller.runs())
                if (s.id == id) return s.state;
            return RunState::Draft;
        };
        QTRY_COMPARE(state(QStringLiteral("pf-ddp-1x1-r2")), RunState::SubmitFailed);
        QVERIFY(isActive(state(QStringLiteral("pf-ddp-1x1-r1"))) || state(QStringLiteral("pf-ddp-1x1-r1")) == RunState::Completed);
        // Cancel the third once it runs: recorded in its history, and it ends cancelled.
        const QString id = QStringLiteral("pf-ddp-1x1-r3");
        QTRY_COMPARE_WITH_TIMEOUT(state(id), RunState::Running, 120000);
        QSignalSpy acted(&controller, &WorkspaceController::actionFinished);
        controller.cancel(id);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 1, 60000);
        QVERIFY2(acted.at(0).at(2).toBool(), qPrintable(acted.at(0).at(3).toString()));
        QTRY_COMPARE_WITH_TIMEOUT(state(id), RunState::Cancelled, 120000);
        bool noted = false;
        for (const auto& h : controller.snapshot(id)->record.history)
            noted = noted || h.note == QLatin1String("cancel requested by the user");
        QVERIFY(noted);
        // Cancelling again is refused by the same rule the command line uses.
        controller.cancel(id);
        QTRY_COMPARE_WITH_TIMEOUT(acted.size(), 2, 30000);
        QVERIFY(!acted.at(1).at(2).toBool());
        QVERIFY2(acted.at(1).at(3).toString().contains(QStringLiteral("already ended")), qPrintable(acted.at(1).at(3).toString()));
        // The first run is not needed any more: cancel it rather than wait for its ten epochs (minutes
        // under the sanitizers), so nothing is left running.
        if (isActive(state(QStringLiteral("pf-ddp-1x1-r1")))) controller.cancel(QStringLiteral("pf-ddp-1x1-r1"));
        QTRY_VERIFY_WITH_TIMEOUT(!isActive(state(QStringLiteral("pf-ddp-1x1-r1"))), 180000);
#endif
    }

    // File → Import… (and the welcome panel's button) imports the NERSC tutorial's run through the
    // backend's importRuns: it appears in the navigator as imported, is selected, its curves show,
    // and every run action is disabled with the reason.
    void importShowsTheRunReadOnly()
    {
        const QString source = QStringLiteral(SCALEDESK_SOURCE_DIR "/tests/backend/runs/data/nersc-example-logs");
        WorkspaceController controller(m_tmp.filePath(QStringLiteral("ws-import")));
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY(w.welcomeShown());
        QVERIFY(w.welcome()->importButton()->isVisible());
        QSignalSpy finished(&controller, &WorkspaceController::importFinished);
        // The folder dialog, answered as a user would: the folder typed in, then Choose.
        bool answered = false;
        QTimer::singleShot(0, this, [&] {
            QTRY_VERIFY(qobject_cast<QFileDialog*>(QApplication::activeModalWidget()));
            auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
            dialog->selectFile(source);
            static_cast<QDialog*>(dialog)->accept();
            answered = true;
        });
        QTest::mouseClick(w.welcome()->importButton(), Qt::LeftButton);
        QVERIFY(answered);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 30000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(finished.at(0).at(2).toStringList(), QStringList{QStringLiteral("base-1GPU-00")});
        QTRY_COMPARE(w.runView()->runId(), QStringLiteral("base-1GPU-00"));
        QTRY_VERIFY_WITH_TIMEOUT(w.runView()->charts().first()->pointsShown() > 0, 30000);
        QCOMPARE(w.runView()->charts().first()->pointsShown(), 22);     // Loss/train and Loss/valid: step 0 and 10 epochs each
        QTRY_VERIFY(w.runView()->charts().at(1)->pointsShown() == 10);  // Learning Rate, per epoch
        // Its log is the NERSC trainer's out.log (no job ran here, so no "Job output").
        auto* log = w.runView()->findChild<QPlainTextEdit*>();
        QVERIFY(log);
        QTRY_VERIFY(log->toPlainText().contains(QStringLiteral("Time taken for epoch 10 is 763.1262722015381 sec")));
        // The navigator says where it came from.
        const QAbstractItemModel* model = w.runTable()->model();
        QCOMPARE(model->rowCount(), 1);
        QCOMPARE(model->index(0, RunListModel::Profile).data().toString(), QStringLiteral("imported"));
        QVERIFY(model->index(0, RunListModel::Profile).data(Qt::ToolTipRole).toString().contains(QStringLiteral("base/1GPU/00")));
        // Read-only: no action applies, and each button says why.
        for (QPushButton* b : {w.runView()->cancelButton(), w.runView()->stopButton(), w.runView()->requeueButton()}) {
            QVERIFY(!b->isEnabled());
            QVERIFY2(b->toolTip().contains(QStringLiteral("read-only")), qPrintable(b->toolTip()));
        }
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) w.grab().save(shots + QStringLiteral("/imported.png"));
        // The same folder again: refused, with the reason in a message box, and nothing added. The
        // dialogs are answered from a timer, which never waits inside their event loops.
        QString boxText;
        QTimer answer;
        answer.setInterval(50);
        connect(&answer, &QTimer::timeout, this, [&] {
            QWidget* modal = QApplication::activeModalWidget();
            if (auto* dialog = qobject_cast<QFileDialog*>(modal)) {
                dialog->selectFile(source);
                static_cast<QDialog*>(dialog)->accept();
            } else if (auto* box = qobject_cast<QMessageBox*>(modal)) {
                boxText = box->text();
                box->close();
                answer.stop();
            }
        });
        answer.start();
        w.findChild<QAction*>(QStringLiteral("importRuns"))->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 30000);
        QVERIFY(!finished.at(1).at(0).toBool());
        QTRY_VERIFY2(boxText.contains(QStringLiteral("in the workspace already")), qPrintable(boxText));
        QCOMPARE(model->rowCount(), 1);
        answer.stop();
        // A run with a tag of its own (a TensorBoard scalar): Compare offers it, and charts it.
        const QString other = m_tmp.filePath(QStringLiteral("elsewhere/top1-run"));
        QVERIFY(QDir().mkpath(other));
        QFile manifest(other + QStringLiteral("/manifest.json"));
        QVERIFY(manifest.open(QIODevice::WriteOnly));
        manifest.write(R"({"run_id":"top1-run","strategy":"ddp","world_size":1,"status":"finished"})");
        manifest.close();
        QFile metrics(other + QStringLiteral("/metrics.jsonl"));
        QVERIFY(metrics.open(QIODevice::WriteOnly));
        for (int i = 0; i < 5; ++i)
            metrics.write(QStringLiteral(R"({"kind":"scalar","tag":"accuracy/top1","step":%1,"t":%2,"value":%3})"
                                         "\n")
                              .arg(100 * i)
                              .arg(1700000000 + i)
                              .arg(0.5 + 0.1 * i)
                              .toUtf8());
        metrics.close();
        controller.importRuns({other}, {});
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 3, 30000);
        QVERIFY2(finished.at(2).at(0).toBool(), qPrintable(finished.at(2).at(1).toString()));
        w.compareView()->setRuns({QStringLiteral("base-1GPU-00"), QStringLiteral("top1-run")});
        QTRY_VERIFY(w.compareView()->tagChoices().contains(QStringLiteral("accuracy/top1")));
        QVERIFY(w.compareView()->tagChoices().startsWith(QStringLiteral("Loss/valid")));
        w.compareView()->setTags({QStringLiteral("accuracy/top1")});
        QTRY_COMPARE(w.compareView()->chart()->pointsShown(), 5);
        QTRY_COMPARE(model->rowCount(), 2);
    }

    void theKeyboardReachesEverything()
    {
        const QString root = m_tmp.filePath(QStringLiteral("ws-keys"));
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1200, 800);
        w.show();
        QApplication::setActiveWindow(&w);
        QVERIFY(QTest::qWaitForWindowActive(&w));
        // Tab leaves the run list instead of walking its columns.
        w.runTable()->setFocus();
        QTRY_VERIFY(w.runTable()->hasFocus());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QVERIFY(!w.runTable()->hasFocus());
        // Ctrl+F: the run filter.
        QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
        auto* filter = qobject_cast<QLineEdit*>(QApplication::focusWidget());
        QVERIFY(filter && filter->placeholderText().startsWith(QStringLiteral("Filter runs")));
        // Ctrl+1…4 switch tabs.
        QTest::keyClick(&w, Qt::Key_3, Qt::ControlModifier);
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.scalingView()));
        QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
        QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.runView()));
        // A menu bar holds every action, with its shortcut.
        QStringList menus;
        for (QAction* a : w.menuBar()->actions()) menus << a->text().remove(QLatin1Char('&'));
        QCOMPARE(menus, (QStringList{QStringLiteral("File"), QStringLiteral("Run"), QStringLiteral("View"), QStringLiteral("Help")}));
        QStringList shortcuts;
        for (QAction* m : w.menuBar()->actions())
            for (QAction* a : m->menu()->actions())
                if (!a->shortcut().isEmpty()) shortcuts << a->text() + QLatin1Char('=') + a->shortcut().toString();
        for (const QString& expected :
             {QStringLiteral("Launch…=Ctrl+L"), QStringLiteral("Refresh=F5"), QStringLiteral("Export view…=Ctrl+E"),
              QStringLiteral("Find=Ctrl+F"), QStringLiteral("Save config=Ctrl+S")})
            QVERIFY2(shortcuts.contains(expected), qPrintable(shortcuts.join(QStringLiteral(", "))));
    }

    void aLongStatusNeverWidensTheWindow()
    {
        // A run whose last message is a long submit error (it widened the window to 2004 px).
        const QString root = m_tmp.filePath(QStringLiteral("ws-long"));
        const QString longMessage =
            QStringLiteral("sbatch: error: ") + QString(QStringLiteral("Batch job submission failed: ")).repeated(40);
        QVERIFY(
            saveLocalRun(root, QStringLiteral("a-run-with-a-rather-long-identifier-x1-r1"), 1, {{RunState::SubmitFailed, longMessage}}));
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1200, 800);
        w.show();
        QTRY_COMPARE(w.runModel()->rowCount(), 1);
        const int before = w.width();
        w.runTable()->selectRow(0);
        QTRY_VERIFY(w.runView()->headerText().contains(QStringLiteral("Batch job submission failed")));
        QTest::qWait(50);
        QCOMPARE(w.width(), before);
        QVERIFY(w.runView()->headerText().contains(longMessage));  // all of it, in the tooltip
        QVERIFY(w.runTable()->wordWrap() == false);                // run ids stay on one line
    }

    void mainWindowShowsARunsCurves()
    {
        // A workspace with one finished run and its mirrored metrics.
        const QString root = m_tmp.filePath(QStringLiteral("ws"));
        {
            QVERIFY(saveLocalRun(
                root, QStringLiteral("demo-ddp-1x2-r1"), 2,
                {{RunState::Queued, QStringLiteral("local: job 1")}, {RunState::Completed, QStringLiteral("local: COMPLETED (exit 0)")}}));
            QFile m(Workspace(root).runDir(QStringLiteral("demo-ddp-1x2-r1")) + QStringLiteral("/metrics.jsonl"));
            QVERIFY(m.open(QIODevice::WriteOnly));
            for (int i = 1; i <= 400; ++i)
                m.write(QStringLiteral("{\"kind\":\"step\",\"step\":%1,\"t\":%2,\"loss\":%3,\"lr\":0.001,\"compute_s\":0.2,\"comm_exposed_"
                                       "s\":0.05,\"data_s\":0.01}\n")
                            .arg(i)
                            .arg(1000 + i)
                            .arg(0.3 * std::exp(-i / 150.0) + 0.02)
                            .toUtf8());
        }
        WorkspaceController controller(root);
        MainWindow w(controller);
        w.resize(1400, 900);
        w.show();
        QTRY_COMPARE(w.runModel()->rowCount(), 1);
        QVERIFY(w.profileList()->count() >= 1);  // the built-in local profile
        QVERIFY(w.profileList()->item(0)->text().startsWith(QStringLiteral("local — local (this machine)")));
        w.runTable()->selectRow(0);
        QTRY_VERIFY(w.runView()->charts().first()->pointsShown() > 0);
        QVERIFY(w.runView()->charts().first()->pointsShown() <= 2 * w.runView()->charts().first()->plotWidth() + 4);
        // The rank selector lists the run's ranks, rank 0 included; a rank without a log says so.
        QComboBox* ranks = w.runView()->rankSelector();
        QCOMPARE(ranks->count(), 3);
        QCOMPARE(ranks->itemText(1), QStringLiteral("Rank 0 (out.log)"));
        QCOMPARE(ranks->itemText(2), QStringLiteral("Rank 1"));
        ranks->setCurrentIndex(2);
        QTRY_VERIFY2(w.runView()->logPlaceholder().contains(QStringLiteral("Rank 1 has written no log yet")),
                     qPrintable(w.runView()->logPlaceholder()));
        ranks->setCurrentIndex(0);
        // Compare: one run gets a hint, not only an empty-looking chart; the smoothing shows its value.
        w.compareView()->setRuns({});
        QVERIFY(w.compareView()->hint().contains(QStringLiteral("Select several runs")));
        w.compareView()->smoothingSlider()->setValue(60);
        QCOMPARE(w.compareView()->smoothingText(), QStringLiteral("0.60"));
        w.compareView()->smoothingSlider()->setValue(0);
        // Compare: one chart per chosen tag.
        w.compareView()->setRuns({QStringLiteral("demo-ddp-1x2-r1")});
        QVERIFY(w.compareView()->hint().contains(QStringLiteral("One run so far")));
        w.compareView()->setTags({QStringLiteral("step/loss"), QStringLiteral("step/lr")});
        QCOMPARE(w.compareView()->charts().size(), 2);
        QTRY_VERIFY(w.compareView()->charts()[0]->pointsShown() > 0);
        // Stacked charts share the height equally.
        w.tabs()->setCurrentWidget(w.compareView());
        QTRY_VERIFY(w.compareView()->charts()[1]->isVisible());
        QVERIFY2(
            std::abs(w.compareView()->charts()[0]->height() - w.compareView()->charts()[1]->height()) <= 2,
            qPrintable(QStringLiteral("%1 vs %2").arg(w.compareView()->charts()[0]->height()).arg(w.compareView()->charts()[1]->height())));
        w.tabs()->setCurrentIndex(0);
        // A whole view as one image.
        for (const char* ext : {"png", "svg", "pdf"}) {
            const QString path = m_tmp.filePath(QStringLiteral("view.%1").arg(QLatin1String(ext)));
            const auto ok = exportWidget(w.runView(), path);
            QVERIFY2(ok, qPrintable(ok ? QString() : ok.error().text()));
            QVERIFY(QFileInfo(path).size() > 5000);
        }
        QCOMPARE(QImage(m_tmp.filePath(QStringLiteral("view.png"))).size(), w.runView()->size());
        const auto bad = exportWidget(w.runView(), QStringLiteral("/proc/nope/view.png"));
        QVERIFY(!bad);
        QVERIFY(bad.error().text().startsWith(QStringLiteral("/proc/nope/view.png")));
        const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR");
        if (!shots.isEmpty()) {
            QTest::qWait(200);
            w.grab().save(shots + QStringLiteral("/main-window-run.png"));
            w.runView()->charts().first()->showCrosshairAt(120);
            w.runView()->charts().first()->grab().save(shots + QStringLiteral("/chart-crosshair.png"));
            w.runView()->charts().first()->hideCrosshair();
            w.tabs()->setCurrentIndex(2);
            QTest::qWait(200);
            w.grab().save(shots + QStringLiteral("/main-window-scaling.png"));
        }
    }

    // What a server says (a keyboard-interactive name, instruction and prompt) and what a command
    // printed (a failed deploy's build log) are shown as the characters they are: markup is not
    // rendered, a link is not a link, terminal escapes are gone, and a flood is cut.
    void textFromAServerIsShownAsPlainText()
    {
        Prompter prompter;
        const SshCallbacks cb = prompter.callbacks(QStringLiteral("hostile"));
        QString shown;
        bool linked = true;
        QTimer::singleShot(0, this, [&] {
            QTRY_VERIFY(qobject_cast<QInputDialog*>(QApplication::activeModalWidget()));
            auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            auto* label = dialog->findChild<QLabel*>();
            QVERIFY(label);
            QTextDocument doc;
            doc.setHtml(label->text());
            shown = doc.toPlainText();
            linked = label->text().contains(QStringLiteral("<a "));
            if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
                dialog->grab().save(shots + QStringLiteral("/login-prompt-plain.png"));
            dialog->setTextValue(QStringLiteral("123456"));
            dialog->accept();
        });
        const auto answers = cb.keyboardInteractive(QStringLiteral("<b>Duo</b>"),
                                                    QStringLiteral("\x1b[31m<a href='http://evil.example'>click</a>\x1b[0m ") +
                                                        QString(10000, QLatin1Char('x')),
                                                    {{QStringLiteral("<img src='x'>Passcode: "), false}});
        QVERIFY(answers);
        QCOMPARE(*answers, QStringList{QStringLiteral("123456")});
        QVERIFY2(shown.contains(QStringLiteral("<b>Duo</b>")), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("<a href='http://evil.example'>click</a>")), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("<img src='x'>Passcode: ")), qPrintable(shown));
        QVERIFY(!shown.contains(QChar(0x1b)));
        QVERIFY2(shown.contains(QStringLiteral(" more characters)")), qPrintable(shown.right(80)));
        QVERIFY(shown.size() < 5000);
        QVERIFY(!linked);

        QString boxText;
        Qt::TextFormat format = Qt::RichText;
        QTimer::singleShot(0, this, [&] {
            QTRY_VERIFY(qobject_cast<QMessageBox*>(QApplication::activeModalWidget()));
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            boxText = box->text();
            format = box->textFormat();
            if (const QString shots = qEnvironmentVariable("SCALEDESK_SCREENSHOT_DIR"); !shots.isEmpty())
                box->grab().save(shots + QStringLiteral("/message-plain.png"));
            box->accept();
        });
        plainMessage(nullptr, QMessageBox::Warning, QStringLiteral("Deploy"),
                     QStringLiteral("the trainer build failed:\n<h1>\x1b]0;title\x07"
                                    "big</h1>") +
                         QString(100000, QLatin1Char('z')));
        QCOMPARE(format, Qt::PlainText);
        QVERIFY2(boxText.startsWith(QStringLiteral("the trainer build failed:\n<h1>big</h1>")), qPrintable(boxText.left(80)));
        QVERIFY(boxText.size() < 5000);
    }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
