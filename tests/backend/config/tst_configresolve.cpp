// Config resolution under hostile input: a "billion laughs" file (aliases of aliases) is refused
// with a message naming the file, instead of expanding forever; the example configs still resolve.
#include "config/configresolve.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

class TestConfigResolve : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

private slots:
    void billionLaughsIsRefusedNamingTheFile()
    {
        QByteArray yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
        for (int i = 1; i < 10; ++i) {
            yaml += QStringLiteral("a%1: &a%1 [").arg(i).toUtf8();
            for (int k = 0; k < 10; ++k) yaml += QStringLiteral("*a%1%2").arg(i - 1).arg(k < 9 ? QStringLiteral(", ") : QString()).toUtf8();
            yaml += "]\n";
        }
        yaml += "laughs:\n  data: *a9\n";  // 10^10 values if expanded
        const QString path = m_tmp.filePath(QStringLiteral("laughs.yaml"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(yaml);
        f.close();
        QElapsedTimer t;
        t.start();
        const auto r = resolvedConfigWithSources(path, QStringLiteral("laughs"));
        qInfo("refused after %lld ms", t.elapsed());
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::ConfigYaml);
        QVERIFY2(r.error().text().startsWith(path), qPrintable(r.error().text()));
        QVERIFY2(r.error().message.contains(QStringLiteral("aliases")), qPrintable(r.error().message));
    }

    void deepNestingIsRefused()
    {
        QByteArray yaml = "deep: ";
        for (int i = 0; i < 400; ++i) yaml += "{a: ";
        yaml += "1";
        for (int i = 0; i < 400; ++i) yaml += "}";
        yaml += "\n";
        const QString path = m_tmp.filePath(QStringLiteral("deep.yaml"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(yaml);
        f.close();
        const auto r = resolvedConfigWithSources(path, QStringLiteral("deep"));
        QVERIFY(!r);
        QVERIFY2(r.error().text().startsWith(path), qPrintable(r.error().text()));
    }

    void theExampleConfigsResolve()
    {
        const auto r = resolvedConfig(QStringLiteral(SCALEDESK_SOURCE_DIR "/configs/unet.yaml"), QStringLiteral("cpu-short"));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().text()));
        QCOMPARE(r->value(QStringLiteral("num_epochs")), QStringLiteral("10"));
        QCOMPARE(r->value(QStringLiteral("data_size")), QStringLiteral("32"));  // from the `cpu` anchor
    }
};

QTEST_GUILESS_MAIN(TestConfigResolve)
#include "tst_configresolve.moc"
