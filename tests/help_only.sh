# Sourced by the scripts that take no argument but -h / --help (tests/run.sh,
# tests/sanitize.sh, tests/prerequisites.sh run on its own, .ci/run):
#   help_only NAME FILE USAGE "$@"
# refuses any other argument with exit 2, naming it and NAME; for -h / --help prints
# USAGE, then FILE's comment block after the #! line, and exits 0; with no argument it
# returns.
# Run rather than sourced, it would only define the function and exit 0, having checked
# nothing: refuse that, so that a mistaken `bash tests/help_only.sh` is not read as a pass.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "tests/help_only.sh: a helper for the scripts to source, not to run" \
       "(see tests/run.sh)" >&2
  exit 2
fi
help_only() {
  local name=$1 file=$2 usage=$3 arg
  shift 3
  for arg in "$@"; do
    if [[ $arg != -h && $arg != --help ]]; then
      echo "$name: unknown argument '$arg' (see --help)" >&2
      exit 2
    fi
  done
  (($#)) || return 0
  echo "$usage"
  sed -n '2,/^[^#]/p' "$file" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
}
