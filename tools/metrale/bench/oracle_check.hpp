// The gate before timing: an entry's output against the scalar reference
// (w8a16_gemv_batch16) on the same inputs, with the library's accuracy contract.
#pragma once

#include <cstdint>
#include <span>

#include "metrale/oracle.hpp"

namespace metrale::bench {

// `got` and `ref` are BF16 bits [m, n]. Applies within_m16_tc_budget to every output,
// with row_rms the RMS of the reference row. A poisoned (never written) output is NaN
// and fails.
BudgetReport check_against_reference(std::span<const std::uint16_t> got,
                                     std::span<const std::uint16_t> ref, std::uint32_t m,
                                     std::uint32_t n, std::uint32_t k);

}  // namespace metrale::bench
