#!/usr/bin/env bash
# Issue 24's hot element at its size, in default and basic mode, as a user would run it:
#   bash bench/scale/hot.sh [--backend gpu]
# Expected (by hand): x[0] read 65,536 x 256 x 300 = 5,033,164,800 times; idx[k] 16,777,216
# times each; out written once an element.
set -euo pipefail
cd "$(dirname "$0")/../.."
for mode in default basic; do
  python3 -m gmprof profile bench/scale/hot.cu --kernel hot --grid 65536 --block 256 \
    --arg x=float32[8]:ones --arg idx=int32[300]:zeros --arg out=float32[16777216]:zeros \
    --arg K=300 --mode "$mode" "$@"
done
