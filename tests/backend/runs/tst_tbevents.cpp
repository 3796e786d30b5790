// TensorBoard event files (tbevents/): TFRecord framing with masked CRC-32C, the Event protos, the
// real file that PyTorch's SummaryWriter wrote for the NERSC tutorial, and broken copies of it.
#include "eventfile.h"
#include "tfrecord.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <map>

using namespace scaledesk::tb;

namespace {
const QString kEvents =
    QStringLiteral(SCALEDESK_TEST_DATA "/runs/data/nersc-example-logs/base/1GPU/00/logs/events.out.tfevents.1636677146.nid001104.65966.0");

QByteArray fixture()
{
    QFile f(kEvents);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The offsets of the records of a sound file, read from their length headers.
std::vector<qsizetype> recordOffsets(const QByteArray& bytes)
{
    std::vector<qsizetype> out;
    for (qsizetype at = 0; at + 12 <= bytes.size();) {
        out.push_back(at);
        quint64 length = 0;
        for (int i = 7; i >= 0; --i) length = (length << 8) | quint8(bytes[at + i]);
        at += 12 + qsizetype(length) + 4;
    }
    return out;
}

EventFileContents read(const QByteArray& bytes) { return readEventBytes(bytes.constData(), std::size_t(bytes.size())); }
}  // namespace

class TestTbEvents : public QObject {
    Q_OBJECT
private slots:
    // CRC-32C's check value (the CRC of "123456789") and TFRecord's mask of it.
    void crc32cMatchesItsCheckValue()
    {
        QCOMPARE(crc32c("123456789", 9), 0xE3069283u);
        QCOMPARE(crc32c("", 0), 0u);
        const std::uint32_t c = 0xE3069283u;
        QCOMPARE(maskedCrc32c("123456789", 9), ((c >> 15) | (c << 17)) + 0xa282ead8u);
    }

    // The real file: its version, the four NERSC tags, the numbers that out.log printed.
    void readsTheNerscTutorialsEventFile()
    {
        const EventFileContents c = readEventFile(QFile::encodeName(kEvents).toStdString());
        QVERIFY2(c.problems.empty(), c.problems.empty() ? "" : c.problems.front().message.c_str());
        QCOMPARE(c.fileVersion, std::string("brain.Event:2"));
        std::map<std::string, std::vector<ScalarPoint>> byTag;
        for (const ScalarPoint& p : c.scalars) byTag[p.tag].push_back(p);
        QCOMPARE(byTag.size(), std::size_t(4));
        QCOMPARE(byTag["Loss/train"].size(), std::size_t(11));  // step 0 and 10 epochs
        QCOMPARE(byTag["Loss/valid"].size(), std::size_t(11));
        QCOMPARE(byTag["Learning Rate"].size(), std::size_t(10));
        QCOMPARE(byTag["Avg iters per sec"].size(), std::size_t(10));
        // out.log: "Avg val loss=0.007129" after epoch 1 (1,024 steps of 64 of 65,536 samples).
        const ScalarPoint& v1 = byTag["Loss/valid"][1];
        QCOMPARE(v1.step, std::int64_t(1024));
        QVERIFY(std::abs(v1.value - 0.007129) < 5e-7);
        QCOMPARE(byTag["Loss/valid"].back().step, std::int64_t(10240));
        // Wall times: 2021-11-12, within the run's two and a half hours.
        for (const ScalarPoint& p : c.scalars) QVERIFY(p.wallTime > 1636677146 && p.wallTime < 1636677146 + 3 * 3600);
        QCOMPARE(c.records, std::uint64_t(1 + 42));  // the version event, then one event per scalar
    }

