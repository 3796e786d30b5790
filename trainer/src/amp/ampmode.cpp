#include "amp/ampmode.h"

namespace scaledesk::train {

const char* ampModeName(AmpMode mode)
{
    switch (mode) {
    case AmpMode::Fp16: return "fp16";
    case AmpMode::Bf16: return "bf16";
    case AmpMode::None: break;
    }
    return "none";
}

bool parseAmpMode(const std::string& text, AmpMode& out)
{
    for (AmpMode m : {AmpMode::None, AmpMode::Fp16, AmpMode::Bf16})
        if (text == ampModeName(m)) {
            out = m;
            return true;
        }
    return false;
}

}  // namespace scaledesk::train
