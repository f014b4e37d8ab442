#!/usr/bin/env bash
# Every compile-time switch of the kernels still compiles: the tuning points, diagnostic
# modes (METRALE_DIAG_*) and injected defects (METRALE_DEFECT_*) that the benchmark's
# --define, tools/device_run.sh and the GPU tests build, each alone, for sm_90, through
# `metrale compile --define` (NVRTC, no GPU needed). A switch that a change broke would
# otherwise fail only on the device, where its experiment or test is next run. The list
# below is checked against the sources: a switch tested in an #if of kernel_sources/ that
# it does not name fails the test, so a new switch comes with its line here. Run by CTest:
# tests/kernel_switches.sh METRALE_BINARY KERNEL_SOURCES_DIR.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -ne 2 ]]; then
  echo "usage: tests/kernel_switches.sh METRALE_BINARY KERNEL_SOURCES_DIR"
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi
metrale=$1
sources=$2

m16="w8a16_gemm_m16 w8a16_gemm_m16_n64"
stream=w8a16_gemm_m16_stream
streamk=w8a16_gemm_m16_streamk
skinny="w8a16_gemm_m16_skinny w8a16_gemm_m16_skinny_deep w8a16_gemm_m16_skinny_deep32"
# SWITCH=VALUE and the variants it is compiled for: a value other than the default.
switches="
M16_DEPTH_M8=1 $m16
M16_DEPTH_M16=1 $m16
M16_MIN_CTAS=2 $m16
M16_MMA_CHAINS=1 $m16
M16_MMA_CHAINS=2 $m16
METRALE_DIAG_LOADS_ONLY=1 $m16
METRALE_DIAG_NO_CLUSTER_REDUCE=1 $m16
METRALE_DEFECT_BF16_ACCUM=1 $m16 $stream $streamk
METRALE_DEFECT_DROP_KBLOCK=1 $m16 $stream $streamk
METRALE_DEFECT_SHIFT_ROW=1 $m16 $stream $streamk
METRALE_DEFECT_SKIP_LAST_TILE=1 $m16 $stream $streamk
METRALE_DEFECT_WRONG_SCALE_ROW=1 $m16 $stream $streamk
STREAM_MMA_CHAINS=2 $stream $streamk
STREAM_NO_TMA=1 $stream $streamk
METRALE_DIAG_NO_DECODE=1 $stream $streamk
METRALE_DIAG_NO_NAN_CHECK=1 $stream $streamk
METRALE_DIAG_COMPUTE_ONLY=1 $streamk
METRALE_DIAG_NO_REDUCE=1 $streamk
METRALE_DIAG_REDUCE_NO_CLEAR=1 $streamk
METRALE_DIAG_REDUCE_NO_READ=1 $streamk
METRALE_DIAG_REDUCE_NO_WAIT=1 $streamk
METRALE_DIAG_RING_ONLY=1 $streamk
METRALE_DIAG_TIMELINE=1 $streamk
METRALE_DIAG_X_ONCE=1 $streamk
STREAMK_CONSUMER_SPIN=1 $streamk
STREAMK_CONSUMER_WAIT_HINT=1 $streamk
STREAMK_EARLY_PARTIAL_ALL=1 $streamk
STREAMK_EARLY_RELEASE=1 $streamk
STREAMK_LATE_PARTIAL=1 $streamk
STREAMK_LEAD_PERMILLE=100 $streamk
STREAMK_MIN_CTAS=1 $streamk
STREAMK_PAIRS_IN_FLIGHT=4 $streamk
STREAMK_PARTIAL_ALL_PAIRS=1 $streamk
STREAMK_PARTIAL_EVICT_NORMAL=1 $streamk
STREAMK_PARTIAL_WORDS64=1 $streamk
STREAMK_RAMP_NS=0 $streamk
STREAMK_X_BY_HALF=1 $streamk
SKINNY_CHUNKS_IN_FLIGHT=4 $skinny
SKINNY_MMA_CHAINS=1 $skinny
SKINNY_MIN_CTAS=2 $skinny
SKINNY_NAN_FLAGS=0 $skinny
SKINNY_DEEP_BUFFERS=2 $skinny
SKINNY_DEEP_L2_FILL=0 $skinny
SKINNY_DEEP_CLAMP=0 $skinny
SKINNY_DEEP_CURSOR=0 $skinny
SKINNY_DEEP_CURSOR=1 $skinny
SKINNY_DEEP_CURSOR=2 $skinny
SKINNY_DEEP_M8_NAN_FLAGS=0 $skinny
SKINNY_DEEP_MAX_THREADS=256 $skinny
SKINNY_DEEP_MIN_CTAS=2 $skinny
SKINNY_DEEP_X_BY_HALF=0 $skinny
METRALE_DIAG_NO_HANDOFF=1 $skinny
METRALE_DIAG_PACKED_ADDRESSES=1 $skinny
METRALE_DIAG_X_BLOCK_ZERO=1 $skinny
METRALE_DIAG_X_FIRST_BLOCK_ONLY=1 $skinny
"
# What the variants themselves define (kernel_variants.cpp) or a source derives: not
# switches of a caller's.
module_defines="N_TILE TOKEN_GROUPS STREAM_TMA SKINNY_KERNELS"

failures=0
listed=$(awk 'NF { sub(/=.*/, "", $1); print $1 }' <<<"$switches" | sort -u)
tested=$(grep -hE '^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif)\b' \
  "$sources"/*.cu "$sources"/*.cuh |
  grep -oE '\b(M16|METRALE|STREAMK|STREAM|SKINNY)_[A-Z0-9_]+\b' | sort -u)
for name in $tested; do
  if ! grep -qxF "$name" <<<"$listed" && ! grep -qw "$name" <<<"$module_defines"; then
    echo "FAILED: kernel_sources tests $name, which this list does not compile"
    failures=$((failures + 1))
  fi
done
for name in $listed; do
  if ! grep -qxF "$name" <<<"$tested"; then
    echo "FAILED: $name is listed here, but no #if of kernel_sources tests it"
    failures=$((failures + 1))
  fi
done

count=0
while read -r define variants; do
  [[ -n $define ]] || continue
  args=()
  for v in $variants; do args+=(--variant "$v"); done
  if ! log=$("$metrale" compile --target sm_90 --define "$define" --resources "${args[@]}" \
    2>&1); then
    echo "FAILED: $define does not compile for $variants:"
    echo "$log" | tail -20
    failures=$((failures + 1))
  fi
  count=$((count + 1))
done <<<"$switches"
echo "kernel switches: $count compiled (each alone, sm_90), $(wc -w <<<"$tested") in the" \
  "sources' #if lines, $failures failure(s)"
((failures == 0))
