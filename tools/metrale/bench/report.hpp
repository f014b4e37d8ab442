// The benchmark's two outputs: a table for people on stdout, and JSON for the record
// (bench/results/), written by hand so the CLI needs no JSON library.
#pragma once

#include <string>

#include "metrale/bench/results.hpp"

namespace metrale::bench {

void print_report(const BenchRun& run);

// Writes the whole run to `path`; throws Error when the file cannot be written.
void write_json(const BenchRun& run, const std::string& path);

// The baseline of `name` in `c` when it ran, else nullptr.
const BaselineResult* find_baseline(const CaseResult& c, const std::string& name);

// baseline time / entry time, or 0 when either is missing.
double speedup(const EntryResult& e, const BaselineResult* b);

}  // namespace metrale::bench
