#pragma once

#include <QString>

#include <functional>

namespace scaledesk {

/// A step of long work, for a progress bar (the window) or a progress line (the CLI on a TTY):
/// what is being done and, when the amount is known, how far along it is.
struct ProgressStep {
    ProgressStep(QString text) : text(std::move(text)) {}  // NOLINT(google-explicit-constructor): a plain message
    ProgressStep(QString text, qint64 done, qint64 total, bool transient = false)
        : text(std::move(text)), done(done), total(total), transient(transient)
    {}
    QString text;
    qint64 done = 0;
    qint64 total = 0;        ///< 0: the amount is not known (a busy bar)
    bool transient = false;  ///< only for the bar ("submitting 3 of 8"), not a line worth keeping in a log
};
using ProgressFn = std::function<void(const ProgressStep&)>;

}  // namespace scaledesk
