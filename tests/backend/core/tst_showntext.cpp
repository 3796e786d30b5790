// Text from elsewhere made fit to show (core/showntext): terminal escapes gone, control and
// direction-changing characters visible as U+FFFD, newlines and tabs kept, and the length bounded.
#include "core/showntext.h"

#include <QTest>

using namespace scaledesk;

class TestShownText : public QObject {
    Q_OBJECT
private slots:
    void escapesAndControlCharactersDoNotReachTheScreen_data()
    {
        QTest::addColumn<QString>("in");
        QTest::addColumn<QString>("out");
        QTest::newRow("plain") << QStringLiteral("Password for alice@login1: ") << QStringLiteral("Password for alice@login1: ");
        QTest::newRow("newlines and tabs") << QStringLiteral("a\n\tb\r\nc") << QStringLiteral("a\n\tb\nc");
        QTest::newRow("colour (CSI)") << QStringLiteral("\x1b[31mred\x1b[0m text") << QStringLiteral("red text");
        QTest::newRow("cursor moves and clear screen")
            << QStringLiteral("ok\x1b[2J\x1b[1;1Hfake prompt") << QStringLiteral("okfake prompt");
        QTest::newRow("window title (OSC, BEL)") << QStringLiteral("\x1b]0;pwned\x07"
                                                                   "after")
                                                 << QStringLiteral("after");
        QTest::newRow("hyperlink (OSC, ST)") << QStringLiteral("\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\") << QStringLiteral("click");
        QTest::newRow("escape at the end") << QStringLiteral("x\x1b") << QStringLiteral("x");
        QTest::newRow("unfinished CSI") << QStringLiteral("x\x1b[12") << QStringLiteral("x");
        QTest::newRow("carriage return, backspace, NUL, DEL")
            << QStringLiteral("a\rb\bc") + QChar(0) + QStringLiteral("d\x7f") << QStringLiteral("a\uFFFDb\uFFFDc\uFFFDd\uFFFD");
        QTest::newRow("C1 control") << QStringLiteral("a\u009bb") << QStringLiteral("a\uFFFDb");
        QTest::newRow("right-to-left override") << QStringLiteral("file\u202Etxt.exe") << QStringLiteral("file\uFFFDtxt.exe");
        QTest::newRow("markup stays text") << QStringLiteral("<b>bold</b> <img src=x>") << QStringLiteral("<b>bold</b> <img src=x>");
        QTest::newRow("unicode kept") << QStringLiteral("Jülich – 計算") << QStringLiteral("Jülich – 計算");
    }
    void escapesAndControlCharactersDoNotReachTheScreen()
    {
        QFETCH(QString, in);
        QFETCH(QString, out);
        QCOMPARE(shownText(in), out);
    }

    void aLongTextIsCutAndSaysHowMuchIsLeft()
    {
        const QString big(100 * 1000 * 1000 / 10, QLatin1Char('y'));  // ten million characters
        const QString shown = shownText(big, 4000);
        QCOMPARE(shown, QString(4000, QLatin1Char('y')) + QStringLiteral("… (9996000 more characters)"));
        QCOMPARE(shownText(QStringLiteral("short"), 5), QStringLiteral("short"));
        // Escapes do not count against the bound; what is shown does.
        QCOMPARE(shownText(QStringLiteral("\x1b[1mabc\x1b[0mdef"), 3), QStringLiteral("abc… (7 more characters)"));
    }
};

QTEST_GUILESS_MAIN(TestShownText)
#include "tst_showntext.moc"
