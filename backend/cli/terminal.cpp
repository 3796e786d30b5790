#include "cli/terminal.h"

#include <QProcess>

#include <cstdio>
#include <iostream>
#include <string>
#include <termios.h>
#include <unistd.h>

namespace scaledesk::cli {

void out(const QString& line)
{
    std::fputs((line + QLatin1Char('\n')).toLocal8Bit().constData(), stdout);
    std::fflush(stdout);
}

void err(const QString& line) { std::fputs((line + QLatin1Char('\n')).toLocal8Bit().constData(), stderr); }

int fail(const Error& e)
{
    err(QStringLiteral("scaledesk: ") + e.text());
    return 1;
}

std::optional<QString> ask(const QString& prompt, bool echo)
{
    const QString askpass = qEnvironmentVariable("SCALEDESK_ASKPASS");
    if (!askpass.isEmpty()) {
        QProcess p;
        p.start(askpass, {prompt});
        if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) return std::nullopt;
        QString answer = QString::fromUtf8(p.readAllStandardOutput());
        while (answer.endsWith(QLatin1Char('\n'))) answer.chop(1);
        return answer;
    }
    if (!::isatty(STDIN_FILENO)) return std::nullopt;
    std::fputs(prompt.toLocal8Bit().constData(), stderr);
    std::fflush(stderr);
    termios old{};
    const bool hide = !echo && ::tcgetattr(STDIN_FILENO, &old) == 0;
    if (hide) {
        termios quiet = old;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    std::string line;
    const bool ok = bool(std::getline(std::cin, line));
    if (hide) {
        ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        std::fputs("\n", stderr);
    }
    if (!ok) return std::nullopt;
    return QString::fromStdString(line);
}

}  // namespace scaledesk::cli
