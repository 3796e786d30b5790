#pragma once

#include <c10/core/Device.h>

#include <memory>

namespace scaledesk::train {

/// The time points of a training step as the device sees them. On the CPU a mark is the host's
/// clock; on a GPU it is an event recorded on the current stream, so phases are timed by when the
/// device ran them, not by when the host queued them, and marking never waits. seconds() is valid
/// after settle(), which on a GPU waits for the last mark (once per step, after the step's own sync).
class StepClock {
public:
    virtual ~StepClock() = default;
    /// A point now; returns its number within the step.
    virtual int mark() = 0;
    /// Waits until every mark of the step is known.
    virtual void settle() = 0;
    /// Seconds from mark a to mark b (after settle()).
    virtual double seconds(int a, int b) const = 0;
    /// Starts the next step: the marks so far are dropped.
    virtual void reset() = 0;
};

/// The host clock's StepClock.
std::unique_ptr<StepClock> makeHostClock();
/// The clock for `device`: the host clock on the CPU, CUDA events on a GPU.
std::unique_ptr<StepClock> makeStepClock(const c10::Device& device);

}  // namespace scaledesk::train
