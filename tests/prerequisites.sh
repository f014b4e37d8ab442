#!/usr/bin/env bash
# Sourced by tests/run.sh and tools/main.sh.
# Install what is missing (Debian / Ubuntu packages); a machine that already has the
# tools and headers installs nothing.
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
