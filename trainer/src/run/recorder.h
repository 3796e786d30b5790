#pragma once

#include "run/runfiles.h"
#include "run/tensorboardlog.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace scaledesk::train {

/// Rank 0's records of a run: metrics.jsonl (one JSON object a line, flushed), the same scalars as
/// TensorBoard events under logs/, and epochs.csv. On other ranks every call does nothing, so the
/// training loop calls it on every rank without asking which one it is.
class RunRecorder {
public:
    explicit RunRecorder(bool rank0) : m_rank0(rank0) {}

    /// Opens (appends to) the run folder's files; says in `log` where the TensorBoard events go.
    /// A resumed run's epochs.csv from an older trainer keeps its columns.
    void open(const std::string& runDir, RunLog& log);

    /// A record: a line of metrics.jsonl and, with its scalars, an event of logs/.
    void write(const nlohmann::json& record);
    /// An event record (started, checkpoint, finished, …) at a step and epoch, with extra fields.
    void event(const std::string& name, int64_t step, int64_t epoch, const nlohmann::json& extra);
    /// A row of epochs.csv (cut to the file's own columns).
    void epochRow(const std::vector<std::string>& row);

private:
    bool m_rank0;
    LineFile m_metrics, m_epochsCsv;
    std::size_t m_epochsCsvWidth = 0;
    TensorBoardLog m_tensorboard;
};

/// JSON has no NaN or infinity: a diverged value is written as null (the reader shows it).
nlohmann::json jsonNumber(double v);
/// epochs.csv's number format: Python's repr, "nan" for NaN.
std::string csvNumber(double v);

}  // namespace scaledesk::train
