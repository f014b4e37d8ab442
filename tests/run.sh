#!/usr/bin/env bash
# Builds the library and runs the whole test suite. On a machine without a GPU the GPU
# tests are reported as skipped, with the reason; on a GPU machine they run.
set -euo pipefail
cd "$(dirname "$0")/.."

# Install what is missing (Debian / Ubuntu packages); a machine that already has the
# tools and headers installs nothing.
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
has_header() { echo "#include <$1>" | g++ -std=c++20 -E -x c++ - >/dev/null 2>&1; }
has_header fmt/format.h || need+=(libfmt-dev)
has_header spdlog/spdlog.h || need+=(libspdlog-dev)
has_header doctest/doctest.h || need+=(doctest-dev)
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

build=${METRALE_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMETRALE_WERROR=ON
cmake --build "$build" -j"$(nproc)"
status=0
ctest --test-dir "$build" --output-on-failure || status=$?
# CTest does not print a skipped test's output: show why the GPU tests were skipped.
log="$build/Testing/Temporary/LastTest.log"
if [[ -f $log ]] && grep -q "^SKIPPED:" "$log"; then
  grep "^SKIPPED:" "$log" | sort -u
fi
# Where the GPU tests ran, the figures they report (outputs checked, largest errors,
# planted defects caught) are worth seeing even when everything passed.
if [[ -f $log ]] && grep -q "gpu/.*MESSAGE:" "$log"; then
  echo "GPU test figures:"
  grep "gpu/.*MESSAGE:" "$log" | sed 's/^.*MESSAGE: /  /' | grep -v "registers"
fi
exit $status
