#!/usr/bin/env bash
# Every command line the project offers answers --help with its usage and exit 0, and
# the scripts do so before they install or build anything; an unknown option is an
# error that points to --help. Run by CTest: tests/cli_help.sh METRALE_BINARY.
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
check() {  # check LABEL EXPECTED_FIRST_LINE_PREFIX COMMAND...: exit 0, usage first
  local label=$1 prefix=$2 out rc
  shift 2
  out=$("$@" 2>&1) && rc=0 || rc=$?
  if [[ $rc -ne 0 || ${out%%$'\n'*} != "$prefix"* ]]; then
    echo "FAILED: $label (exit $rc): ${out%%$'\n'*}"
    failures=$((failures + 1))
  else
    echo "ok: $label"
  fi
}
check "metrale --help" "usage: metrale" "$metrale" --help
for command in info startup microtest bench compile cache plan; do
  check "metrale $command --help" "usage: metrale" "$metrale" "$command" --help
done
# The scripts print their usage without installing or building: cmake, ctest, ninja,
# g++ and apt-get are shims here that leave a mark when called.
shims=$(mktemp -d)
trap 'rm -rf "$shims"' EXIT
for tool in cmake ctest ninja g++ apt-get; do
  printf '#!/bin/sh\ntouch "%s/called"\nexit 1\n' "$shims" >"$shims/$tool"
  chmod +x "$shims/$tool"
done
for script in tests/run.sh tools/main.sh .ci/run; do
  check "$script --help" "usage: $script" env PATH="$shims:$PATH" bash "$script" --help
done
check "tools/device_run.sh --help" "One call on a GPU machine" \
  env PATH="$shims:$PATH" bash tools/device_run.sh --help
if command -v python3 >/dev/null; then
  check "tools/bench_table.py --help" "Renders a" python3 tools/bench_table.py --help
  check "tools/ab_summary.py --help" "usage: ab_summary.py" python3 tools/ab_summary.py --help
  check "tools/timeline_summary.py --help" "Summarises the per-CTA timeline" \
    python3 tools/timeline_summary.py --help
fi
if [[ -e $shims/called ]]; then
  echo "FAILED: a script's --help ran cmake, ctest, ninja, g++ or apt-get"
  failures=$((failures + 1))
fi
out=$("$metrale" bench --no-such-option 2>&1) && rc=0 || rc=$?
if [[ $rc -eq 0 || $out != *"unknown option --no-such-option (see --help)"* ]]; then
  echo "FAILED: an unknown option (exit $rc): $out"
  failures=$((failures + 1))
else
  echo "ok: an unknown option is refused, pointing to --help"
fi
echo "cli help: $failures failure(s)"
((failures == 0))
