#!/usr/bin/env bash
# The host tests under the sanitizers, built by clang in build directories of their own:
# with AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer (any report fails
# the run; the fake driver's tests and the CLI's cli_help and cli_plan checks run on that
# build too), then with
# ThreadSanitizer (the module cache's concurrent first uses, the logger, the disk cache).
# clang also keeps every library it is given to link, which GCC's --as-needed hides: no
# binary may record libcuda.so.1 as needed, since every one must start on a machine
# without a driver (the library opens it at run time). The GPU tests are built, not run.
# Without clang++ the run says so and passes.
set -euo pipefail
source "$(dirname "$0")/help_only.sh"
help_only tests/sanitize.sh "$0" \
  "usage: tests/sanitize.sh   (METRALE_SANITIZE_BUILD_DIR=PREFIX, default build-sanitize:
                           PREFIX-address and PREFIX-thread)" "$@"
cd "$(dirname "$0")/.."
if ! command -v clang++ >/dev/null; then
  echo "sanitize: skipped: clang++ not found"
  exit 0
fi
prefix=${METRALE_SANITIZE_BUILD_DIR:-build-sanitize}
status=0

build() {  # build KIND TARGET...: a clang build with METRALE_SANITIZE=KIND
  local kind=$1
  shift
  cmake -S . -B "$prefix-$kind" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DMETRALE_WERROR=ON -DMETRALE_SANITIZE="$kind" -DMETRALE_INSTALL=OFF >/dev/null
  cmake --build "$prefix-$kind" -j"$(nproc)" --target "$@"
}

# The GPU tests are built (clang must take them too), not run: they need a GPU, and the
# driver and ASan's shadow memory do not share an address space by default.
build address metrale_host_tests metrale_gpu_tests metrale metrale_fake_driver_tests \
  metrale_fake_cuda
for binary in "$prefix-address/tests/metrale_host_tests" \
              "$prefix-address/tests/metrale_gpu_tests" "$prefix-address/tools/metrale"; do
  if readelf -d "$binary" | grep -q 'NEEDED.*libcuda\.so'; then
    echo "sanitize: FAILED: $binary records libcuda.so.1 as needed"
    status=1
  fi
done
# A sanitizer's report exits 99: the CLI checks expect exit 2 from a usage error and 1
# from a failure, which a report after the refusal's line would otherwise pass for.
ASAN_OPTIONS=detect_leaks=1:exitcode=99 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99 bash -c 'set -o pipefail
  "$1/tests/metrale_host_tests" &&
  for mode in device no-device; do
    METRALE_FAKE_DRIVER=$mode LD_LIBRARY_PATH="$1/tests/fake_driver" \
      "$1/tests/metrale_fake_driver_tests" | tail -n 1 || exit 1
  done &&
  bash tests/cli_help.sh "$1/tools/metrale" | tail -n 1 &&
  bash tests/cli_plan.sh "$1/tools/metrale" | tail -n 1' _ "$prefix-address" || status=1

build thread metrale_host_tests
TSAN_OPTIONS=halt_on_error=1 "$prefix-thread/tests/metrale_host_tests" || status=1

if ((status == 0)); then
  echo "sanitize: passed (host tests under ASan, LSan and UBSan, and under TSan; the fake"
  echo "          driver's tests, cli help and cli plan under ASan, LSan and UBSan; clang)"
else
  echo "sanitize: FAILED"
fi
exit "$status"
