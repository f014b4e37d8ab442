#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, and run the CLI's
# default command (device report, compile of every kernel, per-entry resources and, on a
# GPU, the microtest). Extra arguments go to `metrale`.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/prerequisites.sh
build=${METRALE_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target metrale
exec "$build/tools/metrale" "$@"
