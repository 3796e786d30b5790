// The metrics.jsonl parser: every bad-input kind gives a typed warning and never stops the rest;
// chunking never changes the result; NaN is kept; resumed runs keep the newer steps; the NERSC
// TensorBoard tags are there.
#include "analysis/metrics.h"
#include "runs/mirrorreader.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

using namespace scaledesk;

namespace {
// JSON written with single quotes (moc cannot read C++ raw strings), turned into double quotes.
QByteArray j(const char* text) { return QByteArray(text).replace('\'', '"'); }

const QByteArray kGood = j("{'kind':'event','event':'started','step':0,'t':100.0,'epoch':1}") + "\n" +
    j("{'kind':'initial','epoch':0,'step':0,'t':100.5,'train_loss':0.9,'val_loss':0.8}") + "\n" +
    j("{'kind':'step','epoch':1,'step':1,'t':101.0,'loss':0.7,'lr':0.001,'step_s':0.5}") + "\n" +
    j("{'kind':'step','epoch':1,'step':2,'t':101.5,'loss':null,'lr':0.002,'step_s':0.5}") + "\n" +
    j("{'kind':'epoch','epoch':1,'step':2,'t':102.0,'train_loss':0.6,'val_loss':0.55,'lr':0.002,'iters_per_s':4.0,'epoch_s':1.0}") + "\n";

RunMetrics parseAll(const QByteArray& bytes, int chunk)
{
    RunMetrics m;
    MetricsParser p(m);
    QByteArray pending;
    for (int i = 0; i < bytes.size(); i += chunk) {
        pending += bytes.mid(i, chunk);
        const std::size_t used = p.feed(pending.constData(), std::size_t(pending.size()));
        pending = pending.mid(qsizetype(used));
    }
    p.finish(pending.constData(), std::size_t(pending.size()));
    return m;
}
}  // namespace

