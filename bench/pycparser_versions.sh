#!/usr/bin/env bash
# The frontend's tests under every pycparser release in the range pyproject.toml declares.
#
# pycparser's c_ast constructors changed in 3.1 (CompoundLiteral and Enum gained fields); the
# builder goes through gmprof.frontend.cxx_ast.make_node so that each release works. This script
# fetches each release's wheel with pip (no install: the wheel is unpacked in a temporary
# directory and put first on PYTHONPATH) and runs tests/frontend against it.
#
#   bash bench/pycparser_versions.sh                 # the releases below
#   bash bench/pycparser_versions.sh 3.12 2.22       # some of them
#   PYCPARSER_WHEELS=/tmp/pyc bash bench/pycparser_versions.sh
#        # without a network: wheels already downloaded, $PYCPARSER_WHEELS/<version>/*.whl
#
# The installed release (3.0 here) is what the test suite runs with.
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(2.21 2.22 2.23 3.0 3.1 3.11 3.12)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for v in "${versions[@]}"; do
    if [ -n "${PYCPARSER_WHEELS:-}" ]; then
        mkdir -p "$work/$v"
        cp "$PYCPARSER_WHEELS/$v"/pycparser-*.whl "$work/$v"/ 2>/dev/null || {
            echo "pycparser $v: no wheel in $PYCPARSER_WHEELS/$v"; status=1; continue; }
    else
        python3 -m pip download --quiet --no-deps "pycparser==$v" -d "$work/$v" >/dev/null 2>&1 || {
            echo "pycparser $v: cannot download"; status=1; continue; }
    fi
    python3 -m zipfile -e "$work/$v"/pycparser-*.whl "$work/$v"
    got=$(PYTHONPATH="$work/$v" python3 -c 'import pycparser; print(pycparser.__version__)')
    if out=$(PYTHONPATH="$work/$v" python3 -m pytest -q -p no:cacheprovider tests/frontend 2>&1); then
        echo "pycparser $v ($got): $(echo "$out" | tail -1)"
    else
        echo "pycparser $v ($got): FAILED"; echo "$out" | tail -15; status=1
    fi
done
exit $status
