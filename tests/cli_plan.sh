#!/usr/bin/env bash
# `metrale plan` names every launch it prints as `metrale bench --entry` takes it: each
# name it gives, over a grid of shapes and every m with and without PDL, is one of the
# entries `metrale bench --help` lists (default or tuning point), so that the benchmark
# times exactly what the plan runs, and each comes with its grid and workspace. Bad values
# and stray arguments are usage errors: exit 2 and a message naming them, with a pointer
# to `metrale plan --help`. Run by CTest:
# tests/cli_plan.sh METRALE_BINARY.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -ne 1 ]]; then
  echo "usage: tests/cli_plan.sh METRALE_BINARY"
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  [[ $# -eq 1 ]]
  exit
fi
metrale=$1
failures=0
known=$("$metrale" bench --help | grep -o 'w8a16_gemm_m16[^,) ]*' | sort -u)
shapes=()
for n in 576 1024 1536 2048 4096 7168 12288 28672; do
  for k in 512 1024 1536 4096 7168 10240 16384 25600; do shapes+=(--shape "${n}x$k"); done
done
# The plan for a device of unknown DRAM bandwidth and for an H100's (3352 GB/s), in one
# output.
out=$("$metrale" plan "${shapes[@]}" --m 1,2,4,8,9,12,16) &&
  out+=$'\n'$("$metrale" plan "${shapes[@]}" --m 1,2,4,8,9,12,16 --dram-gbps 3352) || {
  echo "FAILED: metrale plan exited $?"; exit 1; }
planned=$(grep -o 'w8a16_gemm_m16[^ ]*' <<<"$out" | sort -u)
lines=$(grep -c ' m = ' <<<"$out")
# One plan per shape and m: output that changed its form would otherwise pass as empty.
if ((lines != ${#shapes[@]} * 7)); then
  echo "FAILED: $lines plans, not one for each of $((${#shapes[@]} / 2)) shapes x 7 m x 2"
  failures=$((failures + 1))
fi
for name in $planned; do
  if ! grep -qxF "$name" <<<"$known"; then
    echo "FAILED: metrale plan names $name, which metrale bench does not take"
    failures=$((failures + 1))
  fi
done
echo "ok: $lines plans, $(wc -w <<<"$planned") distinct names, each one metrale bench takes"
# Each launch, with and without PDL, comes with its grid (at least one CTA) and workspace.
sized=$(grep -oE '\([1-9][0-9]* CTAs, workspace [0-9]+\)' <<<"$out" | wc -l)
if ((sized != 2 * lines)); then
  echo "FAILED: $sized of $((2 * lines)) launches give their CTAs and workspace"
  failures=$((failures + 1))
else
  echo "ok: every launch gives its CTAs and workspace"
fi
# Refused means what main.cpp makes of a bad argument: exit 2 and, on stderr, "metrale:
# error: " with a message that names it and the pointer to --help; an abort or a crash
# exits otherwise and says nothing of the kind.
for bad in "--m 0|--m: 0" "--m 17|--m: 17" "--m 1,,2|--m: '1,,2'" "--sms 0|--sms: 0" \
           "--sms 1x|--sms" "--dram-gbps 1x|--dram-gbps" "--shape 4096x100|--shape '4096x100'" \
           "4096x4096 --m 1|unexpected argument '4096x4096'"; do
  args=${bad%%|*} text=${bad#*|}
  # shellcheck disable=SC2086  # the option and its value, split on purpose
  out=$("$metrale" plan $args 2>&1 >/dev/null) && rc=0 || rc=$?
  if [[ $rc -ne 2 || $out != "metrale: error: "*"$text"*" (see metrale plan --help)" ||
        $out == *"Sanitizer: "* ]]; then
    echo "FAILED: metrale plan $args (exit $rc, not 2 with '$text'): ${out%%$'\n'*}"
    failures=$((failures + 1))
  else
    echo "ok: metrale plan $args is refused: $out"
  fi
done
echo "cli plan: $failures failure(s)"
((failures == 0))
