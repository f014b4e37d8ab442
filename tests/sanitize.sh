#!/usr/bin/env bash
# The host tests and the CLI's checks under AddressSanitizer, LeakSanitizer and
# UndefinedBehaviorSanitizer, built by clang (any report fails the run), in a build
# directory of their own. clang also keeps every library it is given to link, which
# GCC's --as-needed hides: no binary may record libcuda.so.1 as needed, since every one
# must start on a machine without a driver (the library opens it at run time). Without
# clang++ the run says so and passes.
set -euo pipefail
for arg in "$@"; do
  if [[ $arg != -h && $arg != --help ]]; then
    echo "tests/sanitize.sh: unknown argument '$arg' (see --help)" >&2
    exit 2
  fi
done
if (($#)); then
  echo "usage: tests/sanitize.sh   (METRALE_SANITIZE_BUILD_DIR=DIR, default build-sanitize)"
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
if ! command -v clang++ >/dev/null; then
  echo "sanitize: skipped: clang++ not found"
  exit 0
fi
build=${METRALE_SANITIZE_BUILD_DIR:-build-sanitize}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DMETRALE_WERROR=ON -DMETRALE_SANITIZE=ON -DMETRALE_INSTALL=OFF >/dev/null
# The GPU tests are built too (clang must take them as well), not run: they need a GPU,
# and the driver and ASan's shadow memory do not share an address space by default.
cmake --build "$build" -j"$(nproc)" --target metrale_host_tests metrale metrale_gpu_tests

status=0
for binary in "$build/tests/metrale_host_tests" "$build/tests/metrale_gpu_tests" \
              "$build/tools/metrale"; do
  if readelf -d "$binary" | grep -q 'NEEDED.*libcuda\.so'; then
    echo "sanitize: FAILED: $binary records libcuda.so.1 as needed"
    status=1
  fi
done
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/tests/metrale_host_tests" || status=1
bash tests/cli_help.sh "$build/tools/metrale" | tail -n 1 || status=1
bash tests/cli_plan.sh "$build/tools/metrale" | tail -n 1 || status=1
if ((status == 0)); then
  echo "sanitize: passed (host tests, cli help, cli plan under ASan, LSan and UBSan; clang)"
else
  echo "sanitize: FAILED"
fi
exit "$status"
