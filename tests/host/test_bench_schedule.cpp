// The benchmark's timing order on one layer (layer_schedule): no PDL entry before a plain
// entry or a baseline, the list's order within a kind, and the plan's choice added only
// where the list lacks it and times entries of its kind.
#include <doctest/doctest.h>

#include <array>
#include <string_view>
#include <vector>

#include "metrale/bench/schedule.hpp"

using namespace metrale::bench;
using What = TimingStep::What;

namespace {

constexpr std::array<std::string_view, 3> kTuning = {"t/1", "t/2", "t/2+pdl"};

std::vector<TimingStep> schedule(std::vector<std::string_view> listed,
                                 std::vector<PlanChoices> choices, bool baselines = true) {
  return layer_schedule(listed, kTuning, choices, baselines);
}

}  // namespace

TEST_CASE("bench schedule: plain entries and baselines of every m before any PDL entry") {
  // The default list interleaves the kinds, as the bench's table does.
  const std::vector<TimingStep> steps =
      schedule({"a", "a+pdl", "b", "b+pdl"}, {{"a", "a+pdl"}, {"b", "b+pdl"}});
  const std::vector<TimingStep> expected = {
      {What::listed, 0, 0},    {What::listed, 0, 2}, {What::baselines, 0, 0},
      {What::listed, 1, 0},    {What::listed, 1, 2}, {What::baselines, 1, 0},
      {What::listed, 0, 1},    {What::listed, 0, 3}, {What::listed, 1, 1},
      {What::listed, 1, 3},
  };
  CHECK(steps == expected);
}

TEST_CASE("bench schedule: the plan's choice from the tuning table goes with its kind") {
  // m = 0: both choices are tuning points; m = 1: both are listed.
  const std::vector<TimingStep> steps =
      schedule({"a", "a+pdl"}, {{"t/2", "t/2+pdl"}, {"a", "a+pdl"}});
  const std::vector<TimingStep> expected = {
      {What::listed, 0, 0}, {What::tuning, 0, 1}, {What::baselines, 0, 0},
      {What::listed, 1, 0}, {What::baselines, 1, 0},
      {What::listed, 0, 1}, {What::tuning, 0, 2},
      {What::listed, 1, 1},
  };
  CHECK(steps == expected);
}

TEST_CASE("bench schedule: a list of one kind stays of that kind") {
  SUBCASE("plain only: no PDL choice is added") {
    const std::vector<TimingStep> steps = schedule({"a"}, {{"t/1", "t/2+pdl"}});
    const std::vector<TimingStep> expected = {
        {What::listed, 0, 0}, {What::tuning, 0, 0}, {What::baselines, 0, 0}};
    CHECK(steps == expected);
  }
  SUBCASE("PDL only: the baselines first, no plain choice added") {
    const std::vector<TimingStep> steps = schedule({"a+pdl"}, {{"t/1", "t/2+pdl"}});
    const std::vector<TimingStep> expected = {
        {What::baselines, 0, 0}, {What::listed, 0, 0}, {What::tuning, 0, 2}};
    CHECK(steps == expected);
  }
  SUBCASE("without baselines") {
    const std::vector<TimingStep> steps = schedule({"a", "a+pdl"}, {{"a", "a+pdl"}}, false);
    const std::vector<TimingStep> expected = {{What::listed, 0, 0}, {What::listed, 0, 1}};
    CHECK(steps == expected);
  }
}

TEST_CASE("bench schedule: a choice that no table names is not timed") {
  const std::vector<TimingStep> steps = schedule({"a", "a+pdl"}, {{"x", "x+pdl"}}, false);
  const std::vector<TimingStep> expected = {{What::listed, 0, 0}, {What::listed, 0, 1}};
  CHECK(steps == expected);
  CHECK(is_pdl_entry("w8a16_gemm_m16_streamk.c1+pdl"));
  CHECK_FALSE(is_pdl_entry("w8a16_gemm_m16_streamk.c1"));
}