class TestMetrics : public QObject {
    Q_OBJECT
private slots:
    // A first read of a large mirror reports its progress piece by piece and stops when asked;
    // what was read stays, and the next read goes on from there to the same series as one read.
    void aFirstReadReportsProgressAndStops()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("metrics.jsonl")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray text;
        for (int i = 1; i <= 400000; ++i)
            text += "{\"kind\":\"step\",\"step\":" + QByteArray::number(i) + ",\"t\":" + QByteArray::number(1000 + i) +
                ",\"loss\":0.5,\"lr\":0.001,\"pad\":\"" + QByteArray(40, 'p') + "\"}\n";
        f.write(text);
        f.close();
        QVERIFY(text.size() > 2 * (16 << 20));  // more than two pieces
        MirrorReader reader(dir.path());
        QList<qint64> done;
        qint64 total = 0;
        int asked = 0;
        reader.read(
            {},
            [&](const ProgressStep& s) {
                done << s.done;
                total = s.total;
                QVERIFY(s.transient);
            },
            [&] { return ++asked > 1; });  // stop after the first piece
        QCOMPARE(done.size(), 1);
        QCOMPARE(total, qint64(text.size()));
        QVERIFY(done.first() > 0 && done.first() <= (16 << 20));
        const std::size_t partial = reader.metrics().series(QStringLiteral("step/loss"))->size();
        QVERIFY(partial > 0 && partial < 400000);
        // The next read (no stop) goes on from there.
        const qint64 first = done.first();
        done.clear();
        qint64 rest = 0;
        reader.read({}, [&](const ProgressStep& s) {
            done << s.done;
            rest = s.total;
        });
        QVERIFY(done.size() >= 2);
        QCOMPARE(rest, total - first);  // counted from where the first read stopped
        QCOMPARE(done.last(), rest);    // and to the end
        const Series* loss = reader.metrics().series(QStringLiteral("step/loss"));
        QCOMPARE(loss->size(), std::size_t(400000));
        QCOMPARE(loss->steps().back(), 400000.0);
        QCOMPARE(reader.metrics().pointsStored, loadRunMetrics(f.fileName()).pointsStored);
    }

    // A large file is read in parts, one per core, and joined: the same series, counts and
    // warnings (with their file line numbers) as one parser reading it all, including a resume
    // whose repeated steps cross a cut, and lines that are not JSON in every part.
    void aLargeFileReadInPartsEqualsOneParser()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("metrics.jsonl"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray chunk;
        const int n = 500000;  // ~100 MB: three parts of at least 32 MiB
        auto line = [&](int step, int i) {
            chunk += "{\"kind\":\"step\",\"step\":" + QByteArray::number(step) + ",\"t\":" + QByteArray::number(1000.0 + i, 'f', 3) +
                ",\"loss\":" + QByteArray::number(1.0 / (i + 1), 'g', 17) + ",\"lr\":0.001,\"compute_s\":0.2,\"data_s\":0.01," +
                "\"comm_exposed_s\":0.05,\"step_s\":0.26,\"samples\":64,\"pad\":\"" + QByteArray(60, 'x') + "\"}\n";
            if (i % 20000 == 7) chunk += "{not json\n";
            if (step % 1000 == 0)
                chunk += "{\"kind\":\"epoch\",\"step\":" + QByteArray::number(step) + ",\"t\":" + QByteArray::number(1000.0 + i, 'f', 3) +
                    ",\"train_loss\":0.5,\"val_loss\":0.4,\"lr\":0.001,\"iters_per_s\":4}\n";
            if (chunk.size() > (1 << 20)) {
                f.write(chunk);
                chunk.clear();
            }
        };
        int i = 0;
        for (int step = 1; step <= n; ++step) line(step, i++);
        for (int step = n / 2; step <= n / 2 + n / 4; ++step) line(step, i++);  // a resume from half way
        chunk += "{\"kind\":\"step\",\"step\":999999999,\"t\":5,\"loss\":1";    // no newline at the end
        f.write(chunk);
        f.close();
        QVERIFY(f.size() > 3 * (32 << 20));

        const RunMetrics one = loadRunMetrics(path, 1);
        const RunMetrics parts = loadRunMetrics(path, 3);
        QCOMPARE(parts.tags(), one.tags());
        for (const QString& tag : one.tags()) {
            const Series* a = one.series(tag);
            const Series* b = parts.series(tag);
            QVERIFY2(a->steps() == b->steps(), qPrintable(tag));
            QVERIFY2(a->times() == b->times(), qPrintable(tag));
            QVERIFY2(a->values() == b->values(), qPrintable(tag));
        }
        QCOMPARE(one.series(QStringLiteral("step/loss"))->size(), std::size_t((n / 2 - 1) + (n / 4 + 1)));  // the resume replaced the rest
        QCOMPARE(parts.pointsStored, one.pointsStored);
        QCOMPARE(parts.linesParsed, one.linesParsed);
        QCOMPARE(parts.startTime(), one.startTime());
        auto lines = [](const RunMetrics& m, MetricWarning::Kind kind) {
            QList<qint64> out;
            for (const MetricWarning& w : m.warnings)
                if (w.kind == kind) out << w.line;
            return out;
        };
        QCOMPARE(lines(parts, MetricWarning::Kind::Malformed), lines(one, MetricWarning::Kind::Malformed));
        QVERIFY(lines(one, MetricWarning::Kind::Malformed).size() >= 30);
        QCOMPARE(lines(one, MetricWarning::Kind::RepeatedSteps).size(), 1);
        QVERIFY(!lines(parts, MetricWarning::Kind::RepeatedSteps).isEmpty());
    }

    void goodFileGivesTheSeriesAndTheNerscTags()
    {
        const RunMetrics m = parseAll(kGood, 1 << 20);
        QVERIFY(m.warnings.isEmpty());
        QCOMPARE(m.startTime(), 100.0);
        const Series* loss = m.series(QStringLiteral("step/loss"));
        QVERIFY(loss);
        QCOMPARE(loss->size(), std::size_t(2));
        QCOMPARE(loss->values()[0], 0.7);
        QVERIFY(std::isnan(loss->values()[1]));  // a null loss is kept, as NaN
        QCOMPARE(m.series(QStringLiteral("step/lr"))->values()[1], 0.002);
        const Series* train = m.series(QStringLiteral("Loss/train"));
        QVERIFY(train);
        QCOMPARE(train->size(), std::size_t(2));  // step 0 (initial), then the epoch's
        QCOMPARE(train->steps()[0], 0.0);
        QCOMPARE(train->values()[0], 0.9);
        QCOMPARE(train->steps()[1], 2.0);
        QCOMPARE(train->values()[1], 0.6);
        QCOMPARE(m.series(QStringLiteral("Loss/valid"))->values()[1], 0.55);
        QCOMPARE(m.series(QStringLiteral("Learning Rate"))->values()[0], 0.002);
        QCOMPARE(m.series(QStringLiteral("Avg iters per sec"))->values()[0], 4.0);
        QCOMPARE(m.series(QStringLiteral("epoch/epoch_s"))->times()[0], 102.0);
        QVERIFY(!m.series(QStringLiteral("step/epoch")));  // bookkeeping fields are not series
    }

    void chunkingNeverChangesTheResult_data()
    {
        QTest::addColumn<int>("chunk");
        for (int c : {1, 2, 3, 7, 64, 100, 4096}) QTest::newRow(qPrintable(QString::number(c))) << c;
    }
    // GPU telemetry (one series per rank and field) and imported TensorBoard scalars (their own
    // tags); a record without its rank or its tag is warned about, not guessed.
    void gpuAndScalarRecordsBecomeTheirSeries()
    {
        const QByteArray bytes =
            R"({"kind":"gpu","t":10.0,"step":3,"rank":1,"gpu":1,"power_w":250.5,"util_pct":87,"mem_used_mib":40960}
{"kind":"gpu","t":11.0,"step":4,"rank":1,"gpu":1,"power_w":null,"util_pct":90,"mem_used_mib":40961}
{"kind":"gpu_epoch","t":12.0,"step":4,"rank":0,"energy_wh":0.07,"mean_util_pct":88.5}
{"kind":"scalar","t":13.0,"step":100,"tag":"accuracy/top1","value":0.5}
{"kind":"gpu","t":14.0,"step":5,"power_w":1}
{"kind":"scalar","t":15.0,"step":101,"value":0.5}
)";
        const RunMetrics m = parseAll(bytes, 1 << 20);
        const Series* power = m.series(QStringLiteral("gpu/rank1/power_w"));
        QVERIFY(power);
        QCOMPARE(power->size(), std::size_t(2));
        QCOMPARE(power->values()[0], 250.5);
        QVERIFY(std::isnan(power->values()[1]));  // an unsupported reading is null, kept as NaN
        QCOMPARE(power->steps()[1], 4.0);
        QVERIFY(m.series(QStringLiteral("gpu/rank1/util_pct")));
        QVERIFY(!m.series(QStringLiteral("gpu/rank1/rank")));
        QCOMPARE(m.series(QStringLiteral("gpu_epoch/rank0/energy_wh"))->values()[0], 0.07);
        QCOMPARE(m.series(QStringLiteral("accuracy/top1"))->steps()[0], 100.0);
        QCOMPARE(m.warnings.size(), 2);
        QCOMPARE(m.warnings[0].line, qint64(5));
        QVERIFY(m.warnings[0].message.contains(QStringLiteral("'rank'")));
        QCOMPARE(m.warnings[1].line, qint64(6));
        QVERIFY(m.warnings[1].message.contains(QStringLiteral("'tag'")));
    }

    void chunkingNeverChangesTheResult()
    {
        QFETCH(int, chunk);
        const RunMetrics whole = parseAll(kGood, 1 << 20);
        const RunMetrics pieces = parseAll(kGood, chunk);
        QCOMPARE(pieces.tags(), whole.tags());
        for (const QString& tag : whole.tags()) {
            const Series* a = whole.series(tag);
            const Series* b = pieces.series(tag);
            QCOMPARE(b->steps(), a->steps());
            QCOMPARE(b->times(), a->times());
            QCOMPARE(b->size(), a->size());
            for (std::size_t i = 0; i < a->size(); ++i)
                QVERIFY(a->values()[i] == b->values()[i] || (std::isnan(a->values()[i]) && std::isnan(b->values()[i])));
        }
    }

    void partialLastLineWaitsForItsNewline()
    {
        RunMetrics m;
        MetricsParser p(m);
        const QByteArray half = j("{'kind':'step','step':1,'t':1,'loss':0.5");
        QCOMPARE(p.feed(half.constData(), std::size_t(half.size())), std::size_t(0));
        QVERIFY(!m.series(QStringLiteral("step/loss")));
        const QByteArray whole = half + "}\n";
        QCOMPARE(p.feed(whole.constData(), std::size_t(whole.size())), std::size_t(whole.size()));
        QCOMPARE(m.series(QStringLiteral("step/loss"))->size(), std::size_t(1));
        QVERIFY(m.warnings.isEmpty());
    }

    // One bad line of each kind among good ones: a typed warning naming the line, and the good
    // lines around it all arrive.
    void badLinesAreWarnedAboutAndSkipped_data()
    {
        QTest::addColumn<QByteArray>("bad");
        QTest::addColumn<int>("kind");
        QTest::newRow("truncated") << QByteArray(j("{'kind':'step','step':9,'t':1,'lo")) << int(MetricWarning::Kind::Malformed);
        QTest::newRow("garbled") << QByteArray("{{{:::}}}") << int(MetricWarning::Kind::Malformed);
        QTest::newRow("binary") << QByteArray("\x01\x02\xff\xfe\x00\x10", 6) << int(MetricWarning::Kind::Binary);
        QTest::newRow("invalid utf-8 in a string")
            << QByteArray("{\"kind\":\"step\",\"step\":9,\"t\":1,\"x\":\"\xff\xfe\"}") << int(MetricWarning::Kind::Binary);
        QTest::newRow("array") << QByteArray("[1,2,3]") << int(MetricWarning::Kind::NotAnObject);
        QTest::newRow("number") << QByteArray("42") << int(MetricWarning::Kind::NotAnObject);
        QTest::newRow("no kind") << QByteArray(j("{'step':9,'t':1,'loss':1}")) << int(MetricWarning::Kind::MissingField);
        QTest::newRow("no step") << QByteArray(j("{'kind':'step','t':1,'loss':1}")) << int(MetricWarning::Kind::MissingField);
        QTest::newRow("string step") << QByteArray(j("{'kind':'step','step':'nine','t':1,'loss':1}")) << int(MetricWarning::Kind::BadValue);
        QTest::newRow("trailing junk") << QByteArray(j("{'kind':'step','step':9,'t':1,'loss':1} junk"))
                                       << int(MetricWarning::Kind::Malformed);
        QTest::newRow("too long") << QByteArray("{\"kind\":\"step\",\"x\":\"") + QByteArray(2 << 20, 'a') + "\"}"
                                  << int(MetricWarning::Kind::TooLong);
    }
    void badLinesAreWarnedAboutAndSkipped()
    {
        QFETCH(QByteArray, bad);
        QFETCH(int, kind);
        const QByteArray before = j("{'kind':'step','step':1,'t':1,'loss':0.5}") + "\n";
        const QByteArray after = j("{'kind':'step','step':2,'t':2,'loss':0.4}") + "\n";
        const RunMetrics m = parseAll(before + bad + "\n" + after, 1 << 22);
        QCOMPARE(m.warnings.size(), 1);
        QCOMPARE(int(m.warnings[0].kind), kind);
        QCOMPARE(m.warnings[0].line, qint64(2));
        const Series* loss = m.series(QStringLiteral("step/loss"));
        QVERIFY(loss);
        QCOMPARE(loss->steps(), (std::vector<double>{1, 2}));
    }

    // A line without end is dropped as it comes: fed in small chunks, the parser never holds more
    // than the chunk (the caller's buffer stays small) and the lines after it are read.
    void aLineWithoutEndIsDroppedAsItComes()
    {
        RunMetrics m;
        MetricsParser p(m);
        const QByteArray first = j("{'kind':'step','step':1,'t':1,'loss':0.5}") + "\n";
        QCOMPARE(p.feed(first.constData(), std::size_t(first.size())), std::size_t(first.size()));
        const QByteArray chunk(256 * 1024, 'a');
        QByteArray pending;
        std::size_t largest = 0;
        for (int i = 0; i < 64; ++i) {  // 16 MiB without a newline
            pending += chunk;
            largest = std::max(largest, std::size_t(pending.size()));
            pending = pending.mid(qsizetype(p.feed(pending.constData(), std::size_t(pending.size()))));
        }
        QVERIFY2(largest <= (1u << 20) + chunk.size(), qPrintable(QString::number(largest)));
        pending += "tail of the long line\n" + j("{'kind':'step','step':2,'t':2,'loss':0.4}") + "\n";
        pending = pending.mid(qsizetype(p.feed(pending.constData(), std::size_t(pending.size()))));
        p.finish(pending.constData(), std::size_t(pending.size()));
        QCOMPARE(m.warnings.size(), 1);
        QCOMPARE(m.warnings[0].kind, MetricWarning::Kind::TooLong);
        QCOMPARE(m.series(QStringLiteral("step/loss"))->steps(), (std::vector<double>{1, 2}));
    }

    // Distinct fields are found by a hash, not a scan, and their number is capped with a warning.
    void manyDistinctFieldsAreCapped()
    {
        QByteArray bytes;
        for (int i = 0; i < 25000; ++i) bytes += QStringLiteral("{\"kind\":\"step\",\"step\":%1,\"t\":%1,\"f%1\":1}\n").arg(i + 1).toUtf8();
        const RunMetrics m = parseAll(bytes, 1 << 16);
        QCOMPARE(int(m.tags().size()), 20000);
        QCOMPARE(m.warnings.size(), 1);
        QVERIFY(m.warnings[0].message.contains(QStringLiteral("distinct fields")));
        QVERIFY(m.series(QStringLiteral("step/f19999")));
        QVERIFY(!m.series(QStringLiteral("step/f20001")));
    }

    void resumedRunKeepsTheNewerSteps()
    {
        QByteArray text;
        for (int s = 1; s <= 6; ++s)
            text += QStringLiteral("{\"kind\":\"step\",\"step\":%1,\"t\":%1,\"loss\":%2}\n").arg(s).arg(s).toUtf8();
        // Resumed from the checkpoint at step 4: steps 5 and 6 come again, with other values.
        for (int s = 5; s <= 8; ++s)
            text += QStringLiteral("{\"kind\":\"step\",\"step\":%1,\"t\":%2,\"loss\":%3}\n").arg(s).arg(s + 100).arg(s * 10).toUtf8();
        const RunMetrics m = parseAll(text, 1 << 20);
        const Series* loss = m.series(QStringLiteral("step/loss"));
        QCOMPARE(loss->steps(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
        QCOMPARE(loss->values(), (std::vector<double>{1, 2, 3, 4, 50, 60, 70, 80}));
        QCOMPARE(loss->times()[4], 105.0);
        QCOMPARE(m.warnings.size(), 1);
        QCOMPARE(m.warnings[0].kind, MetricWarning::Kind::RepeatedSteps);
        QVERIFY2(m.warnings[0].message.contains(QStringLiteral("step 5")), qPrintable(m.warnings[0].message));
    }

    // The fields of a record kind share one step and time column while every record has them all.
    // Whatever the records do (a field missing once, a field that first comes late, a key given
    // twice, a resume, a file read in parts whose groups differ), each series must equal what
    // appending its points one by one (its own columns, the plain rule) gives.
    void sharedColumnsGiveWhatAppendingOneByOneGives()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("metrics.jsonl"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        std::map<QString, Series> expected;
        QByteArray chunk;
        auto put = [&](const char* kind, int step, double t, const std::vector<std::pair<QByteArray, double>>& fields) {
            QByteArray line =
                "{\"kind\":\"" + QByteArray(kind) + "\",\"step\":" + QByteArray::number(step) + ",\"t\":" + QByteArray::number(t, 'g', 17);
            for (const auto& [key, value] : fields) {
                line += ",\"" + key + "\":" + QByteArray::number(value, 'g', 17);
                expected[QLatin1String(kind) + QLatin1Char('/') + QString::fromLatin1(key)].append(step, t, value);
            }
            chunk += line + "}\n";
            if (chunk.size() > (1 << 20)) {
                f.write(chunk);
                chunk.clear();
            }
        };
        const int n = 700000;  // ~70 MB: two parts of at least 32 MiB
        int step = 0;
        for (int i = 1; i <= n; ++i) {
            step = i == 600000 ? step - 500 : step + 1;  // a resume in the second part
            const double t = 1000.0 + i * 0.25;
            std::vector<std::pair<QByteArray, double>> fields{{"loss", 1.0 / i}, {"lr", 0.001 * (i % 7)}};
            if (i != 200000) fields.push_back({"a", double(i)});  // missing once: "a" takes its own columns
            fields.push_back({"b", i * 0.5});
            if (i == 250000) fields.push_back({"b", -1.0});           // given twice: the later value wins
            if (i >= 100000) fields.push_back({"late", double(-i)});  // first seen after the first record
            if (i >= 400000) fields.push_back({"second_half", 2.0});  // only in the second part
            put("step", step, t, fields);
            if (i % 1000 == 0) put("epoch", step, t, {{"train_loss", 0.5}, {"val_loss", 0.25 + i}});  // the same in every part
        }
        f.write(chunk);
        f.close();
        QVERIFY(f.size() > 2 * (32 << 20));

        QByteArray all;
        {
            QFile in(path);
            QVERIFY(in.open(QIODevice::ReadOnly));
            all = in.readAll();
        }
        for (int way = 0; way < 3; ++way) {
            const char* label = std::array{"one parser fed in chunks", "one load", "a load in two parts"}[std::size_t(way)];
            const RunMetrics got = way == 0 ? parseAll(all, 1 << 16) : loadRunMetrics(path, way);
            QStringList want;
            for (const auto& [tag, s] : expected) want << tag;
            QStringList have = got.tags();
            for (const QString& tag : {QStringLiteral("Loss/train"), QStringLiteral("Loss/valid")}) have.removeAll(tag);
            QCOMPARE(have, want);
            for (const auto& [tag, s] : expected) {
                const Series* g = got.series(tag);
                const QByteArray what = QByteArray(label) + ": " + tag.toUtf8();
                QVERIFY2(g && g->size() == s.size(), what.constData());
                QVERIFY2(g->steps() == s.steps(), what.constData());
                QVERIFY2(g->times() == s.times(), what.constData());
                QVERIFY2(g->values() == s.values(), what.constData());
            }
            // The epoch records have the same fields throughout: their series still share one x,
            // across the join of the parts too.
            QCOMPARE(got.groups().at("epoch").members().size(), std::size_t(2));
            QCOMPARE(got.series(QStringLiteral("epoch/val_loss"))->steps().data(),
                     got.series(QStringLiteral("epoch/train_loss"))->steps().data());
        }
        QCOMPARE(expected[QStringLiteral("step/b")].values()[250000 - 1], -1.0);
    }

    void infinitiesAndNaNsAreShownNotDropped()
    {
        // The trainer writes a non-finite loss as null; Python writers print NaN/Infinity, and a
        // value beyond double's range is infinite, as json.loads reads it.
        const QByteArray text = j("{'kind':'step','step':1,'t':1,'loss':null}") + "\n" + j("{'kind':'step','step':2,'t':2,'loss':1e400}") +
            "\n" + j("{'kind':'step','step':3,'t':3,'loss':NaN}") + "\n" + j("{'kind':'step','step':4,'t':4,'loss':-Infinity}") + "\n" +
            j("{'kind':'step','step':5,'t':5,'loss':Infinity}") + "\n";
        const RunMetrics m = parseAll(text, 1 << 20);
        QVERIFY2(m.warnings.isEmpty(), qPrintable(m.warnings.isEmpty() ? QString() : m.warnings[0].message));
        const Series* loss = m.series(QStringLiteral("step/loss"));
        QVERIFY(loss);
        QCOMPARE(loss->size(), std::size_t(5));
        QVERIFY(std::isnan(loss->values()[0]));
        QVERIFY(std::isinf(loss->values()[1]) && loss->values()[1] > 0);
        QVERIFY(std::isnan(loss->values()[2]));
        QVERIFY(std::isinf(loss->values()[3]) && loss->values()[3] < 0);
        QVERIFY(std::isinf(loss->values()[4]) && loss->values()[4] > 0);
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
