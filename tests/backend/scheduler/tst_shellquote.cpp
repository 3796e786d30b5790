#include "scheduler/shellquote.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace scaledesk;

class TestShellQuote : public QObject {
    Q_OBJECT
private slots:
    void survivesTheShell_data()
    {
        QTest::addColumn<QString>("value");
        QTest::newRow("plain") << QStringLiteral("run-1");
        QTest::newRow("spaces") << QStringLiteral("my run  dir");
        QTest::newRow("single quote") << QStringLiteral("it's");
        QTest::newRow("only quotes") << QStringLiteral("''''");
        QTest::newRow("command substitution") << QStringLiteral("$(touch x)");
        QTest::newRow("backticks") << QStringLiteral("`touch x`");
        QTest::newRow("semicolon") << QStringLiteral("a; touch x");
        QTest::newRow("variables") << QStringLiteral("$HOME ${PATH} $1");
        QTest::newRow("glob") << QStringLiteral("* ? [a]");
        QTest::newRow("newline") << QStringLiteral("line1\nline2");
        QTest::newRow("unicode") << QStringLiteral("données-ünïcödé-实验");
        QTest::newRow("empty") << QString();
        QTest::newRow("tilde") << QStringLiteral("~/x");
        QTest::newRow("backslashes") << QStringLiteral("a\\b\\'c");
    }
    // The shell must see exactly the value as one word, and run nothing inside it.
    // shellWord() likewise, for the commands a plan shows; it leaves plain words unquoted.
    void survivesTheShell()
    {
        QFETCH(QString, value);
        for (const QString& word : {shellQuote(value), shellWord(value)}) {
            QTemporaryDir dir;
            QProcess sh;
            sh.setWorkingDirectory(dir.path());
            sh.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("printf '%s|' ") + word});
            QVERIFY(sh.waitForFinished());
            QCOMPARE(sh.exitCode(), 0);
            QCOMPARE(QString::fromUtf8(sh.readAllStandardOutput()), value + QLatin1Char('|'));
            QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x"))));
        }
    }
    void plainWordsStayUnquoted()
    {
        QCOMPARE(shellWord(QStringLiteral("/data/u/unet-2.yaml")), QStringLiteral("/data/u/unet-2.yaml"));
        QCOMPARE(shellWord(QStringLiteral("cpu_short")), QStringLiteral("cpu_short"));
        QCOMPARE(shellWord(QStringLiteral("/data/my runs/u.yaml")), QStringLiteral("'/data/my runs/u.yaml'"));
        QCOMPARE(shellWord(QStringLiteral("a*")), QStringLiteral("'a*'"));
        QCOMPARE(shellWord(QString()), QStringLiteral("''"));
    }
    void joinKeepsWordBoundaries()
    {
        QProcess sh;
        sh.start(QStringLiteral("/bin/sh"),
                 {QStringLiteral("-c"),
                  QStringLiteral("printf '<%s>' ") + shellJoin({QStringLiteral("a b"), QStringLiteral("c'd"), QString()})});
        QVERIFY(sh.waitForFinished());
        QCOMPARE(QString::fromUtf8(sh.readAllStandardOutput()), QStringLiteral("<a b><c'd><>"));
    }
};

QTEST_GUILESS_MAIN(TestShellQuote)
#include "tst_shellquote.moc"