    // A growing file, as the live mirror brings it: the NERSC file fed in pieces of every size,
    // cut anywhere (mid-header, mid-data, mid-CRC), gives exactly the scalars of a whole read, in
    // order, with no problem reported; a cut record is read once its rest arrives.
    void aGrowingFileReadsAsAWholeRead()
    {
        const QByteArray bytes = fixture();
        QVERIFY(!bytes.isEmpty());
        const EventFileContents whole = read(bytes);
        const std::vector<qsizetype> starts = recordOffsets(bytes);
        for (const qsizetype piece : {qsizetype(1), qsizetype(5), qsizetype(13), qsizetype(100), qsizetype(4096), qsizetype(-1)}) {
            EventStreamReader stream;
            std::vector<ScalarPoint> got;
            QRandomGenerator random(quint32(piece + 7));
            for (qsizetype at = 0; at < bytes.size();) {
                const qsizetype n = piece > 0 ? piece : 1 + random.bounded(300);  // -1: random sizes
                const qsizetype take = std::min(n, bytes.size() - at);
                const EventFileContents part = stream.feed(bytes.constData() + at, std::size_t(take));
                QVERIFY2(part.problems.empty(), part.problems.empty() ? "" : part.problems.front().message.c_str());
                got.insert(got.end(), part.scalars.begin(), part.scalars.end());
                at += take;
                // Everything up to the end of the last whole record is read; what follows waits.
                qsizetype readUpTo = 0;
                for (std::size_t r = 0; r < starts.size(); ++r) {
                    const qsizetype end = r + 1 < starts.size() ? starts[r + 1] : bytes.size();
                    if (end <= at) readUpTo = end;
                }
                QCOMPARE(qsizetype(stream.consumed()), readUpTo);
                QCOMPARE(qsizetype(stream.pending()), at - readUpTo);
            }
            QCOMPARE(stream.pending(), std::size_t(0));
            QCOMPARE(got.size(), whole.scalars.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
                QCOMPARE(got[i].tag, whole.scalars[i].tag);
                QCOMPARE(got[i].step, whole.scalars[i].step);
                QCOMPARE(got[i].wallTime, whole.scalars[i].wallTime);
                QCOMPARE(got[i].value, whole.scalars[i].value);
            }
        }
        // A record cut in the middle: nothing of it until the rest arrives, then all of it.
        EventStreamReader stream;
        const qsizetype cut = starts[2] + 20;  // inside the third record's data
        const EventFileContents first = stream.feed(bytes.constData(), std::size_t(cut));
        QCOMPARE(stream.consumed(), std::uint64_t(starts[2]));
        QCOMPARE(stream.pending(), std::size_t(20));
        const std::size_t before = first.scalars.size();
        const EventFileContents rest = stream.feed(bytes.constData() + cut, std::size_t(starts[3] - cut));
        QCOMPARE(rest.scalars.size(), std::size_t(1));  // the third record: one scalar
        QCOMPARE(rest.scalars[0].tag, whole.scalars[before].tag);
        QCOMPARE(stream.consumed(), std::uint64_t(starts[3]));
        QCOMPARE(stream.pending(), std::size_t(0));
        // A record whose data is damaged is reported at its offset in the whole file.
        QByteArray damaged = bytes.mid(starts[3], starts[4] - starts[3]);
        damaged[14] = char(damaged[14] ^ 0x40);
        const EventFileContents bad = stream.feed(damaged.constData(), std::size_t(damaged.size()));
        QCOMPARE(bad.problems.size(), std::size_t(1));
        QCOMPARE(bad.problems[0].offset, std::uint64_t(starts[3]));
    }

    // What the writer writes, the reader reads back: name, version, tags, steps, values, times.
    void writesWhatItReads()
    {
        QTemporaryDir dir;
        std::string path;
        {
            EventFileWriter w;
            w.open(QFile::encodeName(dir.path()).toStdString(), 1700000000.25);
            w.addScalar("Loss/train", 0, 0.25, 1700000001.5);
            w.addScalar("Loss/train", 64, 0.125, 1700000002.5);
            w.addScalar("step/step_s", 64, 3.5, 1700000002.75);
            path = w.path();
        }
        QVERIFY2(QFileInfo(QString::fromStdString(path)).fileName().startsWith(QStringLiteral("events.out.tfevents.1700000000.")),
                 path.c_str());
        const EventFileContents c = readEventFile(path);
        QVERIFY(c.problems.empty());
        QCOMPARE(c.fileVersion, std::string("brain.Event:2"));
        QCOMPARE(c.scalars.size(), std::size_t(3));
        QCOMPARE(c.scalars[1].tag, std::string("Loss/train"));
        QCOMPARE(c.scalars[1].step, std::int64_t(64));
        QCOMPARE(c.scalars[1].value, 0.125);
        QCOMPARE(c.scalars[1].wallTime, 1700000002.5);
        QCOMPARE(c.scalars[2].tag, std::string("step/step_s"));
    }

