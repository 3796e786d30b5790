#include "cli/terminal.h"

#include <QProcess>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace scaledesk::cli {

namespace {
bool g_barShown = false;
void clearBar()
{
    if (!g_barShown) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    g_barShown = false;
}
int terminalWidth()
{
    winsize w{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20) return w.ws_col;
    return 80;
}
}  // namespace

void progress(const QString& prefix, const ProgressStep& step)
{
    if (!step.transient) out(prefix + step.text);
    if (!::isatty(STDERR_FILENO)) return;
    const int width = terminalWidth() - 1;
    QString bar;
    if (step.total > 0) {
        const double f = std::clamp(double(step.done) / double(step.total), 0.0, 1.0);
        const int cells = 24;
        const int full = int(f * cells + 0.5);
        bar = QStringLiteral("[%1%2] %3/%4 ")
                  .arg(QString(full, QLatin1Char('#')), QString(cells - full, QLatin1Char(' ')))
                  .arg(step.done)
                  .arg(step.total);
    }
    QString line = bar + prefix + step.text;
    if (line.size() > width) line = line.left(width - 1) + QStringLiteral("…");
    std::fputs((QStringLiteral("\r\033[K") + line).toLocal8Bit().constData(), stderr);
    std::fflush(stderr);
    g_barShown = true;
}

void progressDone() { clearBar(); }

void out(const QString& line)
{
    clearBar();
    std::fputs((line + QLatin1Char('\n')).toLocal8Bit().constData(), stdout);
    std::fflush(stdout);
}

void err(const QString& line)
{
    clearBar();
    std::fputs((line + QLatin1Char('\n')).toLocal8Bit().constData(), stderr);
}

int fail(const Error& e)
{
    err(QStringLiteral("scaledesk: ") + e.text());
    return 1;
}

namespace {
std::atomic<bool> g_interrupted{false};
struct sigaction g_previousInt, g_previousTerm;

extern "C" void onInterrupt(int)
{
    if (g_interrupted.exchange(true)) ::_exit(130);  // the second one: at once
}
}  // namespace

InterruptGuard::InterruptGuard()
{
    g_interrupted = false;
    struct sigaction a {};
    a.sa_handler = onInterrupt;
    sigemptyset(&a.sa_mask);
    ::sigaction(SIGINT, &a, &g_previousInt);
    ::sigaction(SIGTERM, &a, &g_previousTerm);
}

InterruptGuard::~InterruptGuard()
{
    ::sigaction(SIGINT, &g_previousInt, nullptr);
    ::sigaction(SIGTERM, &g_previousTerm, nullptr);
}

bool interrupted() { return g_interrupted.load(); }

int usageFail(const Error& e)
{
    fail(e);
    return 2;
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
