#!/bin/sh
# Issue 27's overhead criterion: default mode with and without --access-stats, side by side in
# one run, on the paper's six samples at their large size (the criterion: within 0.05x).
#
#     bench/stats_overhead.sh [overheads.py options: --backend cpu --size small --repeat 1 ...]
#
# First the proxy that needs no GPU (bench/stats_sites.py: the hooks each launch gets with and
# without the statistics; exit status 1 where --access-stats adds one), then the timings
# (bench/overheads.py; later options override the defaults below). --access-stats measures a
# large grid's hooked sites in a sample of its blocks (passes/block_sample.py); to time the
# exact measure beside it, pass --modes default:both,default/stats:both,default/stats-exact:both
set -e
cd "$(dirname "$0")/.."
python3 bench/stats_sites.py --size small
exec python3 bench/overheads.py --samples co,em_v1,bo_v2,jcb_v1,spmv,dxtc \
    --modes default:both,default/stats:both --repeat 3 --backend gpu --size large "$@"
