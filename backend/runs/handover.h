#pragma once

#include "runs/runstore.h"
#include "runs/runsubmitter.h"
#include "scheduler/scheduler.h"

namespace scaledesk {

/// The one place where a run's job is handed to the scheduler and its identity recorded, for
/// RunSubmitter only (a new run and a run submitted anew both come here). The run's folder is
/// uploaded and the run is at the `sbatch` step; under its record lock the run then becomes:
/// - queued with the job id the scheduler printed (wherever among other lines), `note` saying why
///   (SubmitOutcome::Kind::Queued);
/// - submitting at step `sbatch-unknown` when the outcome is unknown (no id and no plain refusal,
///   a lost exit status, a timeout, a dropped connection). When the command did answer, the job is
///   looked up at once by its name and folder (findJob; Queued when found); later polls look for
///   it too (Kind::Unknown). It is never submitted again blindly.
/// After a plain refusal the record is left as it is (Kind::Failed with the scheduler's words; the
/// caller records them). Everything the command printed is appended to the run's submit.log (in its
/// local folder).
SubmitOutcome handOver(RunStore& store, Scheduler& scheduler, const QString& runId, const QString& note);

}  // namespace scaledesk
