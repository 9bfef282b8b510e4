#!/bin/sh
# One cuda-samples program built several ways here (no GPU needed: nvcc -arch=sm_90), then
# timed side by side on the GPU machine: native, gmprof's default, gmprof with a define
# (-DGMPROF_ABLATE=N, a counter experiment) or from another checkout. How the eighth
# session measured eigenvalues' shared-array lookup and simpleAttributes' counter updates.
#
#   bench/program_variants.sh build SAMPLE NAME [NVCC FLAGS...]   # NAME native: plain nvcc;
#       GMPROF_TREE=DIR picks the gmprof checkout (default: this one)
#   bench/program_variants.sh time SAMPLE NAME... [--repeat N]     # on the GPU machine
#
# Binaries go to bench/variants/ (ignored: carry it and the sample's folder of suites/cs).
# `time` prints, per run, the wall milliseconds and the lines where the program reports its
# own times.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/bench/variants
cmd=$1; sample=$2; shift 2
d=$(ls -d "$here"/suites/cs/Samples/*/"$sample" 2>/dev/null | head -1)
[ -n "$d" ] || { echo "program_variants: no sample $sample under suites/cs" >&2; exit 2; }
case $cmd in
build)
  name=$1; shift
  mkdir -p "$out"
  srcs=$(cd "$here" && python3 -c "
import sys; sys.path.insert(0, 'bench'); from pathlib import Path
from whole_programs import sources; print(' '.join(str(x) for x in sources(Path('$d'))))")
  cmk=$(cd "$here" && python3 -c "
import sys; sys.path.insert(0, 'bench'); from pathlib import Path
from whole_programs import cmake_flags; print(' '.join(cmake_flags(Path('$d'))))")
  flags="-I $here/suites/cs/Common -I $d -O2 -std=c++17 $cmk -arch=sm_90 -Wno-deprecated-gpu-targets"
  cd "$d" || exit 1
  if [ "$name" = native ]; then
    # shellcheck disable=SC2086
    nvcc $flags $srcs "$@" -o "$out/$sample.$name"
  else
    # shellcheck disable=SC2086
    GMPROF_BACKEND=gpu NVCC_APPEND_FLAGS="$*" PYTHONPATH=${GMPROF_TREE:-$here} \
      python3 -m gmprof nvcc $flags $srcs -o "$out/$sample.$name"
  fi
  echo "$out/$sample.$name: exit $?"
  ;;
time)
  repeat=1; names=""
  while [ $# -gt 0 ]; do
    if [ "$1" = --repeat ]; then repeat=$2; shift 2; else names="$names $1"; shift; fi
  done
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null
  cd "$d" || exit 1
  r=0
  while [ $r -lt "$repeat" ]; do
    for n in $names; do
      s=$(date +%s%N)
      GMPROF_OUTPUT=/tmp/variant-%p.json GMPROF_QUIET=1 "$out/$sample.$n" > /tmp/variant.txt 2>&1
      rc=$?; e=$(date +%s%N)
      echo "$sample.$n exit $rc $(( (e - s) / 1000000 )) ms $(grep -hi 'total\|processing time' /tmp/variant.txt | tr '\n' ' ')"
    done
    r=$((r + 1))
  done
  ;;
*) echo "program_variants: build or time" >&2; exit 2 ;;
esac
