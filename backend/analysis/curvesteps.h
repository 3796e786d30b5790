#pragma once

#include "analysis/perfmodel.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace scaledesk {

/// A message whose time the model interpolates between two sizes timed around it where the
/// timings jump (a library switching algorithm between them): where the step lies between the
/// two sizes cannot be told, so the message's time is anything from the smaller size's to the
/// larger's.
struct CurveStep {
    QString collective;  ///< "allreduce", "reduce-scatter", "allgather"
    double bytes = 0;    ///< the message
    const CommSample* below = nullptr;
    const CommSample* above = nullptr;
    double interpolatedS = 0;  ///< what the model reads at `bytes`
    /// What the message's time adds to a step at most beyond the interpolation (above's time − it)
    /// and takes away at most (it − below's time), as the step counts it (zero1's collectives are
    /// half an allreduce-equivalent each).
    double upS = 0, downS = 0;
    QString describe() const;  ///< "allreduce of 35.8 MiB lies where the timings jump from 0.0069 s at 16 MiB to 0.226 s at 64 MiB"
};

/// Whether the timings jump between two sizes timed at one layout: more than 3× the time per byte.
bool timingsJump(const CommSample& below, const CommSample& above);

/// The collectives a step of `strategy` sends its messages with, as the model reads them:
/// zero1's reduce-scatter and allgather where both were timed, else the allreduce.
QStringList messageCollectives(const PerfModel& model, const QString& strategy);

/// Whether every message a step of `strategy` sends at `ranks` ranks on `nodes` nodes (the
/// trainer's layout) reads a timing of its own size (within the curve's 1 %) on each collective it
/// goes by; false without the layout.
bool messagesReadAtTheirTimings(const PerfModel& model, const QString& strategy, int ranks, int nodes);

/// The messages a step of `strategy` sends at `ranks` ranks on `nodes` nodes (its layout,
/// StrategyComm::messageBytes) that fall on a step of the curve they are read from. Without the
/// trainer's layout, none (the sizes are not known).
QList<CurveStep> curveStepsCrossed(const PerfModel& model, const QString& strategy, int ranks, int nodes);

/// The same for messages of `bytes` sent by `collective` (the model's curve of it), at the largest
/// layout measured where one straddles it: the plan's warning, independent of the points asked.
QList<CurveStep> curveStepsAnywhere(const PerfModel& model, const QString& collective, double bytes);

}  // namespace scaledesk
