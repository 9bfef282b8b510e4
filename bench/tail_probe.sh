#!/bin/sh
# Where the slowest whole programs' seconds go, in one device call: each sample built and run
# with every memory counted (both), then shared memory only and device memory only (the
# other's sites not instrumented at all), and each kernel's time under Nsight Compute.
#
#     bench/tail_probe.sh OUT "sampleA,sampleB" "sampleC,..." [SECONDS_EACH]
#
# The first list gets the three builds and the per-kernel times; the second only the default
# build (long builds: segmentationTreeThrust). OUT/<profile>/ hold bench/whole_programs.py's
# tables and logs, OUT/kernels-<sample>.txt bench/program_kernels.py's.
out=$1; split=$2; once=$3; limit=${4:-200}
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader
both=$split; [ -n "$once" ] && both="$split,$once"
GMPROF_TIMING=1 timeout "$limit" python3 bench/whole_programs.py --suite suites/cs \
    --backend gpu --jobs 14 --run-jobs 3 --timeout 60 --only "$both" --out "$out/both" \
    2>&1 | grep -v "^gmprof timing" | tail -8
for p in shm dm; do
  GMPROF_PROFILE=$p timeout "$limit" python3 bench/whole_programs.py --suite suites/cs \
      --backend gpu --jobs 14 --run-jobs 3 --timeout 60 --only "$split" --out "$out/$p" \
      2>&1 | grep -v "^gmprof timing" | tail -4
done
for s in $(echo "$split" | tr , ' '); do
  timeout "$limit" python3 bench/program_kernels.py "$s" > "$out/kernels-$s.txt" 2>&1
  tail -15 "$out/kernels-$s.txt"
done
