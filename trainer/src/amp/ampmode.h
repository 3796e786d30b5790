#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace scaledesk::train {

/// Mixed precision of a run: none (fp32; TF32 on GPUs that have it), fp16 (autocast to float16 with
/// a loss scaler, the NERSC trainer's enable_amp), bf16 (autocast to bfloat16, no scaler: the
/// tutorial's sc-22 amp_mode).
enum class AmpMode { None, Fp16, Bf16 };

const char* ampModeName(AmpMode mode);
bool parseAmpMode(const std::string& text, AmpMode& out);
/// The autocast dtype of a mode (Float for none).
c10::ScalarType ampDtype(AmpMode mode);

/// Mirrors Python's `with torch.autocast(device_type, dtype)`: the device type's autocast state is
/// thread-local; the guard sets it and restores what was there. Mode none changes nothing.
class AutocastGuard {
public:
    AutocastGuard(AmpMode mode, c10::DeviceType device);
    ~AutocastGuard();
    AutocastGuard(const AutocastGuard&) = delete;
    AutocastGuard& operator=(const AutocastGuard&) = delete;

private:
    bool m_active;
    c10::DeviceType m_device;
    bool m_prevEnabled = false;
    c10::ScalarType m_prevDtype = c10::ScalarType::Float;
};

}  // namespace scaledesk::train
