#pragma once

#include <string>

namespace scaledesk::train {

/// Mixed precision of a run: none (fp32; TF32 on GPUs that have it), fp16 (autocast to float16 with
/// a loss scaler, the NERSC trainer's enable_amp), bf16 (autocast to bfloat16, no scaler: the
/// tutorial's sc-22 amp_mode). No libtorch here: the config loader (and its fuzz target) uses it.
enum class AmpMode { None, Fp16, Bf16 };

const char* ampModeName(AmpMode mode);
bool parseAmpMode(const std::string& text, AmpMode& out);

}  // namespace scaledesk::train
