#!/bin/bash
# Nsight Compute on a sample's native and instrumented launch (the first two launches of the
# kernel that `gmprof profile` makes), side by side: duration, memory throughput, occupancy,
# registers. Where an overhead comes from when the counters alone do not explain it.
#   bash bench/ncu_launches.sh SAMPLE KERNEL_REGEX PROFILE [MODE]
#   e.g. bash bench/ncu_launches.sh spmv spmv_csr dm
set -euo pipefail
sample=$1 kernel=$2 profile=$3 mode=${4:-default}
ncu --launch-count 2 -k "regex:$kernel" \
    --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section MemoryWorkloadAnalysis --csv --page details \
    python3 -m gmprof profile "samples/$sample" --size large --backend gpu --mode "$mode" \
    --profile "$profile" --no-self-check 2>&1 |
  grep -E '"(Duration|Memory Throughput|DRAM Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|L2 Cache Throughput|L1/TEX Hit Rate|L2 Hit Rate|Dynamic Shared Memory Per Block|Mem Busy|Max Bandwidth)"' |
  awk -F'","' '{print $1 "\t" $(NF-2) "\t" $(NF-1) "\t" $NF}' | sed 's/"//g' | cut -f1,2,3,4 | sort -s -k1,1n