    // The writer's bytes are TensorBoard's: the fixture's events (PyTorch's SummaryWriter), written
    // again by EventFileWriter from what the reader read, give the fixture's file byte for byte
    // (framing, both masked CRCs and the protobuf encoding of every event).
    void theWriterWritesTheSummaryWritersBytes()
    {
        const QByteArray original = fixture();
        const EventFileContents c = read(original);
        QVERIFY(c.problems.empty());
        QTemporaryDir dir;
        std::string path;
        {
            EventFileWriter w;
            w.open(QFile::encodeName(dir.path()).toStdString(), c.fileVersionWallTime);
            for (const ScalarPoint& p : c.scalars) w.addScalar(p.tag, p.step, p.value, p.wallTime);
            path = w.path();
        }
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray written = f.readAll();
        QCOMPARE(written.size(), original.size());
        const auto offsets = recordOffsets(original);
        for (std::size_t i = 0; i < offsets.size(); ++i) {
            const qsizetype end = i + 1 < offsets.size() ? offsets[i + 1] : original.size();
            QVERIFY2(written.mid(offsets[i], end - offsets[i]) == original.mid(offsets[i], end - offsets[i]),
                     qPrintable(QStringLiteral("record %1 at offset %2 differs").arg(i).arg(offsets[i])));
        }
        // And the framing alone: frameRecord() of each record's data is the file's record.
        for (std::size_t i = 0; i < offsets.size(); ++i) {
            const qsizetype end = i + 1 < offsets.size() ? offsets[i + 1] : original.size();
            const QByteArray data = original.mid(offsets[i] + 12, end - offsets[i] - 16);
            const std::string framed = frameRecord(std::string_view(data.constData(), std::size_t(data.size())));
            QVERIFY(QByteArray(framed.data(), qsizetype(framed.size())) == original.mid(offsets[i], end - offsets[i]));
        }
    }

    // A record whose data fails its CRC is reported at its offset and skipped; the rest are read.
    void aDataCrcMismatchSkipsOneRecord()
    {
        QByteArray bytes = fixture();
        const auto offsets = recordOffsets(bytes);
        QCOMPARE(offsets.size(), std::size_t(43));
        bytes[offsets[3] + 12 + 5] = char(bytes[offsets[3] + 12 + 5] ^ 0x40);
        const EventFileContents c = read(bytes);
        QCOMPARE(c.problems.size(), std::size_t(1));
        QCOMPARE(c.problems[0].offset, std::uint64_t(offsets[3]));
        QVERIFY2(c.problems[0].message.find("data CRC mismatch") != std::string::npos, c.problems[0].message.c_str());
        QCOMPARE(c.scalars.size(), std::size_t(41));
    }

    // A length that fails its CRC cannot be trusted: reported, and reading resumes at the next sound record.
    void aLengthCrcMismatchResumesAtTheNextRecord()
    {
        QByteArray bytes = fixture();
        const auto offsets = recordOffsets(bytes);
        bytes[offsets[5] + 2] = char(0x7f);  // a length of terabytes
        const EventFileContents c = read(bytes);
        QCOMPARE(c.problems.size(), std::size_t(1));
        QCOMPARE(c.problems[0].offset, std::uint64_t(offsets[5]));
        QVERIFY2(c.problems[0].message.find("length CRC mismatch") != std::string::npos, c.problems[0].message.c_str());
        QVERIFY2(c.problems[0].message.find(std::to_string(offsets[6] - offsets[5]) + " bytes skipped") != std::string::npos,
                 c.problems[0].message.c_str());
        QCOMPARE(c.scalars.size(), std::size_t(41));
    }

