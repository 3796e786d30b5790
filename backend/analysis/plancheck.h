#pragma once

// The planner checked against the sweep itself (docs/planner.md, "Checked against the sweep"):
// each size the runs measured predicted from the runs at half its ranks or fewer on one node (the
// extrapolation protocol), with the range the plan would have given, beside what the size measured.
#include "analysis/planner.h"

#include <QList>
#include <QString>

#include <vector>

namespace scaledesk {

/// One size of the sweep predicted from smaller runs only (predictHeldOut; `why`: what the smaller
/// runs and the timings never measured).
struct PlanCheckPoint : HeldOutPoint {
    QString fittedOn;                  ///< the rank counts of the runs it was fitted on ("1, 2")
    bool covered() const;              ///< the measured epoch lies in the range
    double relativeHalfWidth() const;  ///< (high − low) / 2 / predicted
    bool flagged() const;              ///< predicted, and outside the model (outsideModel says why)
    /// Predicted within kPlanCheckTolerance of the measurement, or flagged as outside the model.
    bool withinOrFlagged() const;
};

/// The planner issue's bar for a held-out point: its error at most 10 %, or flagged beforehand.
inline constexpr double kPlanCheckTolerance = 0.10;

struct PlanCheck {
    QString sweep;
    QList<PlanCheckPoint> points;
    int predictedCount() const;
    int coveredCount() const;
    int flaggedCount() const;
    int withinOrFlaggedCount() const;
    double coverage() const;         ///< covered / predicted; NaN with none predicted
    double medianHalfWidth() const;  ///< NaN with none predicted
    double medianAbsoluteError() const;
    QString markdown() const;
    QString csv() const;
};

/// The extrapolation protocol on runs and timings: every (ranks, nodes) of the runs beyond the
/// smallest rank count, per strategy there, predicted by makePlan from the runs at ≤ ranks/2 on one
/// node (and every timing: calibrations at the target size are what a user has before a launch),
/// weak or strong as those runs ran, at their batch.
PlanCheck checkPlan(const QString& sweep, const std::vector<PlanRunInput>& runs, const QList<CommSample>& timings,
                    const QStringList& timingSources);

/// checkPlan() of a sweep's runs and its profile's calibrations (or `benchmarkFiles`).
Expected<PlanCheck> checkSweepPlan(const RunStore& store, const QString& sweep, int warmupEpochs, const QStringList& benchmarkFiles);

}  // namespace scaledesk
