#!/usr/bin/env bash
# Sourced by tests/run.sh and tools/main.sh; run on its own, it does the same.
# Checks that the CUDA toolkit is there (its headers and NVRTC: CUDAToolkit_ROOT,
# CUDA_PATH, nvcc's on PATH or /usr/local/cuda, as CMake's FindCUDAToolkit looks), then
# installs what is missing with apt-get (Debian / Ubuntu packages): cmake, ninja-build,
# g++, libfmt-dev, libspdlog-dev and doctest-dev, through sudo where not root; a machine
# that already has the tools and headers installs nothing. Then checks that cmake is
# 3.25 or newer, as CMakeLists.txt requires (Debian 12 and Ubuntu 24.04 ship it; Ubuntu
# 22.04's is older). Anything it cannot settle it names, with what to run, and fails.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  # Run on its own it takes -h / --help only; sourced, "$@" is the caller's own arguments
  # (tools/main.sh passes its to metrale).
  source "$(dirname "$0")/help_only.sh"
  help_only tests/prerequisites.sh "$0" "usage: tests/prerequisites.sh" "$@"
fi
# Sourced, a failure returns 1 to the caller (whose set -e stops it); run, it exits 1.
prerequisites_sourced=0
[[ ${BASH_SOURCE[0]} == "$0" ]] || prerequisites_sourced=1
# The toolkit is no Debian package here: without it CMake would stop at
# find_package(CUDAToolkit) with a message that does not say where to get it.
cuda_roots=(${CUDAToolkit_ROOT:+"$CUDAToolkit_ROOT"} ${CUDA_PATH:+"$CUDA_PATH"})
if command -v nvcc >/dev/null; then cuda_roots+=("$(dirname "$(command -v nvcc)")/.."); fi
cuda_roots+=(/usr/local/cuda /usr/local/cuda-*)
cuda_found=0
for root in "${cuda_roots[@]}"; do
  if [[ -f $root/include/cuda.h && -f $root/include/nvrtc.h ]]; then cuda_found=1; break; fi
done
if ((!cuda_found)); then
  echo "tests/prerequisites.sh: the CUDA toolkit (cuda.h, nvrtc.h and NVRTC) was not found" \
       "in CUDAToolkit_ROOT, CUDA_PATH, nvcc's directory or /usr/local/cuda: install it" \
       "(https://developer.nvidia.com/cuda-downloads; the build needs no GPU), or set" \
       "CUDAToolkit_ROOT to where it is" >&2
  if ((!prerequisites_sourced)); then exit 1; fi
  return 1
fi
unset cuda_roots cuda_found root
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
has_header() { echo "#include <$1>" | g++ -std=c++20 -E -x c++ - >/dev/null 2>&1; }
has_header fmt/format.h || need+=(libfmt-dev)
has_header spdlog/spdlog.h || need+=(libspdlog-dev)
has_header doctest/doctest.h || need+=(doctest-dev)
if ((${#need[@]})); then
  if ! command -v apt-get >/dev/null; then
    echo "tests/prerequisites.sh: missing ${need[*]} (Debian / Ubuntu package names)," \
         "and no apt-get to install them: install them with this system's package" \
         "manager" >&2
    if ((!prerequisites_sourced)); then exit 1; fi
    return 1
  fi
  # apt-get needs root: as anyone else it stops at a lock-file permission error that
  # does not say what is missing. sudo where it is here, else what to run instead.
  as_root=()
  if ((EUID != 0)); then
    if ! command -v sudo >/dev/null; then
      echo "tests/prerequisites.sh: missing ${need[*]}; installing them needs root and" \
           "there is no sudo: run as root  apt-get update && apt-get install -y" \
           "${need[*]}  then this again" >&2
      if ((!prerequisites_sourced)); then exit 1; fi
      return 1
    fi
    as_root=(sudo)
  fi
  echo "installing: ${need[*]}${as_root[*]:+ (with sudo)}"
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" \
    >/dev/null
  unset as_root
fi
# An older cmake stops at cmake_minimum_required with no word on how to get a newer one.
cmake_version=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9.]*\).*/\1/p' || true)
IFS=. read -r cmake_major cmake_minor _ <<<"${cmake_version:-0.0}"
if ((${cmake_major:-0} < 3 || (${cmake_major:-0} == 3 && ${cmake_minor:-0} < 25))); then
  echo "tests/prerequisites.sh: cmake ${cmake_version:-(not found)} is older than 3.25," \
       "which CMakeLists.txt requires: use Debian 12 or Ubuntu 24.04 or newer, or install" \
       "a newer cmake (pip install cmake, or Kitware's APT repository: apt.kitware.com)" >&2
  if ((!prerequisites_sourced)); then exit 1; fi
  return 1
fi
unset cmake_version cmake_major cmake_minor prerequisites_sourced
