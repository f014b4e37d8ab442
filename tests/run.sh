#!/usr/bin/env bash
# Builds the library and runs the whole test suite. On a machine without a GPU the GPU
# tests are reported as skipped, with the reason; on a GPU machine they run.
set -euo pipefail
source "$(dirname "$0")/help_only.sh"
help_only tests/run.sh "$0" \
  "usage: tests/run.sh   (METRALE_BUILD_DIR=DIR to build elsewhere than ./build)" "$@"
cd "$(dirname "$0")/.."

source tests/prerequisites.sh

build=${METRALE_BUILD_DIR:-build}
# The same cache options as tools/main.sh, so that one build serves both commands.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMETRALE_WERROR=ON
cmake --build "$build" -j"$(nproc)"
status=0
ctest --test-dir "$build" --output-on-failure || status=$?
# CTest does not print a skipped test's output: show why the GPU tests were skipped.
log="$build/Testing/Temporary/LastTest.log"
if [[ -f $log ]] && grep -q "^SKIPPED:" "$log"; then
  grep -B4 "^SKIPPED:" "$log" | grep -E "test cases|^SKIPPED:" | sed 's/^\[doctest\] /GPU /'
fi
# Each suite's case count (CTest shows a passing test's output nowhere).
if [[ -f $log ]]; then
  awk '/^[0-9]+\/[0-9]+ Testing: /{name=$3} /^\[doctest\] test cases:/{sub(/^\[doctest\] /, ""); print name ": " $0}' "$log"
  grep "^cli help:" "$log" || true
fi
# Where the GPU tests ran, the figures they report (outputs checked, largest errors,
# planted defects caught) are worth seeing even when everything passed.
if [[ -f $log ]] && grep -q "gpu/.*MESSAGE:" "$log"; then
  echo "GPU test figures:"
  grep "gpu/.*MESSAGE:" "$log" | sed 's/^.*MESSAGE: /  /' | grep -v "registers"
fi
exit $status
