// The charts (gui/charts): two points per pixel column with every spike kept, log axes, ticks that
// read like a plotting library's, the dark palette, exports in every format at a chosen resolution
// (and an unwritable path named), the report's plots in every format, the reference images, elided
// titles, a one-point plan.
#include "guitest.h"

using namespace scaledesk;
using namespace scaledesk::gui;
using namespace scaledesk::gui::test;

class TestGuiCharts : public GuiTestCase {
    Q_OBJECT
private slots:
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
    // through it, so each predicted point has a hollow marker, and a lone one its 90 % range as a
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
};

QTEST_MAIN(TestGuiCharts)
#include "tst_gui_charts.moc"
