#include "metrale/bench/schedule.hpp"

#include <algorithm>

namespace metrale::bench {

bool is_pdl_entry(std::string_view name) { return name.ends_with("+pdl"); }

std::vector<TimingStep> layer_schedule(std::span<const std::string_view> listed,
                                       std::span<const std::string_view> tuning,
                                       std::span<const PlanChoices> choices, bool baselines) {
  using What = TimingStep::What;
  std::vector<TimingStep> steps;
  for (const bool pdl : {false, true}) {
    const bool kind_listed = std::any_of(listed.begin(), listed.end(), [&](std::string_view e) {
      return is_pdl_entry(e) == pdl;
    });
    for (std::size_t m = 0; m < choices.size(); ++m) {
      for (std::size_t i = 0; i < listed.size(); ++i) {
        if (is_pdl_entry(listed[i]) == pdl) steps.push_back({What::listed, m, i});
      }
      const std::string& choice = pdl ? choices[m].pdl : choices[m].plain;
      const bool in_list = std::find(listed.begin(), listed.end(), choice) != listed.end();
      if (kind_listed && !in_list) {
        const auto t = std::find(tuning.begin(), tuning.end(), choice);
        if (t != tuning.end()) {
          steps.push_back({What::tuning, m, static_cast<std::size_t>(t - tuning.begin())});
        }
      }
      if (!pdl && baselines) steps.push_back({What::baselines, m, 0});
    }
  }
  return steps;
}

}  // namespace metrale::bench
