#!/usr/bin/env bash
# Sourced by tests/run.sh and tools/main.sh; run on its own, it does the same.
# Installs what is missing with apt-get (Debian / Ubuntu packages): cmake, ninja-build,
# g++, libfmt-dev, libspdlog-dev and doctest-dev; a machine that already has the tools
# and headers installs nothing. Then checks that cmake is 3.25 or newer, as
# CMakeLists.txt requires (Debian 12 and Ubuntu 24.04 ship it; Ubuntu 22.04's is older).
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  # Run on its own it takes -h / --help only; sourced, "$@" is the caller's own arguments
  # (tools/main.sh passes its to metrale).
  source "$(dirname "$0")/help_only.sh"
  help_only tests/prerequisites.sh "$0" "usage: tests/prerequisites.sh" "$@"
fi
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
has_header() { echo "#include <$1>" | g++ -std=c++20 -E -x c++ - >/dev/null 2>&1; }
has_header fmt/format.h || need+=(libfmt-dev)
has_header spdlog/spdlog.h || need+=(libspdlog-dev)
has_header doctest/doctest.h || need+=(doctest-dev)
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
# An older cmake stops at cmake_minimum_required with no word on how to get a newer one.
cmake_version=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9.]*\).*/\1/p' || true)
IFS=. read -r cmake_major cmake_minor _ <<<"${cmake_version:-0.0}"
if ((${cmake_major:-0} < 3 || (${cmake_major:-0} == 3 && ${cmake_minor:-0} < 25))); then
  echo "tests/prerequisites.sh: cmake ${cmake_version:-(not found)} is older than 3.25," \
       "which CMakeLists.txt requires: use Debian 12 or Ubuntu 24.04 or newer, or install" \
       "a newer cmake (pip install cmake, or Kitware's APT repository: apt.kitware.com)" >&2
  if [[ ${BASH_SOURCE[0]} == "$0" ]]; then exit 1; fi
  return 1
fi
unset cmake_version cmake_major cmake_minor
