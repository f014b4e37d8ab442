#!/usr/bin/env bash
# One call on a GPU machine: build, run the test suite, the main job, the SASS check, the
# sanitizers and the benchmark, each step's log written to $OUT (default ./device-out).
#
#   tools/device_run.sh [STEP...]     steps: build tests info sass sanitize bench multigpu
#                                     (default: build tests info sass)
#   BENCH_ARGS="--shape 4096x4096 --m 16" tools/device_run.sh build bench
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-device}
steps=("$@")
((${#steps[@]})) || steps=(build tests info sass)
summary=()

step() {  # step NAME COMMAND...: runs, logs to $OUT/NAME.log, records status and time
  local name=$1; shift
  local start=$SECONDS
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  summary+=("$(printf '%-10s rc=%-3s %4ss' "$name" "$rc" $((SECONDS - start)))")
  return "$rc"
}

for s in "${steps[@]}"; do
  case $s in
    build)
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv >"$OUT/gpu.txt" 2>&1
      step build bash -c "cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMETRALE_WERROR=ON >/dev/null && cmake --build $BUILD -j$(nproc)" ;;
    tests)
      step tests env METRALE_BUILD_DIR="$BUILD" bash tests/run.sh ;;
    info)
      step info "$BUILD/tools/metrale" ;;
    sass)
      step sass bash -c "rm -rf $BUILD/sass && $BUILD/tools/metrale compile --target sm_90 --out $BUILD/sass/cache --dump-cubin $BUILD/sass >/dev/null &&
        for f in $BUILD/sass/*w8a16_gemm_m16*.cubin; do
          echo \"\$f: HMMA \$(cuobjdump --dump-sass \$f | grep -c HMMA), LDG.128 \$(cuobjdump --dump-sass \$f | grep -c 'LDG.E.*128'), LDL/STL \$(cuobjdump --dump-sass \$f | grep -cE 'LDL|STL')\"
        done" ;;
    sanitize)
      for tool in memcheck racecheck; do
        step "san-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 \
          "$BUILD/tests/metrale_gpu_tests" -tce="*sweep*,*random shapes*,*bit for bit*"
      done ;;
    bench)
      step bench "$BUILD/tools/metrale" bench --json "$OUT/bench.json" ${BENCH_ARGS:-} ;;
    multigpu)
      step multigpu "$BUILD/tests/metrale_gpu_tests" -tc="*two GPUs*,*multi*" ;;
    *) echo "unknown step $s"; exit 2 ;;
  esac
done
printf '%s\n' "=== summary" "${summary[@]}" | tee "$OUT/summary.txt"
