#include "cli/validators.h"

#include <cmath>
#include <string>

namespace scaledesk::cli {

namespace {
CLI::Validator numberAtLeast(bool zeroAllowed)
{
    return CLI::Validator(
        [zeroAllowed](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value)) return "'" + text + "' is not a number";
            if (zeroAllowed ? value < 0 : !(value > 0))
                return (zeroAllowed ? "must be 0 or greater, got " : "must be greater than 0, got ") + text;
            return {};
        },
        zeroAllowed ? "NUMBER >= 0" : "NUMBER > 0");
}
}  // namespace

const CLI::Validator& positiveNumber()
{
    static const CLI::Validator v = numberAtLeast(false);
    return v;
}

const CLI::Validator& nonNegativeNumber()
{
    static const CLI::Validator v = numberAtLeast(true);
    return v;
}

}  // namespace scaledesk::cli
