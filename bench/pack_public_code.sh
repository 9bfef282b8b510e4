#!/bin/bash
# Source files of the public CUDA code bases that bench/public_code.py measures, from the bare
# mirrors (/work/.mirror/OWNER+NAME/repo), into one tarball for a machine that cannot fetch them:
#   bash bench/pack_public_code.sh [OUT.tar.xz]      (default .scratch/public-code.tar.xz)
# Only source and header files are taken (.cu .cuh .h .hpp .c .cpp ...; no images, data or
# documents, so the tarball stays well under 30 MiB), each at the mirror's HEAD; blobs the mirror
# lacks are skipped and listed in MANIFEST. The tarball unpacks to public-code/{cuda-samples,
# rodinia,shoc,polybench}/ plus public-code/MANIFEST (commit of each). .scratch/ is git-ignored:
# never commit what this builds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/.scratch/public-code.tar.xz}
MIRROR=${MIRROR:-/work/.mirror}
SUITES="NVIDIA+cuda-samples:cuda-samples yuhc+gpu-rodinia:rodinia vetter+shoc:shoc cavazos-lab+PolyBench-ACC:polybench"
EXT='\.(cu|cuh|h|hh|hpp|hxx|c|cc|cpp|cxx|inc|inl|tcc|def)$'
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/public-code"
for pair in $SUITES; do
  mirror=${pair%%:*} name=${pair##*:}
  git_dir=$MIRROR/$mirror/repo
  [[ -d $git_dir/.git ]] && git_dir=$git_dir/.git
  dest=$STAGE/public-code/$name
  mkdir -p "$dest"
  missing=0 taken=0
  while IFS=$'\t' read -r meta path; do
    set -- $meta   # mode type blob
    [[ $2 == blob ]] || continue
    mkdir -p "$dest/$(dirname "$path")"
    if git --git-dir="$git_dir" cat-file blob "$3" > "$dest/$path" 2>/dev/null; then
      taken=$((taken + 1))
    else
      rm -f "$dest/$path"; missing=$((missing + 1))
      echo "$name: missing blob $path" >> "$STAGE/public-code/MANIFEST.missing"
    fi
  done < <(git --git-dir="$git_dir" ls-tree -r HEAD | grep -E "$EXT")
  echo "$name $mirror $(git --git-dir="$git_dir" rev-parse HEAD) files=$taken missing=$missing" \
    >> "$STAGE/public-code/MANIFEST"
done
mkdir -p "$(dirname "$OUT")"
tar -C "$STAGE" -cJf "$OUT" public-code
cat "$STAGE/public-code/MANIFEST"
echo "$OUT: $(du -h "$OUT" | cut -f1)"
