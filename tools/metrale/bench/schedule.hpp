// The order in which the benchmark times what it measures on one layer. A plain launch
// timed after PDL entries can read about 2 % slow (docs/performance.md, items 174 and
// 178), so a layer's plain entries and baselines of every m come before any of its PDL
// entries. Pure: the runner executes the schedule, the host tests check it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace metrale::bench {

// A "+pdl" entry: launched with programmatic dependent launch.
bool is_pdl_entry(std::string_view name);

// The plan's choices at one m, as bench entry names (plan_entry_name; the PDL one with
// "+pdl").
struct PlanChoices {
  std::string plain;
  std::string pdl;
};

struct TimingStep {
  enum class What {
    listed,     // entry `index` of the list
    tuning,     // entry `index` of the tuning table: the plan's choice, which the list lacks
    baselines,  // cuBLAS BF16, then cuBLASLt FP8
  };
  What what = What::listed;
  std::size_t m_index = 0;  // into the run's token counts
  std::size_t index = 0;    // into the list or the tuning table; 0 for the baselines
  bool operator==(const TimingStep&) const = default;
};

// Two passes over the token counts: for each m, the list's plain entries in list order,
// the plan's plain choice if only a tuning entry runs it, then the baselines (if
// `baselines`); then for each m the list's PDL entries and the plan's PDL choice alike. A
// choice is added only where the list has entries of its kind, so that a list of plain
// launches stays plain. `choices` holds one element per token count.
std::vector<TimingStep> layer_schedule(std::span<const std::string_view> listed,
                                       std::span<const std::string_view> tuning,
                                       std::span<const PlanChoices> choices, bool baselines);

}  // namespace metrale::bench
