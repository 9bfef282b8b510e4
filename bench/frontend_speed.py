"""Frontend speed: segment and parse a 5,000-line .cu file; print the time.

Builds the file from the syntax-zoo kernels (tests/frontend/zoo), renamed copy by copy, with host
code between them, until it has at least 5,000 lines; then times `gmprof.frontend.program.load`
(scan, segment, conditionals, oracle, parse every device function) in this process, after one
warm-up that builds the LALR tables. Run: python3 bench/frontend_speed.py [--lines N]
"""
from __future__ import annotations

import argparse
import platform
import re
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def synthesize(lines: int) -> str:
    zoo = ROOT / "tests" / "frontend" / "zoo"
    parts = [(zoo / name).read_text() for name in ("arrays.cu", "control.cu", "atomics.cu")]
    host = ("static void host_helper_{n}(int *v, int n) {{\n"
            "  for (int i = 0; i < n; ++i) v[i] = i * {n};\n}}\n")
    out, n = [], 0
    while sum(chunk.count("\n") for chunk in out) < lines:
        for part in parts:
            renamed = re.sub(r"__global__ void (\w+)", lambda m: f"__global__ void {m.group(1)}_{n}",
                             part)
            renamed = re.sub(r"struct Particle", f"struct Particle{n}", renamed)
            renamed = re.sub(r"\bParticle \*", f"Particle{n} *", renamed)
            renamed = re.sub(r"(__device__ unsigned int counter|__constant__ float weights)",
                             lambda m: m.group(1) + f"_{n}", renamed)
            renamed = renamed.replace("counter", f"counter_{n}").replace(
                f"counter_{n}_{n}", f"counter_{n}").replace("weights", f"weights_{n}").replace(
                f"weights_{n}_{n}", f"weights_{n}")
            out.append(renamed)
            out.append(host.format(n=n))
            n += 1
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from gmprof.frontend.program import load

    text = synthesize(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.cu"
        path.write_text(text)
        t0 = time.perf_counter()
        tu = load(path)  # warm-up: builds the parser
        warm = time.perf_counter() - t0
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            tu = load(path)
            times.append(time.perf_counter() - t0)
    parsed = sum(1 for f in tu.functions if f.parsed is not None)
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python "
          f"{platform.python_version()}")
    print(f"file: {text.count(chr(10))} lines, {len(tu.functions)} device functions "
          f"({parsed} parsed), {len(tu.warnings)} warnings")
    print(f"first load (builds LALR tables): {warm:.2f} s")
    print(f"load, median of {args.repeat}: {statistics.median(times):.2f} s "
          f"(min {min(times):.2f}, max {max(times):.2f})")


if __name__ == "__main__":
    main()
