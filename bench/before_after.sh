#!/usr/bin/env bash
# The same GPU runs on two checkouts, side by side on one machine: behaviour unchanged by a
# refactoring (issue 26), or a change measured against its parent.
#   bash bench/before_after.sh BEFORE_DIR oracle|overheads [OUT_DIR]
# BEFORE_DIR: a checkout of the earlier commit (git worktree add --detach DIR REV). oracle: the
# generated-kernel oracle's 300 kernels on the GPU, every count of both compared
# (bench/oracle.py --compare); overheads: bench/overheads.py's default rows of the paper's six
# samples at their large size, before then after.
set -uo pipefail
before=$1 what=$2 out=${3:-${OUT:-/tmp/before-after}}
mkdir -p "$out"
here=$(pwd)
case "$what" in
  oracle)
    (cd "$before" && PYTHONPATH="$PWD:${PYTHONPATH:-}" python3 bench/oracle.py --backend gpu \
      --count 300 --counts-out "$out/before.json" --quiet) > "$out/oracle_before.log" 2>&1
    PYTHONPATH="$here:${PYTHONPATH:-}" python3 bench/oracle.py --backend gpu --count 300 \
      --counts-out "$out/after.json" --quiet > "$out/oracle_after.log" 2>&1
    tail -n 2 "$out/oracle_before.log" "$out/oracle_after.log"
    python3 bench/oracle.py --compare "$out/before.json" "$out/after.json" | tail -3 ;;
  overheads)
    for side in before after; do
      dir=$here; [ "$side" = before ] && dir=$before
      (cd "$dir" && PYTHONPATH="$PWD:${PYTHONPATH:-}" python3 bench/overheads.py --backend gpu \
        --modes default:shm,default:dm --repeat 5) > "$out/overheads_$side.log" 2>&1
      echo "== $side"; tail -14 "$out/overheads_$side.log"
    done ;;
  *) echo "usage: $0 BEFORE_DIR oracle|overheads [OUT_DIR]" >&2; exit 2 ;;
esac