    // A file crafted to make the search after a bad length quadratic: after the bad length, a
    // header every 12 bytes whose own CRC checks and whose length claims the rest of the file, with
    // data that never checks. Each would cost the file's size; the search stops at its budget (twice
    // the file's size and 1 MiB of data CRCs), says so, and skips the rest.
    void theSearchAfterABadLengthIsLinearOnCraftedBytes()
    {
        const std::string first = frameRecord("sound");
        std::string bytes = first + std::string(12, '\x55');  // a header whose CRC does not check
        const std::size_t size = 240 * 1024;
        while (bytes.size() + 12 + 16 <= size) {
            const std::uint64_t length = size - bytes.size() - 16;
            std::string header;
            for (int i = 0; i < 8; ++i) header.push_back(char((length >> (8 * i)) & 0xff));
            const std::uint32_t crc = maskedCrc32c(header.data(), 8);
            for (int i = 0; i < 4; ++i) header.push_back(char((crc >> (8 * i)) & 0xff));
            bytes += header;
        }
        bytes.resize(size, '\0');
        TfRecordReader reader(bytes.data(), bytes.size());
        std::string_view record;
        std::uint64_t offset = 0;
        QVERIFY(reader.next(&record, &offset));
        QCOMPARE(std::string(record), std::string("sound"));
        QVERIFY(!reader.next(&record, &offset));
        QVERIFY2(reader.resyncBytesChecked() <= 2 * size + (1u << 20), qPrintable(QString::number(reader.resyncBytesChecked())));
        QVERIFY(reader.resyncBytesChecked() > 2 * size);  // it did search: several crafted candidates were checked
        QCOMPARE(reader.problems().size(), std::size_t(1));
        QCOMPARE(reader.problems()[0].offset, std::uint64_t(first.size()));
        QVERIFY2(reader.problems()[0].message.find("the rest of the file is skipped") != std::string::npos,
                 reader.problems()[0].message.c_str());
        QCOMPARE(reader.position(), std::uint64_t(size));
    }

    // A file cut inside its last record: everything before it, and the cut reported where it starts.
    void aTruncatedRecordIsReportedAtItsOffset_data()
    {
        QTest::addColumn<int>("keep");
        QTest::newRow("inside the header") << 6;
        QTest::newRow("inside the data") << 20;
        QTest::newRow("the data CRC missing") << -4;
    }
    void aTruncatedRecordIsReportedAtItsOffset()
    {
        QFETCH(int, keep);
        const QByteArray whole = fixture();
        const auto offsets = recordOffsets(whole);
        const qsizetype last = offsets.back();
        const QByteArray cut = whole.left(keep >= 0 ? last + keep : whole.size() + keep);
        const EventFileContents c = read(cut);
        QCOMPARE(c.problems.size(), std::size_t(1));
        QCOMPARE(c.problems[0].offset, std::uint64_t(last));
        QVERIFY2(c.problems[0].message.find("truncated record") != std::string::npos, c.problems[0].message.c_str());
        QCOMPARE(c.scalars.size(), std::size_t(41));
    }

    // Sound framing around bytes that are not an Event: reported and skipped.
    void aRecordThatIsNotAnEventIsSkipped()
    {
        QByteArray bytes = fixture();
        const std::string junk = frameRecord(std::string("\xff\xff\xff\xff\xff", 5));
        bytes.append(junk.data(), qsizetype(junk.size()));
        const EventFileContents c = read(bytes);
        QCOMPARE(c.problems.size(), std::size_t(1));
        QVERIFY2(c.problems[0].message.find("not an Event") != std::string::npos, c.problems[0].message.c_str());
        QCOMPARE(c.scalars.size(), std::size_t(42));
    }

    // Random bytes and a missing file: problems, no scalars, no crash.
    void garbageAndMissingFiles()
    {
        QByteArray noise(4096, Qt::Uninitialized);
        QRandomGenerator rng(7);
        for (char& b : noise) b = char(rng.bounded(256));
        const EventFileContents c = read(noise);
        QVERIFY(c.scalars.empty());
        QVERIFY(!c.problems.empty());
        const EventFileContents none = readEventFile("/nonexistent/events.out.tfevents.1");
        QCOMPARE(none.problems.size(), std::size_t(1));
        QVERIFY(none.problems[0].message.find("cannot open") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestTbEvents)
#include "tst_tbevents.moc"
