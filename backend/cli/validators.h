#pragma once

#include <CLI/CLI.hpp>

namespace scaledesk::cli {

/// The number options' checks, each failing in one line that names the rule and the value given
/// ("'two' is not a number", "must be greater than 0, got 0"): CLI11's own PositiveNumber and
/// NonNegativeNumber print a 300-digit range instead.
const CLI::Validator& positiveNumber();
const CLI::Validator& nonNegativeNumber();

}  // namespace scaledesk::cli
