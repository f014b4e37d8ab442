#!/usr/bin/env bash
# One call on a GPU machine: build, run the test suite, the main job, the SASS check, the
# sanitizers and the benchmark, each step's log written to $OUT (default ./device-out).
#
#   tools/device_run.sh [STEP...]     steps: build tests ci info sass startup sanitize bench
#                                     profile ringdiag ktime ab abtree probe plancheck timeline
#                                     compilescale compilecontention hostcost benchcheck
#                                     sanitizebench multigpu clocks
#                                     (default: build tests info sass)
#   BENCH_ARGS="--shape 4096x4096 --m 16" tools/device_run.sh build bench
#     (for a record add --commit with the SHA written out where the call is made: the
#     device copy's git HEAD can be older than the tree it was sent)
#   STARTUP_COLD_RUNS=5 tools/device_run.sh build startup     (cold starts to sample, default 2)
#   PROFILE_ARGS="--shape 7168x16384 --m 1 --entry w8a16_gemm_m16_splitk/4" \
#     PROFILE_KERNEL=w8a16_gemm_m16_splitk tools/device_run.sh build profile
#     (ncu counters of the first launch of each PROFILE_KERNEL, default any w8a16_gemm*)
#   AB_DEFINES='-;NAME=1' AB_ARGS='--shape 28672x4096 --m 1,16 --entry ...' \
#     tools/device_run.sh build ab          (the benchmark once per define set, '-' = none)
#   AB_TREE=ab-base AB_ARGS=... tools/device_run.sh build abtree   (an older tree, carried
#     as an ignored path: `git archive COMMIT | tar -x -C ab-base`)
#   SANITIZE_CASES='-tc=*bit-identical*' tools/device_run.sh build sanitize   (default: the
#     determinism case and the cluster handoff's comparison)
#   The build step builds the CLI, and the GPU test binary where sanitize or multigpu
#     follows (tests and ci build the whole tree themselves).
#   REQUIRE_CARD=H200 runs no step (exit 3) unless nvidia-smi's name for the GPU holds
#     that text.
#   PACK_OUT=1 packs every file of $OUT but summary.txt into $OUT/out.tgz at the end.
#   The bench step samples the SM clock and the power draw meanwhile ($OUT/bench-clocks.csv,
#   summed up in one line at the end of bench.log).
#   CLOCK_ENTRIES='E1,E2' CLOCK_ARGS='--shape 28672x4096 --m 1;--shape 28672x4096 --m 16' \
#     tools/device_run.sh build clocks   (each entry on each ';'-set alone, its graphs
#     replayed 3 s before they are timed, the SM clock and power per half second appended
#     to clocks-N.log: the bench's ceiling and the read kernel at the layer's size (warmed
#     0.5 and 0.1 s), then the entry; CLOCK_BASELINES=1 adds cuBLAS BF16 and cuBLASLt FP8
#     after it, each warmed 3 s too)
#   Other knobs, each step's own: PROBE_ARGS, PLANCHECK_ARGS, PLANCHECK_RUNS, PLANCHECK_SET,
#   PLANCHECK_M, PLANCHECK_SHAPES (the plancheck step and its sets: below),
#   TIMELINE_ARGS, RINGDIAG_ARGS, RINGDIAG_DEFINES,
#   KTIME_ARGS, KTIME_COUNT, KTIME_KERNELS, COMPILE_JOBS, COMPILE_VARIANTS, AB_TIMEOUT (s a
#   bench run of ab, abtree and timeline may take, 300); BUILD (build-device), OUT.
#
# Every step name is checked before any step runs (exit 2 on an unknown one). The summary
# lists each step's exit status; the script exits 1 if any step's was not 0.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  echo
  sed -n '/^# The plancheck step:/,/^plancheck_set()/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
known_steps=(build tests ci info sass startup sanitize bench profile ringdiag ktime ab abtree
  probe plancheck timeline compilescale compilecontention hostcost benchcheck sanitizebench
  multigpu clocks)
