#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, and run the CLI's
# default command (device report, compile of every kernel, per-entry resources and, on a
# GPU, the microtest). Extra arguments go to `metrale` (`bash tools/main.sh bench --help`
# builds, then describes the benchmark's options).
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  echo "usage: tools/main.sh [METRALE_ARGUMENT...]   (METRALE_BUILD_DIR=DIR, default ./build)"
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
source tests/prerequisites.sh
build=${METRALE_BUILD_DIR:-build}
# The same cache options as tests/run.sh, so that the README's second command reuses
# this build rather than reconfiguring and rebuilding every target.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMETRALE_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target metrale
exec "$build/tools/metrale" "$@"
