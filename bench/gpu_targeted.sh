#!/bin/sh
# One device call that checks what changed, when the session's device time is short: the GPU
# tests of the given test files, then bench/whole_programs.py on the given cuda-samples.
#
#     bench/gpu_targeted.sh OUT "tests/a.py tests/b.py" "sampleA,sampleB" [SECONDS_EACH]
#
# OUT/gpu_tests.txt and OUT/whole/ (the table, logs) come back; the last lines of each are
# printed. Needs the suite trimmed to suites/cs (bench/whole_programs.py --trim).
out=$1; tests=$2; samples=$3; limit=${4:-170}
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader
# shellcheck disable=SC2086
timeout "$limit" python3 -m pytest -q -m gpu -p no:cacheprovider -o addopts= $tests \
    > "$out/gpu_tests.txt" 2>&1
echo "pytest exit $?"; grep -E "passed|failed|error" "$out/gpu_tests.txt" | tail -5
grep -E "^(FAILED|ERROR)" "$out/gpu_tests.txt" | head -20
GMPROF_TIMING=1 timeout "$limit" python3 bench/whole_programs.py --suite suites/cs \
    --backend gpu --jobs 14 --run-jobs 3 --timeout 60 --only "$samples" --out "$out/whole" \
    2>&1 | grep -v "^gmprof timing" | tail -12
