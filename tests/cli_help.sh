#!/usr/bin/env bash
# Every command line the project offers answers --help with its usage and exit 0, and
# the scripts do so before they install or build anything; an unknown option is an
# error that points to --help. Every metrale command takes -h for --help, refuses an
# unknown command or option, a missing value and a stray argument, and refuses bad
# values of --device, --seed, --m, --target and --max-bytes, each as a usage error (exit
# 2, "metrale: error:" and a pointer to the command's --help on stderr; a failure of the
# work, such as an output file it cannot write, exits 1), all before the CUDA
# driver is loaded (info, microtest and startup need a GPU only for their real work);
# `metrale compile --resources` prints ptxas's table of registers and spills,
# `metrale bench` names each of its entries once, and `metrale cache` deletes an entry of
# another cache format version only with --include-other-versions.
# The scripts refuse an unknown argument with exit 2, before they install or build
# anything; the Python tools refuse an unknown option and say in one line why a file
# cannot be read, and tools/ptx_compare.py finds that SKINNY_DEEP_CLAMP=0 changes the
# PTX of the deep kernel's three clamped builds and of no other kernel of its modules.
# Run by CTest: tests/cli_help.sh METRALE_BINARY.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -ne 1 ]]; then
  echo "usage: tests/cli_help.sh METRALE_BINARY"
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  [[ $# -eq 1 ]]
  exit
fi
metrale=$1
cd "$(dirname "$0")/.."
failures=0
commands=(info microtest startup bench compile cache plan)
fail() {  # fail LABEL RC OUTPUT
  echo "FAILED: $1 (exit $2): ${3%%$'\n'*}"
  failures=$((failures + 1))
}
# What no answer may hold: a driver loaded to print a message (with the library's debug
# log on, a loaded driver says "CUDA driver loaded"; where none can be loaded, its error
# would stand where the usage or refusal is expected), or a sanitizer's report.
tainted() {  # tainted OUTPUT
  [[ $1 == *"CUDA driver loaded"* || $1 == *"Sanitizer: "* || $1 == *"runtime error:"* ]]
}
check() {  # check LABEL EXPECTED_FIRST_LINE_PREFIX COMMAND...: exit 0, usage first
  local label=$1 prefix=$2 out rc
  shift 2
  out=$(METRALE_LOG_LEVEL=debug "$@" 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 0 || ${out%%$'\n'*} != "$prefix"* ]] || tainted "$out"; then
    fail "$label" "$rc" "$out"
  else
    echo "ok: $label"
  fi
}
# A usage error: exit 2 and, first on stderr, "metrale: error: " with TEXT in it and a
# pointer to a command's --help, so that a script tells a mistyped call from a failed run.
refused() {  # refused LABEL TEXT COMMAND...
  local label=$1 text=$2 out rc
  shift 2
  out=$(METRALE_LOG_LEVEL=debug "$@" 2>&1 >/dev/null) && rc=0 || rc=$?
  if [[ $rc -ne 2 || ${out%%$'\n'*} != "metrale: error: "* || ${out%%$'\n'*} != *"$text"* ||
        ${out%%$'\n'*} != *" (see metrale "*"--help)" ]] || tainted "$out"; then
    fail "$label is refused (a usage error)" "$rc" "$out"
  else
    echo "ok: $label is refused (a usage error)"
  fi
}
# A failure of the work (here, before it starts): exit 1, "metrale: error: " with TEXT
# first on stderr, and no pointer to --help, which could not help.
failed() {  # failed LABEL TEXT COMMAND...
  local label=$1 text=$2 out rc
  shift 2
  out=$(METRALE_LOG_LEVEL=debug "$@" 2>&1 >/dev/null) && rc=0 || rc=$?
  if [[ $rc -ne 1 || ${out%%$'\n'*} != "metrale: error: "* || ${out%%$'\n'*} != *"$text"* ||
        $out == *"--help)"* ]] || tainted "$out"; then
    fail "$label fails" "$rc" "$out"
  else
    echo "ok: $label fails"
  fi
}
check "metrale --help" "usage: metrale" "$metrale" --help
check "metrale -h" "usage: metrale" "$metrale" -h
for command in "${commands[@]}"; do
  check "metrale $command --help" "usage: metrale" "$metrale" "$command" --help
  check "metrale $command -h" "usage: metrale" "$metrale" "$command" -h
  refused "metrale $command --no-such-option" \
    "unknown option --no-such-option (see metrale $command --help)" \
    "$metrale" "$command" --no-such-option
  refused "metrale $command -q" "unknown option -q (see metrale $command --help)" \
    "$metrale" "$command" -q
  # cache takes one action; anything after it is as stray as a word given to the others.
  action=(); [[ $command == cache ]] && action=(list)
  refused "metrale $command ${action[*]:+${action[*]} }stray-word" \
    "'stray-word' (see metrale $command --help)" \
    "$metrale" "$command" "${action[@]}" stray-word
done
refused "metrale --device 0 stray-word (info by default)" \
  "'stray-word' (see metrale info --help)" "$metrale" --device 0 stray-word
refused "metrale -q (info by default)" "unknown option -q (see metrale info --help)" \
  "$metrale" -q
refused "metrale no-such-command" "unknown command 'no-such-command' (see metrale --help)" \
  "$metrale" no-such-command
refused "metrale plan --m (no value)" "--m needs a value" "$metrale" plan --m
refused "metrale cache (no action)" "give one action" "$metrale" cache
for command in info microtest startup bench; do
  for bad in abc 1x -1 "" 2147483648 4294967295; do
    refused "metrale $command --device '$bad'" "--device: '$bad' is not a CUDA device ordinal" \
      "$metrale" "$command" --device "$bad"
  done
done
refused "metrale microtest --seed -1" "--seed" "$metrale" microtest --seed -1
refused "metrale microtest --seed 4294967296" "--seed" "$metrale" microtest --seed 4294967296
refused "metrale microtest --m 17" "--m: 17" "$metrale" microtest --m 17
refused "metrale bench --warm-ms 60001" "--warm-ms must be at most 60000" \
  "$metrale" bench --warm-ms 60001
refused "metrale bench --warm-ms x" "--warm-ms" "$metrale" bench --warm-ms x
refused "metrale info --target sm_x" "invalid target 'sm_x'" "$metrale" info --target sm_x
refused "metrale info --target 1.0.0" "invalid target '1.0.0'" "$metrale" info --target 1.0.0
refused "metrale info --target sm_999" "--target sm_999: this NVRTC does not compile for it" \
  "$metrale" info --target sm_999
# An option of one value given twice is refused, not settled by its last.
refused "metrale plan --m 1 --m 16" "--m given 2 times" "$metrale" plan --m 1 --m 16
refused "metrale plan --dram-gbps x" "--dram-gbps: expected one unsigned integer" \
  "$metrale" plan --dram-gbps x
# An output file this machine cannot write is a failure, not a usage error.
failed "metrale bench --json DIRECTORY" "is a directory" "$metrale" bench --json /
failed "metrale bench --timeline in a missing directory" "does not exist" \
  "$metrale" bench --timeline "$(mktemp -u)/timeline.bin"
# compile refuses a bad --jobs or target before it creates a directory.
for case in "--jobs 0|--jobs must be" "--target sm_10|no target as old as sm_10"; do
  args=${case%%|*}
  fresh=$(mktemp -u)
  # shellcheck disable=SC2086  # the arguments, split on purpose
  refused "metrale compile --out NEW $args" "${case#*|}" \
    "$metrale" compile --target sm_90 --out "$fresh" $args
  if [[ -e $fresh ]]; then
    fail "metrale compile --out NEW $args leaves no directory" 1 "$fresh exists"
    rm -rf "$fresh"
  fi
done
# (after the warning that the target falls back to PTX)
out=$("$metrale" compile --target sm_999 --resources 2>&1) && rc=0 || rc=$?
if [[ $rc -ne 2 || ${out##*$'\n'} != "metrale: error: compile: nothing to compile"* ]]; then
  fail "metrale compile --resources for a PTX-only target is refused" "$rc" "$out"
else
  echo "ok: metrale compile --resources for a PTX-only target is refused"
fi
# An unknown entry is refused with the list of known ones, each named once (a name given
# twice would time only its first entry).
out=$("$metrale" bench --entry no-such-entry 2>&1) && rc=0 || rc=$?
known=${out#*known: }
known=${known% (see metrale bench --help)}
repeated=$(tr -d ')' <<<"$known" | tr ',' '\n' | tr -d ' ' | sort | uniq -d)
if [[ $rc -ne 2 || $out != *"no benchmarked entry named 'no-such-entry'"* || -n $repeated ]]; then
  fail "metrale bench --entry no-such-entry lists each entry once${repeated:+ (twice: $repeated)}" \
    "$rc" "$out"
else
  echo "ok: metrale bench --entry no-such-entry lists each entry once"
fi
refused "metrale compile --target sm_90,,sm_80" "has an empty item" \
  "$metrale" compile --target sm_90,,sm_80 --resources
refused "metrale bench --tma-pattern 128x256x6," "--tma-pattern ''" \
  "$metrale" bench --tma-pattern 128x256x6,
refused "metrale compile --resources --define with --out" "--define only with" \
  "$metrale" compile --target sm_90 --resources --define X=1 --out "$(mktemp -u)"
# --resources alone prints ptxas's table (NVRTC, no GPU) and caches nothing.
home=$(mktemp -d)
out=$(env HOME="$home" XDG_CACHE_HOME="$home/cache" METRALE_KERNEL_CACHE_DIR= \
  "$metrale" compile --target sm_90 --variant fill_random --resources 2>&1) && rc=0 || rc=$?
if [[ $rc -ne 0 || $out != *"kernel"*"regs"*"stack"* ||
      ! $out =~ fill_u16\ +[0-9]+\ +0\ +0\ +0 || -e $home/cache ]]; then
  fail "metrale compile --resources prints the table and caches nothing" "$rc" "$out"
else
  echo "ok: metrale compile --resources prints the table and caches nothing"
fi
rm -rf "$home"
# A size that wrapped to 0 would empty the cache; a bad one is refused with or without it.
cache_dir=$(mktemp -d)
for dir in "$cache_dir" "$cache_dir/missing"; do
  for size in 17179869184G 18446744073709551616 1X; do
    refused "metrale cache trim --max-bytes $size ($([[ -d $dir ]] || echo "no ")cache)" \
      "--max-bytes: '$size'" "$metrale" cache --dir "$dir" trim --max-bytes "$size"
  done
done
for action in list verify; do
  refused "metrale cache $action --include-other-versions" \
    "--include-other-versions belongs to trim and verify --delete-bad" \
    "$metrale" cache --dir "$cache_dir" "$action" --include-other-versions
done
# An entry of format version 1 (the magic, then the version: all that versions share) is
# valid for the library that wrote it, so it stays unless asked to go.
other_entry=$cache_dir/$(printf 'b%.0s' {1..64}).mkc
for args in "verify --delete-bad" "trim --max-bytes 1G"; do
  for case in "|kept" "--include-other-versions|deleted"; do
    extra=${case%%|*}
    printf 'MTRLKERN\001\000\000\000' >"$other_entry"
    # shellcheck disable=SC2086  # the arguments, split on purpose
    out=$("$metrale" cache --dir "$cache_dir" $args $extra 2>&1) && rc=0 || rc=$?
    [[ -e $other_entry ]] && outcome=kept || outcome=deleted
    label="metrale cache $args${extra:+ $extra}: an entry of another format version is"
    if [[ $rc -ne 0 || $outcome != "${case#*|}" ]]; then
      fail "$label ${case#*|}" "$rc" "$outcome; $out"
    else
      echo "ok: $label ${case#*|}"
    fi
  done
done
rm -f "$other_entry"
# The scripts print their usage without installing or building: cmake, ctest, ninja,
# g++ and apt-get are shims here that leave a mark when called.
shims=$(mktemp -d)
trap 'rm -rf "$shims" "$cache_dir"' EXIT
for tool in cmake ctest ninja g++ apt-get; do
  printf '#!/bin/sh\ntouch "%s/called"\nexit 1\n' "$shims" >"$shims/$tool"
  chmod +x "$shims/$tool"
done
for script in tests/run.sh tests/prerequisites.sh tests/sanitize.sh tools/main.sh .ci/run; do
  check "$script --help" "usage: $script" env PATH="$shims:$PATH" bash "$script" --help
done
check "tools/device_run.sh --help" "One call on a GPU machine" \
  env PATH="$shims:$PATH" bash tools/device_run.sh --help
# The test scripts CTest runs with the CLI's path.
for script in tests/cli_help.sh tests/cli_plan.sh tests/kernel_switches.sh; do
  check "$script --help" "usage: $script" bash "$script" --help
done
# tools/main.sh passes its arguments to metrale, which refuses what it does not take.
for args in "tests/run.sh --no-such-option" "tests/prerequisites.sh --no-such-option" \
            "tests/sanitize.sh --no-such-option" \
            ".ci/run --no-such-option" "tools/device_run.sh build no-such-step"; do
  read -r script rest <<<"$args"
  # shellcheck disable=SC2086  # the arguments, split on purpose
  out=$(env PATH="$shims:$PATH" OUT="$shims/out" bash $args 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 2 || $out != *"'${rest##* }' (see --help)"* || -e $shims/out ]]; then
    fail "$args is refused with exit 2, before any step" "$rc" "$out"
  else
    echo "ok: $args is refused with exit 2, before any step"
  fi
done
out=$(env PATH="$shims:$PATH" OUT="$shims/out" PLANCHECK_SET=below8c,no-such-set \
  bash tools/device_run.sh build plancheck 2>&1) && rc=0 || rc=$?
if [[ $rc -ne 2 || $out != *"PLANCHECK_SET 'no-such-set' (see --help)"* || -e $shims/out ]]; then
  fail "an unknown PLANCHECK_SET is refused with exit 2, before any step" "$rc" "$out"
else
  echo "ok: an unknown PLANCHECK_SET is refused with exit 2, before any step"
fi
# REQUIRE_CARD stops the script before any step on another card.
printf '#!/bin/sh\necho "NVIDIA H100 80GB HBM3"\n' >"$shims/nvidia-smi"
chmod +x "$shims/nvidia-smi"
out=$(env PATH="$shims:$PATH" OUT="$shims/out" REQUIRE_CARD=H200 \
  bash tools/device_run.sh build 2>&1) && rc=0 || rc=$?
if [[ $rc -ne 3 || $out != *"'NVIDIA H100 80GB HBM3'; no step run"* || -e $shims/out ||
  -e $shims/called ]]; then
  fail "REQUIRE_CARD=H200 on an H100 runs no step, exit 3" "$rc" "$out"
else
  echo "ok: REQUIRE_CARD=H200 on an H100 runs no step, exit 3"
fi
rm "$shims/nvidia-smi"
# tests/help_only.sh is sourced by the scripts: run on its own it would do nothing and
# exit 0, so it refuses to.
out=$(bash tests/help_only.sh --help 2>&1) && rc=0 || rc=$?
if [[ $rc -ne 2 || $out != "tests/help_only.sh: "*"not to run"* ]]; then
  fail "tests/help_only.sh run rather than sourced is refused with exit 2" "$rc" "$out"
else
  echo "ok: tests/help_only.sh run rather than sourced is refused with exit 2"
fi
if command -v python3 >/dev/null; then
  check "tools/bench_table.py --help" "Renders a" python3 tools/bench_table.py --help
  check "tools/ab_summary.py --help" "usage: ab_summary.py" python3 tools/ab_summary.py --help
  check "tools/timeline_summary.py --help" "Summarises the per-CTA timeline" \
    python3 tools/timeline_summary.py --help
  check "tools/ptx_compare.py --help" "usage: ptx_compare.py" python3 tools/ptx_compare.py --help
  # ptx_scope LABEL DEFINE COUNT LINE...: against the default build, DEFINE changes the PTX
  # as tools/ptx_compare.py counts it (COUNT) with each LINE in its output.
  base="$shims/ptx-base"
  variants=(--target sm_90 --variant w8a16_gemm_m16_skinny_deep
    --variant w8a16_gemm_m16_skinny --variant w8a16_gemm_m16_skinny_deep32)
  "$metrale" compile "${variants[@]}" --dump-ptx "$base" >/dev/null 2>&1
  ptx_scope() {
    local label=$1 define=$2 count=$3 other="$shims/ptx-${2%%=*}" out rc line ok=1
    shift 3
    "$metrale" compile "${variants[@]}" --define "$define" --dump-ptx "$other" >/dev/null 2>&1
    out=$(python3 tools/ptx_compare.py "$base" "$other" 2>&1) && rc=0 || rc=$?
    [[ $rc -eq 0 && $out == *$'\n'"$count" ]] || ok=0
    for line in "$@"; do [[ $out == *"$line"* ]] || ok=0; done
    if ((ok)); then echo "ok: $label"; else fail "$label" "$rc" "$out"; fi
  }
  # The deep kernel's clamped loads (SKINNY_DEEP_CLAMP) change its two builds and its
  # three-per-SM form's 8-token build, and no other kernel of the three modules.
  ptx_scope "tools/ptx_compare.py: SKINNY_DEEP_CLAMP=0 changes the three clamped kernels only" \
    SKINNY_DEEP_CLAMP=0 "6 same, 3 differ, 0 missing" \
    "skinny_deep.m16.compute_90.ptx w8a16_gemm_m16_skinny_deep: differs" \
    "skinny_deep.m8.compute_90.ptx w8a16_gemm_m16_skinny_deep3: differs" \
    "skinny_deep.m16.compute_90.ptx w8a16_gemm_m16_skinny_deep3: same"
  # The stepped deep loop (SKINNY_DEEP_CURSOR) is the clamped kernels': turned off it
  # changes the 8-token build's two and the 16-token build's deep kernel, and no other.
  ptx_scope "tools/ptx_compare.py: SKINNY_DEEP_CURSOR=0 changes the clamped deep kernels only" \
    SKINNY_DEEP_CURSOR=0 "6 same, 3 differ, 0 missing" \
    "skinny_deep.m8.compute_90.ptx w8a16_gemm_m16_skinny_deep: differs" \
    "skinny_deep.m8.compute_90.ptx w8a16_gemm_m16_skinny_deep3: differs" \
    "skinny_deep.m16.compute_90.ptx w8a16_gemm_m16_skinny_deep: differs" \
    "skinny_deep.m16.compute_90.ptx w8a16_gemm_m16_skinny_deep3: same"
  # tools/sass_wait_order.py on listings in cuobjdump's form: weight loads ahead of the
  # wait pass, a wait ahead of them fails, a skipped kernel is not checked.
  check "tools/sass_wait_order.py --help" "usage: sass_wait_order.py" \
    python3 tools/sass_wait_order.py --help
  sass_line() { printf '        /*%04x*/ %s ;  /* 0x0 */\n' "$1" "$2"; }
  {
    printf '\t\tFunction : k_ok\n'
    sass_line 16 '@P2 LDG.E.NA.LTC256B.128 R8, desc[UR4][R2.64]'
    sass_line 32 'ACQBULK'
    sass_line 48 'LDG.E.128.CONSTANT R24, desc[UR4][R58.64]'
    printf '\t\tFunction : k_late\n'
    sass_line 16 'ACQBULK'
    sass_line 32 '@P2 LDG.E.NA.LTC256B.128.CONSTANT R8, desc[UR4][R2.64]'
  } >"$shims/sass.txt"
  out=$(python3 tools/sass_wait_order.py "$shims/sass.txt" 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 1 || $out != *"k_ok: ok (1 ahead of the wait)"* ||
        $out != *"k_late: waits first"* ]]; then
    fail "tools/sass_wait_order.py: a wait ahead of the weight loads fails" "$rc" "$out"
  else
    echo "ok: tools/sass_wait_order.py: a wait ahead of the weight loads fails"
  fi
  out=$(python3 tools/sass_wait_order.py --skip k_late <"$shims/sass.txt" 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 0 || $out != *"k_late: skipped"* ]]; then
    fail "tools/sass_wait_order.py --skip lists a kernel unchecked" "$rc" "$out"
  else
    echo "ok: tools/sass_wait_order.py --skip lists a kernel unchecked"
  fi
  out=$(printf 'cuobjdump fatal : no listing\n' | python3 tools/sass_wait_order.py 2>&1) &&
    rc=0 || rc=$?
  if [[ $rc -ne 2 || $out != *"no function in the input"* ||
        $out != *"cuobjdump fatal : no listing"* ]]; then
    fail "tools/sass_wait_order.py on no listing says so and shows what it read, exit 2" \
      "$rc" "$out"
  else
    echo "ok: tools/sass_wait_order.py on no listing says so and shows what it read, exit 2"
  fi
  out=$(python3 tools/ptx_compare.py "$shims/missing" "$base" 2>&1) && rc=0 || rc=$?
  missing="ptx_compare.py: cannot read $shims/missing: No such file or directory"
  if [[ $rc -ne 1 || $out != "$missing" ]]; then
    fail "tools/ptx_compare.py on a missing directory says so in one line" "$rc" "$out"
  else
    echo "ok: tools/ptx_compare.py on a missing directory says so in one line"
  fi
  out=$(python3 tools/ptx_compare.py --no-such-option 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 2 || $out == *Traceback* ]]; then
    fail "tools/ptx_compare.py --no-such-option is refused" "$rc" "$out"
  else
    echo "ok: tools/ptx_compare.py --no-such-option is refused"
  fi
  # The record 0eca751 against itself: every ratio 1.000, every case in both.
  record=bench/results/h200-0eca751.json
  out=$(python3 tools/bench_table.py --compare "$record" "$record" 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 0 || $out != *"choice: 1.000-1.000x, geometric mean 1.000x over 39 cases"* ||
        $out != *"cuBLASLt FP8: 1.000-1.000x"* ]]; then
    fail "tools/bench_table.py --compare of a record with itself" "$rc" "$out"
  else
    echo "ok: tools/bench_table.py --compare of a record with itself"
  fi
  # The plan of this build set against the record 4e19eba's choices: every case of the
  # default set found, on both sides; metrale plan's options from the record (its SMs; it
  # predates the recorded DRAM bandwidth).
  out=$(python3 tools/bench_table.py --plan-args bench/results/h200-4e19eba.json 2>&1) &&
    rc=0 || rc=$?
  if [[ $rc -ne 0 || $out != "--shape 6144x4096 --shape 4096x4096 "*" --m 1,8,16 --sms 132" ||
        $(grep -o -- "--shape" <<<"$out" | wc -l) -ne 13 ]]; then
    fail "tools/bench_table.py --plan-args of a record" "$rc" "$out"
  else
    echo "ok: tools/bench_table.py --plan-args of a record"
  fi
  # shellcheck disable=SC2086  # the options, split on purpose
  "$metrale" plan $out >"$shims/plan.txt" 2>&1
  out=$(python3 tools/bench_table.py --replan "$shims/plan.txt" bench/results/h200-4e19eba.json \
    2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 0 || $out != "without PDL: "*" of 39 cases"* ||
        $out != *$'\n'"with PDL: "*" of 39 cases"* || $out == *"not timed"* ]]; then
    fail "tools/bench_table.py --replan of metrale plan against a record" "$rc" "$out"
  else
    echo "ok: tools/bench_table.py --replan of metrale plan against a record"
  fi
  # Valid JSON that is not a record: one line, no traceback.
  echo '{}' >"$shims/empty.json"
  out=$(python3 tools/bench_table.py "$shims/empty.json" 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 1 || $out != *"is not a \`metrale bench --json\` record"* ]]; then
    fail "tools/bench_table.py on JSON that is not a record" "$rc" "$out"
  else
    echo "ok: tools/bench_table.py on JSON that is not a record"
  fi
  for mode in --plan --plan-args --replan --compare; do
    out=$(python3 tools/bench_table.py "$mode" 2>&1) && rc=0 || rc=$?
    if [[ $rc -ne 2 || $out != "Renders a"* ]]; then
      fail "tools/bench_table.py $mode without records prints the usage" "$rc" "$out"
    else
      echo "ok: tools/bench_table.py $mode without records prints the usage"
    fi
  done
  for tool in bench_table.py ab_summary.py timeline_summary.py; do
    out=$(python3 "tools/$tool" --no-such-option 2>&1) && rc=0 || rc=$?
    if [[ $rc -ne 2 || $out == *Traceback* ]]; then
      fail "tools/$tool --no-such-option is refused" "$rc" "$out"
    else
      echo "ok: tools/$tool --no-such-option is refused"
    fi
    out=$(python3 "tools/$tool" "$shims/missing" 2>&1) && rc=0 || rc=$?
    if [[ $rc -ne 1 || $out != "$tool: cannot read $shims/missing: No such file or directory" ]]
    then
      fail "tools/$tool on a missing file says so in one line" "$rc" "$out"
    else
      echo "ok: tools/$tool on a missing file says so in one line"
    fi
  done
fi
if [[ -e $shims/called ]]; then
  echo "FAILED: a script's --help or refusal ran cmake, ctest, ninja, g++ or apt-get"
  failures=$((failures + 1))
fi
echo "cli help: $failures failure(s)"
((failures == 0))
