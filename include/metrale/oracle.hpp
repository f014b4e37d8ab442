// The accuracy contract of the tensor-core entries against the scalar reference:
// within M16_TC_MAX_ULP BF16 ULP of it, or an absolute error under m16_tc_acc_floor.
//
// Where the two paths may differ, and why these bounds:
// - Inside a 128-K block the scalar path rounds after every one of its 128 FMAs in
//   IEEE FP32; mma.m16n8k16 adds 16 exact products at a time in the tensor core's own
//   order and alignment, so the two FP32 block partials differ by a few FP32 ULP of the
//   running sum.
// - Across blocks the scalar path folds s_b * P_b sequentially; the tensor-core kernel
//   folds per warp and reduces the warps' sums at the end (another order).
// - Both round the FP32 total once to BF16. Two FP32 totals a hair apart can round to
//   neighbouring BF16 values, so 1 ULP must pass; the FP32 differences above are about
//   2^-16 of the total or smaller for the depths used (K <= 32768), far under a BF16 ULP
//   (2^-8 of it), so a second ULP covers a partial shifted across a boundary twice
//   (M16_TC_MAX_ULP = 2). One dropped K block, BF16 accumulation, a wrong scale or a
//   misplaced row all move outputs by tens to thousands of ULP.
// - Cancellation: where the true value is near zero the ULP is tiny while the FP32
//   difference scales with the magnitude of the partial sums, i.e. with the row's RMS
//   (the RMS of the reference output row) and the reduction depth. The floor is the
//   engine's `m16_tc_acc_floor`: M16_TC_ACC_FLOOR_MARGIN * u * sqrt(K) * row_rms, u the
//   FP32 unit roundoff 2^-24. Two FP32 summation orders over K terms drift apart like a
//   random walk of K roundings of about u * row_rms each; the margin of 8 (calibrated in
//   the engine) covers the tensor core's truncating alignment. That is 2^-9.5 of a BF16
//   ULP of an RMS-sized value at K = 128 and 2^-5.5 at K = 32768, so a defect that moves
//   typical outputs by an ULP cannot hide under it.
// - NaN never passes, in either operand.
#pragma once

#include <cstdint>
#include <string>

namespace metrale {

inline constexpr std::uint32_t M16_TC_MAX_ULP = 2;

// The floor's margin over the u * sqrt(K) * row_rms accumulation scale, and u.
inline constexpr double M16_TC_ACC_FLOOR_MARGIN = 8.0;
inline constexpr double F32_UNIT_ROUNDOFF = 0x1p-24;

// Absolute error allowed regardless of ULP distance (see above).
double m16_tc_acc_floor(std::uint32_t k, double row_rms);

// Distance in BF16 ULP between two BF16 values (as floats), counting across zero.
std::uint32_t bf16_ulp_distance(float a, float b);

bool within_m16_tc_budget(float got, float ref, std::uint32_t k, double row_rms);

// Aggregate of a budget check over many outputs.
struct BudgetReport {
  std::uint64_t checked = 0;
  std::uint64_t failures = 0;
  std::uint32_t max_ulp = 0;      // over outputs outside the floor
  double max_abs = 0.0;
  double max_abs_over_floor = 0.0;  // largest |got-ref| / floor
  std::string first_failure;      // description of the first failing output
  void merge(const BudgetReport& other);
  bool ok() const { return failures == 0 && checked > 0; }
};

// Checks one output row of n BF16 values against the reference row (row_rms taken from
// the reference) and adds the outcome to `report`; `row` only labels a failure.
void check_row_budget(BudgetReport& report, const std::uint16_t* got, const std::uint16_t* ref,
                      std::uint32_t n, std::uint32_t k, std::uint32_t row);

}  // namespace metrale