steps=("$@")
((${#steps[@]})) || steps=(build tests info sass)
runs_step() { [[ " ${steps[*]} " == *" $1 "* ]]; }  # runs_step NAME: this call runs NAME
# A typo found only when its turn comes would cost the build and every step before it.
for s in "${steps[@]}"; do
  known=0
  for k in "${known_steps[@]}"; do [[ $s == "$k" ]] && known=1; done
  if ((!known)); then
    echo "tools/device_run.sh: unknown step '$s' (see --help)" >&2
    exit 2
  fi
  if [[ $s == abtree && -z ${AB_TREE:-} ]]; then
    echo "tools/device_run.sh: step abtree needs AB_TREE, the older tree (see --help)" >&2
    exit 2
  fi
done
cd "$(dirname "$0")/.."
# On the GPU machine a driver that finds no device fails the GPU tests and the examples
# instead of skipping them (tests/gpu/main.cpp, .ci/run).
export METRALE_REQUIRE_GPU=1
OUT=${OUT:-$PWD/device-out}
BUILD=${BUILD:-build-device}
summary=()
failed=0

step() {  # step NAME COMMAND...: runs, logs to $OUT/NAME.log, records status and time
  local name=$1; shift
  local start=$SECONDS
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  summary+=("$(printf '%-10s rc=%-3s %4ss' "$name" "$rc" $((SECONDS - start)))")
  ((rc == 0)) || failed=1
  return "$rc"
}

build_tree() {  # build_tree SOURCE_DIR BUILD_DIR TARGET...: configure one checkout, build
               # the targets (device time: the CLI alone is about half the tree's compiles)
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMETRALE_WERROR=ON >/dev/null &&
    cmake --build "$2" -j"$(nproc)" --target "${@:3}"
}

ab_bench() {  # ab_bench METRALE_BINARY BENCH_OPTION...: the bench's rows, no baselines;
              # its errors and a non-zero exit status too, so that a set that times
              # nothing says why; AB_TIMEOUT (s, default 300) stops a set that hangs
  local out rc=0
  out=$(timeout "${AB_TIMEOUT:-300}" "$1" bench --no-host-cost --no-baselines "${@:2}" 2>&1) || rc=$?
  grep -E '^[A-Za-z0-9].*: N=|^ +[0-9]+ +w8a16|WRONG|ERROR|error' <<<"$out"
  ((rc == 124)) && echo "ab: the bench ran past ${AB_TIMEOUT:-300} s and was stopped"
  ((rc == 0)) || echo "ab: the bench exited $rc"
}
# clock_sampler_start FILE / clock_sampler_stop FILE: nvidia-smi writes the SM and memory
# clocks, the power draw, the temperature and the clock-event reasons every 100 ms to FILE
# in between (the reasons' field is clocks_throttle_reasons before driver 535); the stop
# prints the SM clock's range, the largest draw and how many samples had each reason.
clock_sampler_start() {
  local reasons=clocks_event_reasons.active
  nvidia-smi --query-gpu=$reasons --format=csv >/dev/null 2>&1 ||
    reasons=clocks_throttle_reasons.active
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$reasons \
    --format=csv,nounits -lms 100 >"$1" 2>&1 &
  sampler_pid=$!
}
clock_sampler_stop() {
  kill "$sampler_pid" 2>/dev/null
  wait "$sampler_pid" 2>/dev/null
  sort -t, -k2,2n "$1" | awk -F', *' '
    $2 ~ /^[0-9]+$/ { sm[++n] = $2; if ($4 > pw) pw = $4; why[$6]++ }
    END {
      if (!n) { print "clocks: no samples"; exit }
      printf "clocks: %d samples, SM %d / %d / %d MHz (min / median / max), most power %.0f W;",
        n, sm[1], sm[int((n + 1) / 2)], sm[n], pw
      for (r in why) printf " reasons %s: %d", r, why[r]
      print ""
    }'
}
# clock_timeline FILE: the samples of clock_sampler_start as means per half second.
clock_timeline() {
  awk -F', *' '
    $2 ~ /^[0-9]+$/ { i = int(n / 5); n++; c[i] += $2; w[i] += $4; k[i]++ }
    END { for (j = 0; j * 5 < n; j++)
            printf "  %4.1f s  SM %4.0f MHz  %3.0f W\n", j / 2, c[j] / k[j], w[j] / k[j] }' "$1"
}
# clock_report CSV LOG [timeline]: stops the sampler and appends its summary line (and with
# `timeline` the half-second means) to a step's LOG, then prints what it appended. Not to be
# called in a pipeline: the stop waits for the sampler, a child of this shell.
clock_report() {
  local lines
  lines=$(wc -l <"$2")
  clock_sampler_stop "$1" >>"$2"
  [[ ${3:-} == timeline ]] && clock_timeline "$1" >>"$2"
  tail -n +"$((lines + 1))" "$2"
}
export -f build_tree ab_bench  # the steps that run under bash -c call them too

# The plancheck step: the plan against the fastest entry, PLANCHECK_RUNS (2) bench runs
# without baselines per set, averaged by bench_table.py --plan. PLANCHECK_ARGS replaces a
# set's options; PLANCHECK_M and PLANCHECK_SHAPES (NxK separated by spaces) replace a named
# set's token counts and layers. PLANCHECK_SET names one set or several (comma- or
# space-separated; several run as steps plancheck-SET, records $OUT/plancheck-SET-RUN.json):
#   default   the nine 16-56 MiB layers of docs/performance.md item 156 at m = 2..16
#   models    the 16 layers of other models of item 159 at m = 1, 4, 8, 12, 16
#   small     12 layers of 1-16 MiB of items 160-161 at m = 1, 4, 8, against the skinny and
#             deep entries' forms
#   narrow    item 162's 10 narrow layers of 16-48 MiB at m = 1, 4, 8
#   above8    item 164's leads, 10 narrow layers at K = 8192-9216 and with a short last
#             chunk, at m = 10, 13, 16
#   chunks    item 181's bounds on layers it was neither fitted nor checked on, and 6 layers
#             at K = 3584 for its lead there, at m = 1, 2, 4, 6, 8
#   chunks2   item 182's bounds at K = 3584 and 7168 held out, 12 layers at m = 1, 2, 4, 6, 8
#   pdl3584   the PDL forms on 14 layers of 2304-4608 x 3584
#   below8    the deep entry's one chunk against the skinny entry on 16 layers under 8 MiB
#             with K of 2048-3584, 112-224 row groups
#   below8b   item 183's rule held out, 15 layers of 120-240 row groups with K of
#             2048-3584, with PDL
#   below8c   item 183's bounds, 8 layers of 136-240 row groups at K of 1536-1920 and 5 of
#             112-128 groups at K of 2048-3328, with PDL
#   below8d   item 184 held out, 8 layers of 140-256 groups at K of 1536-1920, 3 of 116-132
#             at K of 3328 and 3456, and two past its bounds (K = 1408 and 3200), with PDL
#   below8e   item 185 held out, 4 layers of 136-256 groups at K = 1408, 3 of 112-148 at
#             K = 3200, and two past its bounds (K = 1280 and 3072), with PDL
#   below8f   the one-chunk form below K = 1408 (6 layers of 136-240 row groups at K of
#             1024-1280) and on 132 groups at K = 4096, with PDL
#   below8g   the same held out: 6 other layers of 144-256 groups at K of 1024-1280 and
#             132 groups at K = 5120, with PDL
#   large     8 layers of 64-448 MiB outside the default set at m = 1, 4, 8: stream-K's
#             forms against the deep entry's one chunk on 4, 8 and 16 warps and its
#             three-per-SM form, with and without PDL
#   large2    10 other layers of 70-256 MiB at m = 1, 2, 6: stream-K's forms against the
#             deep entry's one chunk on 4, 8 and 16 warps and the automatic call, without PDL
#   large3    8 layers of 104-175 MiB at m = 1, 4, 8 whose deep CTAs of 8 warps fill
#             2.06-4.24 waves: stream-K's forms, the deep entry on 8 warps, the automatic call
#   large4    item 200's lead: 14 layers of 65-140 MiB at m = 1, 4, 8 where the deep entry's
#             CTAs of 4 or 8 warps fit at once but get more blocks per warp than item 88's
#             rule allows (stream-K on an H200): its 4- and 8-warp forms, stream-K's, the
#             automatic call, without PDL
#   large5    large4 held out: 12 other layers of 76-150 MiB at m = 1, 2, 6 whose deep CTAs
#             of 4 or 8 warps fit at once with 13-24 blocks per warp, the same entries
#   dram8a    item 189's stream-K rule held out: 12 layers of 66-168 MiB at m = 9, 12, 16,
#             stream-K's forms and the automatic call, with and without PDL
#   dram8b    item 189's 32-row rule held out: 8 layers of 3456-4224 rows at K of
#             12288-28672, m = 9, 12, 16, the 32-row and 16-row deep forms, stream-K on one
#             CTA per SM and the automatic call, with and without PDL
#   pdlmid    the PDL choice above 8 tokens on 24-64 MiB layers (item 196's lead): Qwen3-32B
#             qkv and DeepSeek-V3 q_b, where stream-K on one CTA per SM led, and 11 layers
#             of 30-60 MiB held out, at m = 8, 12, 16; the deep and stream-K PDL forms
plancheck_set() {  # plancheck_set M ENTRIES SHAPES: a named set's bench options
  local entry shape
  PLANCHECK_SET_OPTIONS="--m ${PLANCHECK_M:-$1}"
  if [[ -n $2 ]]; then
    PLANCHECK_SET_OPTIONS+=" --entry "
    for entry in $2; do PLANCHECK_SET_OPTIONS+="w8a16_gemm_m16_$entry,"; done
    PLANCHECK_SET_OPTIONS=${PLANCHECK_SET_OPTIONS%,}
  fi
  for shape in ${PLANCHECK_SHAPES:-$3}; do PLANCHECK_SET_OPTIONS+=" --shape $shape"; done
}
# The PDL forms that sets below8c to below8g time.
below8_pdl_forms="skinny/8+pdl skinny/8.sp+pdl skinny/8.cl+pdl skinny_deep/16+pdl
  skinny_deep/16.sp+pdl skinny_deep/8+pdl skinny_deep/8.sp+pdl auto+pdl"
# The forms that sets large4 and large5 time (one list: large5 holds large4 out).
large_deep_forms="skinny_deep/4 skinny_deep/8 streamk.c1 streamk.s3 auto"
plancheck_options() {  # plancheck_options SET: PLANCHECK_SET_OPTIONS for SET, else status 1
  case $1 in
    default) plancheck_set 2,4,6,8,10,12,14,16 "" \
      "6144x4096 4096x4096 4096x14336 10240x5120 24576x1536 8192x4096 5120x8192 14336x4096
       12288x2048" ;;
    models) plancheck_set 1,4,8,12,16 "" \
      "10240x8192 8192x8192 8192x28672 7168x5120 5120x5120 34816x5120 5120x17408
       8192x3584 3584x4096 28672x3584 3584x14336 4096x7168 7168x2048 32768x512
       24576x4096 4096x12288" ;;
    small) plancheck_set 1,4,8 \
      "skinny/8 skinny/8+pdl skinny/8.sp+pdl skinny/8.cl+pdl skinny_deep/16
       skinny_deep/16+pdl skinny_deep/16.sp+pdl skinny_deep/8x2 skinny_deep/8x2.sp+pdl" \
      "1600x4096 1728x4096 2304x4096 3328x4096 3584x4096 1120x6144 1344x6144
       2720x6144 3264x5120 1760x5120 1216x8192 1088x7168" ;;
    narrow) plancheck_set 1,4,8 \
      "skinny/8 skinny_deep/8x2 skinny_deep/4x4 skinny_deep/4x8 skinny_deep/16
       streamk.c1+pdl splitk/8+pdl splitk/4+pdl skinny/8+pdl skinny_deep/8x2+pdl
       skinny_deep/8x2.sp+pdl skinny_deep/4x4+pdl skinny_deep/16+pdl" \
      "1088x20480 1344x14336 1600x12288 1920x12288 1440x16384 1152x24576
       1024x28672 896x20480 1664x10240 2000x10240" ;;
    above8) plancheck_set 10,13,16 \
      "skinny/8 skinny/8+pdl skinny/8.sp+pdl skinny_deep/16 skinny_deep/16+pdl
       skinny_deep/4x4 skinny_deep/4x4+pdl skinny_deep/4x4.sp+pdl skinny_deep/4x8
       skinny_deep/4x8+pdl skinny_deep/4x8.sp+pdl streamk.c1 streamk.c1+pdl" \
      "1344x8192 1472x8192 1600x9216 1728x8192 1312x9216 1760x9216 1376x15360
       1312x15360 1440x15360 1248x11264" ;;
    chunks) plancheck_set 1,2,4,6,8 \
      "skinny/8 skinny_deep/7x2 skinny_deep/14x2 skinny_deep/8x2 skinny_deep/16" \
      "1376x7168 1408x7168 1440x7168 1520x7168 1616x7168 1632x7168 1648x7168 1760x7168
       1824x7168 2016x7168 1600x5376 1616x5376 1632x5376 1648x5376 1696x5376 2400x5376
       2624x5376 2752x5376 2848x5376 2304x3584 2816x3584 3328x3584 3840x3584 4352x3584
       4608x3584" ;;
    chunks2) plancheck_set 1,2,4,6,8 \
      "skinny/8 skinny_deep/7x2 skinny_deep/14x2 skinny_deep/16 skinny_deep/8" \
      "2368x3584 2432x3584 2688x3584 2944x3584 3200x3584 3456x3584 3968x3584 4224x3584
       1312x7168 1328x7168 1360x7168 1392x7168" ;;
    pdl3584) plancheck_set 1,2,4,6,8 \
      "skinny/8+pdl skinny/8.sp+pdl skinny_deep/16+pdl skinny_deep/16.sp+pdl
       skinny_deep/8+pdl skinny_deep/8.sp+pdl skinny_deep/7x2+pdl
       skinny_deep/7x2.sp+pdl skinny_deep/14x2+pdl skinny_deep/8x2.sp+pdl auto+pdl" \
      "2304x3584 2368x3584 2432x3584 2688x3584 2816x3584 2944x3584 3200x3584 3328x3584
       3456x3584 3840x3584 3968x3584 4224x3584 4352x3584 4608x3584" ;;
    below8) plancheck_set 1,2,4,6,8 \
      "skinny/8 skinny_deep/16 auto skinny/8+pdl skinny/8.sp+pdl skinny_deep/16+pdl
       skinny_deep/16.sp+pdl auto+pdl" \
      "1792x3584 2048x3584 2176x3584 2240x3584 1792x3072 2048x3072 2432x3072 2688x3072
       2048x2560 2432x2560 2688x2560 3072x2560 2432x2048 2688x2048 3072x2048 3584x2048" ;;
    below8b) plancheck_set 1,2,4,6,8 \
      "skinny/8+pdl skinny/8.sp+pdl skinny/8.cl+pdl skinny_deep/16+pdl
       skinny_deep/16.sp+pdl auto+pdl" \
      "1920x3584 2112x3584 2144x3584 2176x3328 2560x3328 2304x2816 2560x2816 2304x2304
       3328x2304 2176x2048 3840x2048 1920x3072 2176x3072 1920x2560 2176x2560" ;;
    below8c) plancheck_set 1,2,4,6,8 \
      "$below8_pdl_forms" \
      "2176x1536 2816x1536 3584x1536 2432x1664 2176x1792 3072x1792 2560x1920 3840x1920
       1792x2048 2048x2304 1920x2816 2048x3328 1856x2560" ;;
    below8d) plancheck_set 1,2,4,6,8 \
      "$below8_pdl_forms" \
      "2304x1536 3968x1536 2688x1664 3584x1664 3328x1792 4096x1792 2240x1920 2944x1920
       1856x3328 2112x3328 1920x3456 2048x3200 2560x1408" ;;
    below8e) plancheck_set 1,2,4,6,8 \
      "$below8_pdl_forms" \
      "2176x1408 3072x1408 3840x1408 4096x1408 1792x3200 2112x3200 2368x3200 2560x1280
       1920x3072" ;;
    below8f) plancheck_set 1,2,4,6,8 \
      "$below8_pdl_forms" \
      "2176x1280 3840x1280 2560x1152 3584x1152 2560x1024 3584x1024 2112x4096" ;;
    below8g) plancheck_set 1,2,4,6,8 \
      "$below8_pdl_forms" \
      "3072x1280 4096x1280 2304x1152 3072x1152 2304x1024 3072x1024 2112x5120" ;;
    large) plancheck_set 1,4,8 \
      "streamk streamk.c1 streamk.s3 skinny_deep/4 skinny_deep/8 skinny_deep/16
       skinny_deep3/8 streamk+pdl streamk.c1+pdl streamk.s3+pdl skinny_deep/8+pdl
       skinny_deep/16+pdl skinny_deep3/8+pdl" \
      "10240x8192 8192x8192 8192x28672 57344x8192 16384x16384 73728x4608 4608x36864
       14336x5120" ;;
    large2) plancheck_set 1,2,6 \
      "streamk streamk.c1 streamk.s3 skinny_deep/4 skinny_deep/8 skinny_deep/16 auto" \
      "12288x6144 6144x12288 7168x10240 5120x16384 3584x20480 16384x8192 24576x4096
       43008x5120 32768x8192 18432x7168" ;;
    large3) plancheck_set 1,4,8 \
      "streamk streamk.c1 streamk.s3 skinny_deep/8 auto" \
      "17408x7168 19456x7168 20480x7168 22528x6144 26624x4096 30720x4096 35840x5120
       17920x8192" ;;
    large4) plancheck_set 1,4,8 "$large_deep_forms" \
      "9216x8192 11264x8192 12288x8192 14336x8192 10240x6656 8192x14336 6656x16384
       5632x16384 6144x16384 7168x14336 5120x14336 5120x20480 6144x20480 7168x20480" ;;
    large5) plancheck_set 1,2,6 "$large_deep_forms" \
      "13312x7168 11776x10240 8704x9216 15360x6656 16384x7168 12288x10240 7680x13312
       6656x18432 4608x20480 5632x24576 7680x20480 8192x16384" ;;
    dram8a) plancheck_set 9,12,16 \
      "streamk streamk.c1 streamk.s3 auto streamk+pdl streamk.c1+pdl streamk.s3+pdl auto+pdl" \
      "20480x4096 22016x4096 30720x4096 24576x5120 27648x5120 18432x7168 19200x3584
       22016x3584 24576x7168 36864x4096 8192x16384 12288x10240" ;;
    dram8b) plancheck_set 9,12,16 \
      "skinny_deep32/16 skinny_deep/8 skinny_deep3/8 streamk.c1 auto skinny_deep32/16+pdl
       skinny_deep/8+pdl auto+pdl" \
      "3712x12288 3968x16384 4096x16384 4224x12288 4096x28672 3584x18944 3456x13312
       3840x12800" ;;
    pdlmid) plancheck_set 8,12,16 \
      "auto+pdl streamk.c1+pdl streamk.s3+pdl streamk+pdl skinny_deep/2+pdl
       skinny_deep/4+pdl skinny_deep/4.sp+pdl skinny_deep/8+pdl skinny_deep3/2+pdl
       skinny_deep3/8+pdl" \
      "10240x5120 24576x1536 8192x5120 12288x5120 16384x2048 20480x1536 28672x1536
       32768x1536 7168x7168 9216x4096 6144x6144 16384x3584 12288x3072" ;;
    *) return 1 ;;
  esac
}
# A set's name is checked before any step runs, as the steps' are.
if runs_step plancheck; then
  plancheck_sets_text=${PLANCHECK_SET:-}
  read -ra plancheck_sets <<<"${plancheck_sets_text//,/ }"
  ((${#plancheck_sets[@]})) || plancheck_sets=(default)
  for set in "${plancheck_sets[@]}"; do
    if ! plancheck_options "$set"; then
      echo "tools/device_run.sh: unknown PLANCHECK_SET '$set' (see --help)" >&2
      exit 2
    fi
  done
fi
# Figures that stand only on one card (the H200 of the issue's targets) must not come from
# another: the machine given for a kind is not always that kind's card.
if [[ -n ${REQUIRE_CARD:-} ]]; then
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  if [[ $card != *"$REQUIRE_CARD"* ]]; then
    seen=${card:+"this machine's GPU is '$card'"}
    echo "tools/device_run.sh: REQUIRE_CARD=$REQUIRE_CARD, but ${seen:-nvidia-smi names no GPU};" \
      "no step run" >&2
    exit 3
  fi
  echo "card: $card"
fi
mkdir -p "$OUT"

for s in "${steps[@]}"; do
  case $s in
    build)
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv >"$OUT/gpu.txt" 2>&1
      build_targets=(metrale)
      { runs_step sanitize || runs_step multigpu; } && build_targets+=(metrale_gpu_tests)
      step build build_tree . "$BUILD" "${build_targets[@]}" ;;
    tests)
      step tests env METRALE_BUILD_DIR="$BUILD" bash tests/run.sh ;;
    ci)  # the CI script on this machine: tests, install, examples against the package.
         # Not its sanitizer builds: they are host checks that CI runs where no driver is
         # (here the host tests would load the driver under ASan), and they would spend
         # minutes of device time.
      step ci env METRALE_BUILD_DIR="$BUILD" METRALE_CI_SANITIZE=0 bash .ci/run ;;
    info)
      step info "$BUILD/tools/metrale" ;;
    startup)  # cold and warm start, 16 processes on one empty cache, healing of bad entries
      step startup bash -c "
        cache=\$(mktemp -d); export METRALE_KERNEL_CACHE_DIR=\$cache
        for i in \$(seq ${STARTUP_COLD_RUNS:-2}); do echo \"--- cold \$i (empty cache; the compile of each module at debug level)\"; rm -rf \$cache/*
          METRALE_LOG_LEVEL=debug $BUILD/tools/metrale startup 2>&1 | grep -E 'startup on|modules:|compiled in' | sed 's/^\[[^]]*\] //'; done
        echo '--- cold, every module compiled before the CUDA context exists'; rm -rf \$cache/*
        $BUILD/tools/metrale startup --compile-first
        echo '--- warm (new process, disk cache)'; $BUILD/tools/metrale startup; $BUILD/tools/metrale startup
        rm -rf \$cache/*; echo '--- 16 processes at once on an empty cache'
        for i in \$(seq 16); do $BUILD/tools/metrale startup > \$cache.p\$i.log 2>&1 & done; wait
        grep -L 'startup on' \$cache.p*.log | sed 's/^/FAILED: /'; grep -h 'startup on' \$cache.p*.log | wc -l | sed 's/^/processes that started: /'
        $BUILD/tools/metrale cache --dir \$cache verify; echo \"temp files left: \$(find \$cache -name '*.tmp*' | wc -l)\"
        echo '--- a truncated, a bit-flipped and an empty entry'
        files=(\$(find \$cache -type f | sort | head -3))
        truncate -s 100 \${files[0]}; printf '\\xff' | dd of=\${files[1]} bs=1 seek=200 conv=notrunc 2>/dev/null; : > \${files[2]}
        $BUILD/tools/metrale cache --dir \$cache verify; $BUILD/tools/metrale startup; $BUILD/tools/metrale cache --dir \$cache verify" ;;
    compilescale)  # wall time of compiling every module for sm_90 with 1, 4, 8 and 15 jobs:
                   # whether a cold start is bound by the slowest module or by the CPUs
                   # (COMPILE_JOBS: the job counts; COMPILE_VARIANTS: only these variants)
      variant_args=(); for v in ${COMPILE_VARIANTS:-}; do variant_args+=(--variant "$v"); done
      step compilescale bash -c "lscpu | grep -E '^(CPU\(s\)|Thread|Core|Socket|Model name)'
        for j in ${COMPILE_JOBS:-1 4 8 15}; do rm -rf $BUILD/cscale; s=\$(date +%s%N)
          $BUILD/tools/metrale compile --target sm_90 --jobs \$j --out $BUILD/cscale ${variant_args[*]:-} | sort -n -k4 | tail -2
          echo \"jobs \$j: \$(( (\$(date +%s%N) - s) / 1000000 )) ms in all\"; done" ;;
    compilecontention)  # every module for sm_90 with 15 jobs: threads of one process, one
                        # process per variant, and glibc malloc settings (why parallel compiles slow down)
      step compilecontention bash -c "c=$BUILD/ccont
        t() { local s=\$(date +%s%N); \"\$@\" >/dev/null 2>&1; echo \$(( (\$(date +%s%N) - s) / 1000000 )); }
        echo \"tools: \$(command -v perf strace /usr/bin/time | tr '\\n' ' ')\"
        for n in 1 8 15; do s=\$(date +%s%N); for i in \$(seq \$n); do python3 -c 'sum(range(3 * 10**7))' & done; wait
          echo \"\$n copies of a CPU-bound loop: \$(( (\$(date +%s%N) - s) / 1000000 )) ms\"; done
        for i in 1 2; do rm -rf \$c; echo \"threads, 15 jobs: \$(t $BUILD/tools/metrale compile --target sm_90 --jobs 15 --out \$c) ms\"; done
        for tun in glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=268435456 glibc.malloc.hugetlb=1 glibc.malloc.arena_max=1; do
          rm -rf \$c; echo \"threads, 15 jobs, GLIBC_TUNABLES=\$tun: \$(GLIBC_TUNABLES=\$tun t $BUILD/tools/metrale compile --target sm_90 --jobs 15 --out \$c) ms\"; done
        rm -rf \$c; s=\$(date +%s%N)
        for v in fill_random w8a16_gemm_m16 w8a16_gemm_m16_n64 w8a16_gemm_m16_stream w8a16_gemm_m16_streamk w8a16_gemm_m16_skinny w8a16_gemm_m16_skinny_deep w8a16_gemm_m16_skinny_deep32 w8a16_gemv_batch16; do
          $BUILD/tools/metrale compile --target sm_90 --jobs 2 --variant \$v --out \$c > \$c.\$v.log 2>&1 & done; wait
        echo \"9 processes (one per variant, 2 jobs each): \$(( (\$(date +%s%N) - s) / 1000000 )) ms; \$(cat \$c.*.log | grep -cE 'sm_90 +compiled') modules compiled\"
        rm -rf \$c; echo '--- one job: each module alone'; $BUILD/tools/metrale compile --target sm_90 --jobs 1 --out \$c | sort -n -k4
        rm -rf \$c; echo \"one process, 1 job, fill_random alone: \$(t $BUILD/tools/metrale compile --target sm_90 --jobs 1 --variant fill_random --out \$c) ms\"
        if [ -x /usr/bin/time ]; then rm -rf \$c; /usr/bin/time -v $BUILD/tools/metrale compile --target sm_90 --jobs 15 --out \$c 2>&1 | grep -E 'Elapsed|context switches|page faults|Percent of CPU|Maximum resident'; fi" ;;
    sass)  # one listing per module in $OUT/sass (cuobjdump reads one file a call)
      step sass bash -c "rm -rf $BUILD/sass $OUT/sass && mkdir -p $OUT/sass &&
        $BUILD/tools/metrale compile --target sm_90 --out $BUILD/sass/cache --dump-cubin $BUILD/sass >/dev/null &&
        for f in $BUILD/sass/*.cubin; do
          s=$OUT/sass/\$(basename \$f .cubin).sass
          cuobjdump --dump-sass \$f > \$s || exit 1
          [[ \$f == *w8a16_gemm_m16* ]] &&
            echo \"\$f: HMMA \$(grep -c HMMA \$s), LDG.128 \$(grep -c 'LDG.E.*128' \$s), LDL/STL \$(grep -cE 'LDL|STL' \$s)\"
        done
        python3 tools/sass_wait_order.py --skip w8a16_gemm_m16_streamk $OUT/sass/*.sass" ;;
    sanitize)  # SANITIZE_CASES: doctest case filter (default: the determinism case, every
               # entry, and the cluster handoff's comparison, about 2.5 min in all; the
               # whole suite under memcheck runs past one call's 10 minutes)
      # A filter that names no case would run none and pass: at least one must have run.
      for tool in memcheck racecheck; do
        step "san-$tool" bash -c "out=\$(compute-sanitizer --tool $tool --error-exitcode 9 \
          $BUILD/tests/metrale_gpu_tests '${SANITIZE_CASES:--tc=*bit-identical*,*as a cluster*}' 2>&1)
          rc=\$?; printf '%s\n' \"\$out\"
          grep -qE 'test cases: +[1-9]' <<<\"\$out\" || { echo 'no test case ran'; exit 1; }
          exit \$rc"
      done ;;
    clocks)
      IFS=, read -ra clock_entries <<<"${CLOCK_ENTRIES:-w8a16_gemm_m16_streamk.c1}"
      IFS=';' read -ra clock_sets <<<"${CLOCK_ARGS:---shape 28672x4096 --m 1}"
      clock_baselines=(--no-baselines)
      [[ ${CLOCK_BASELINES:-0} == 1 ]] && clock_baselines=()
      n=0
      for e in "${clock_entries[@]}"; do
        for a in "${clock_sets[@]}"; do
          n=$((n + 1))
          clock_sampler_start "$OUT/clocks-$n.csv"
          # shellcheck disable=SC2086  # a set is options split on spaces
          step "clocks-$n" "$BUILD/tools/metrale" bench "${clock_baselines[@]}" --no-host-cost \
            --warm-ms 3000 --replays 15 --entry "$e" $a
          clock_report "$OUT/clocks-$n.csv" "$OUT/clocks-$n.log" timeline
        done
      done ;;
    bench)  # with the SM clock and the board's power sampled through the run (bench-clocks.csv):
            # a kernel that slows the clock shows there, not in its time alone
      clock_sampler_start "$OUT/bench-clocks.csv"
      step bench "$BUILD/tools/metrale" bench --json "$OUT/bench.json" ${BENCH_ARGS:-}
      clock_report "$OUT/bench-clocks.csv" "$OUT/bench.log" ;;
    profile)  # the split-K entry's SASS, then ncu counters and stall reasons of the first
              # launch of each kernel in PROFILE_KERNEL (comma-separated, default any w8a16_gemm*)
      step profile bash -c "rm -rf $BUILD/prof && $BUILD/tools/metrale compile --target sm_90 --variant w8a16_gemm_m16_splitk --out $BUILD/prof/cache --dump-cubin $BUILD/prof >/dev/null &&
        cuobjdump --dump-sass $BUILD/prof/*.cubin > $OUT/splitk.sass &&
        for kernel in \$(echo ${PROFILE_KERNEL:-regex:w8a16_gemm} | tr , ' '); do
          echo \"--- ncu: \$kernel\"
          ncu --clock-control none --kernel-name \$kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --section InstructionStats --section LaunchStats --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio $BUILD/tools/metrale bench --no-baselines --replays 1 ${PROFILE_ARGS:-}
        done" ;;
    ringdiag)  # stream-K against its ring alone (METRALE_DIAG_RING_ONLY) and cuBLASLt, one
               # launch at a time under ncu: time, DRAM bytes, and the SMs' active cycles
               # (min / avg / max: how evenly the launch keeps them busy). RINGDIAG_DEFINES:
               # ';'-separated define sets, '-' = none (the full kernels and cuBLASLt).
      step ringdiag bash -c "
        metrics=gpu__time_duration.sum,dram__bytes_read.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,gpc__cycles_elapsed.max
        IFS=';' read -ra sets <<< \"\${RINGDIAG_DEFINES:--;METRALE_DIAG_RING_ONLY=1;METRALE_DIAG_RING_ONLY=1 METRALE_DIAG_NO_REDUCE=1}\"
        for set in \"\${sets[@]}\"; do
          defines=(); for d in \$set; do [ \"\$d\" = - ] || defines+=(--define \"\$d\"); done
          ((\${#defines[@]})) && defines+=(--no-baselines)
          echo \"--- defines: \$set\"
          timeout 200 ncu --clock-control none --launch-count 40 --metrics \$metrics --kernel-name regex:'streamk|nvjet|xmma' $BUILD/tools/metrale bench --no-host-cost --replays 1 --min-bytes 128 \${RINGDIAG_ARGS:---shape 28672x4096 --shape 51200x5120 --m 1 --entry w8a16_gemm_m16_streamk.c1,w8a16_gemm_m16_streamk} \"\${defines[@]}\" 2>&1 | grep -E '^  [a-z]|gpu__time|dram__bytes|cycles'
        done" ;;
    ktime)  # every kernel of one bench run under ncu, one launch at a time: gpu__time_duration
            # and dram__bytes_read (KTIME_ARGS: bench options; KTIME_KERNELS: ncu name regex)
      step ktime bash -c "timeout 300 ncu --clock-control none --launch-count \${KTIME_COUNT:-80} --metrics gpu__time_duration.sum,dram__bytes_read.sum --kernel-name regex:'\${KTIME_KERNELS:-w8a16|nvjet|xmma|gemm|gemv}' $BUILD/tools/metrale bench --no-host-cost --replays 1 --min-bytes 128 \${KTIME_ARGS:---shape 1536x7168 --m 1} 2>&1 | grep -E '^  [a-zA-Z_]|gpu__time|dram__bytes'" ;;
    ab)  # the benchmark once per define set of AB_DEFINES (';'-separated, '-' = none), on
         # AB_ARGS (default: three large layers, m 1 and 16, stream-K on 1 and 2 CTAs per SM;
         # add --time-wrong to time diagnostic defines whose results are wrong on purpose);
         # tools/ab_summary.py compares the sets
      step ab bash -c "
        IFS=';' read -ra sets <<< \"\${AB_DEFINES:--;STREAM_MMA_CHAINS=2}\"
        for set in \"\${sets[@]}\"; do
          defines=(); for d in \$set; do [ \"\$d\" = - ] || defines+=(--define \"\$d\"); done
          echo \"--- defines: \$set\"
          ab_bench $BUILD/tools/metrale \${AB_ARGS:---shape 28672x4096 --shape 7168x18432 --shape 51200x5120 --m 1,16 --entry w8a16_gemm_m16_streamk.c1,w8a16_gemm_m16_streamk,w8a16_gemm_m16_streamk.c1.s8} \"\${defines[@]}\"
        done" ;;
    abtree)  # this tree against an older one (AB_TREE: a directory inside this checkout
             # holding it, e.g. `git archive COMMIT | tar -x -C ab-base`), for changes a
             # define cannot switch (the host's side too): the benchmark from each build in
             # turn, AB_RUNS times (2), on AB_ARGS; tools/ab_summary.py compares them
             # ('-' = the older tree, 'this' = this one)
      step abtree bash -c "
        build_tree \"${AB_TREE:?AB_TREE names the older tree}\" \"$AB_TREE/build-abtree\" metrale >/dev/null || exit 1
        for run in \$(seq ${AB_RUNS:-2}); do
          for tree in - this; do
            bin=$BUILD/tools/metrale; [ \$tree = - ] && bin=\"$AB_TREE/build-abtree/tools/metrale\"
            echo \"--- defines: \$tree\"
            ab_bench \"\$bin\" \${AB_ARGS:---shape 28672x4096 --shape 7168x18432 --shape 51200x5120 --m 1,16 --entry w8a16_gemm_m16_streamk}
          done
        done" ;;
    probe)  # entries side by side on the small and medium layers, with the baselines
            # (PROBE_ARGS: other shapes, m or entries; ';' between argument sets, each its
            # own bench run, $OUT/probe-N.json)
      export PROBE_DEFAULT="--shape 576x7168 --shape 1536x7168 --shape 4096x4096 --shape 6144x4096 --shape 10240x5120 --m 1,8,16 --entry w8a16_gemm_m16,w8a16_gemm_m16_splitk/2,w8a16_gemm_m16_splitk/4,w8a16_gemm_m16_splitk/8,w8a16_gemm_m16_streamk.c1,w8a16_gemm_m16_skinny/8,w8a16_gemm_m16_skinny/4,w8a16_gemm_m16_skinny2/8,w8a16_gemm_m16_skinny/8+pdl"
      step probe bash -c "
        IFS=';' read -ra sets <<< \"\${PROBE_ARGS:-\$PROBE_DEFAULT}\"
        i=0
        for set in \"\${sets[@]}\"; do
          i=\$((i + 1)); echo \"--- probe \$i: \$set\"
          $BUILD/tools/metrale bench --no-host-cost --json $OUT/probe-\$i.json \$set
        done" ;;
    plancheck)  # the plan against the fastest entry on each set of PLANCHECK_SET (above)
      for set in "${plancheck_sets[@]}"; do
        plancheck_options "$set"
        export PLANCHECK_SET_OPTIONS
        name=plancheck
        ((${#plancheck_sets[@]} > 1)) && name=plancheck-$set
        step "$name" bash -c "
          for run in \$(seq ${PLANCHECK_RUNS:-2}); do
            echo \"--- $name \$run\"
            ab_bench $BUILD/tools/metrale \${PLANCHECK_ARGS:-\$PLANCHECK_SET_OPTIONS} --json $OUT/$name-\$run.json
          done
          python3 tools/bench_table.py --plan $OUT/$name-[0-9]*.json"
      done ;;
    timeline)  # stream-K's per-CTA timeline (bench --timeline) on TIMELINE_ARGS, ';' between
               # argument sets, each its own bench run ($OUT/timeline-N.txt, summarised by
               # tools/timeline_summary.py); add --define METRALE_DIAG_RING_ONLY=1 --time-wrong
               # to a set for the ring alone
      export TIMELINE_DEFAULT="--shape 28672x4096 --shape 7168x18432 --m 1,16 --entry w8a16_gemm_m16_streamk.c1,w8a16_gemm_m16_streamk.s3"
      step timeline bash -c "
        IFS=';' read -ra sets <<< \"\${TIMELINE_ARGS:-\$TIMELINE_DEFAULT}\"
        i=0
        for set in \"\${sets[@]}\"; do
          i=\$((i + 1)); echo \"--- timeline \$i: \$set\"
          ab_bench $BUILD/tools/metrale --timeline $OUT/timeline-\$i.txt \$set
          python3 tools/timeline_summary.py $OUT/timeline-\$i.txt
        done" ;;
    hostcost)  # the launcher's host cost alone, on a free core and pinned to one
      step hostcost bash -c "for pin in '' 'taskset -c 3'; do echo \"--- \${pin:-not pinned}\"
        \$pin $BUILD/tools/metrale bench --shape 4096x4096 --m 1 --entry w8a16_gemm_m16 --no-baselines --replays 1 --min-bytes 128 2>&1 | grep 'host cost'; done" ;;
    benchcheck)  # the benchmark's checks catch a planted defect: each entry built with
                 # METRALE_DIAG_NO_DECODE (raw FP8 words into the MMAs) and timed anyway
                 # (--time-wrong) must be WRONG in the check of every launch of its graph,
                 # not only in its check launch
      step benchcheck bash -c "
        $BUILD/tools/metrale bench --shape 28672x4096 --m 4,16 --no-baselines --no-host-cost \
          --entry w8a16_gemm_m16_streamk,w8a16_gemm_m16_streamk+pdl,w8a16_gemm_m16_stream/1 \
          --define METRALE_DIAG_NO_DECODE=1 --time-wrong --json $OUT/benchcheck.json
        python3 -c '
import json, sys
rows = [(r[\"m\"], e[\"entry\"], e[\"status\"], e.get(\"detail\", \"\"))
        for r in json.load(open(sys.argv[1]))[\"results\"] for e in r[\"entries\"]]
caught = [x for x in rows if x[2] == \"WRONG\" and \"every launch of the graph\" in x[3]]
for x in rows: print(x[0], x[1], x[2], x[3][:300])
print(len(caught), \"of\", len(rows), \"planted defects caught by the every-launch check\")
sys.exit(0 if rows and len(caught) == len(rows) else 1)
' $OUT/benchcheck.json" ;;
    sanitizebench)  # memcheck and racecheck over a small bench run: the benchmark's own
                    # kernels (the every-launch check, the baselines' references) among them
      step sanitizebench bash -c "
        args='--shape 576x7168 --shape 3328x3584 --m 4,16 --min-bytes 32 --replays 1 --no-host-cost
              --entry w8a16_gemm_m16_streamk,w8a16_gemm_m16_skinny/8+pdl,w8a16_gemm_m16_skinny_deep/14x2'
        compute-sanitizer --tool memcheck --error-exitcode 3 $BUILD/tools/metrale bench \$args &&
          compute-sanitizer --tool racecheck --error-exitcode 3 $BUILD/tools/metrale bench \$args \
            --no-baselines" ;;
    multigpu)
      step multigpu "$BUILD/tests/metrale_gpu_tests" -tc="*two GPUs*,*one GPU*" ;;
    *) echo "step $s has no commands"; exit 2 ;;
  esac
done
printf '%s\n' "=== summary" "${summary[@]}" | tee "$OUT/summary.txt"
# PACK_OUT=1: every file of $OUT but the summary in one archive, out.tgz, for a caller that
# fetches a limited number of files.
if [[ ${PACK_OUT:-0} == 1 ]]; then
  (cd "$OUT" && mapfile -t files < <(ls -A | grep -vx -e summary.txt -e out.tgz) &&
    ((${#files[@]})) && tar czf out.tgz "${files[@]}" && rm -rf "${files[@]}")
fi
exit "$failed"
