#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace scaledesk::train {

/// The TensorBoard scalars of one metrics.jsonl record, by the rule ScaleDesk's reader uses for
/// the same record (docs/trainer.md): NERSC's tags `Loss/train`, `Loss/valid` (step-0 losses and
/// each epoch's), `Learning Rate` and `Avg iters per sec` (each epoch's); `step/<field>` and
/// `epoch/<field>` for every number of the step and epoch records; `gpu/rank<N>/<field>` for the
/// GPU samples. A null (a non-finite loss) is NaN. Other kinds have no scalars.
std::vector<std::pair<std::string, double>> tensorboardScalars(const nlohmann::json& record);

/// Rank 0's TensorBoard event file in <run folder>/logs/, as the NERSC trainer's SummaryWriter
/// keeps one: every record that metrics.jsonl gets is also written here as one event (its
/// scalars, its step and time), so `tensorboard --logdir` works on a run folder. metrics.jsonl
/// stays what ScaleDesk reads.
class TensorBoardLog {
public:
    TensorBoardLog();
    ~TensorBoardLog();
    /// Creates <runDir>/logs/ and the event file. Returns what to say in the log once: where the
    /// events go, or why there are none (this build has no protobuf). Throws std::runtime_error
    /// naming the path when the file cannot be created.
    std::string open(const std::string& runDir, double wallTime);
    void record(const nlohmann::json& record);
    bool isOpen() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace scaledesk::train
