#!/usr/bin/env python3
"""Rodinia's CUDA applications built with their own Makefiles, natively and through
`gmprof nvcc`, run on a small standard input, their outputs compared and their reports decoded.

    python3 bench/rodinia.py --suite PATH/rodinia --out DIR [--backend gpu|cpu]
        [--only NAME,...] [--jobs N] [--timeout S] [--arch sm_90]
    python3 bench/rodinia.py --suite PATH/rodinia --trim DEST

The suite is a Rodinia 3.1 tree with its cuda/, common/ and data/ directories: never committed
here, pass its path. Measured with github.com/yuhc/gpu-rodinia's cuda/ and common/ and the data/
of github.com/Munksgaard/rodinia (Rodinia's data download: its large files are absent there).
Every application of cuda/ is listed: those that cannot build with CUDA 13 (texture references)
are not tried, those whose input is missing are built but not run, each with its reason.

Each application's directory is copied twice (with ../../common and ../../data beside it, as
in the suite) and built there with `make`, its own rules and flags; only the compiler
changes. Its Makefile names nvcc through a variable (NVCC, CC, CUD_C: set on make's command
line) or literally (`nvcc`: found first on PATH), and two applications link with gcc (their
C_C or CC variable: set too, so that the link is nvcc's, which adds the CUDA runtime, or
gmprof's, which adds the host runtime). Each of these names is a small script that runs

  native   the real nvcc (GPU backend), or `gmprof nvcc --gmprof-native` (g++ against the CPU
           backend's CUDA runtime, no profiling) on the CPU backend;
  gmprof   `gmprof nvcc` (default mode: every launch of every kernel gmprof instruments is
           profiled),

with one change to the flags: a GPU architecture CUDA 13 no longer supports (Rodinia asks for
sm_13, sm_20, sm_35) becomes the machine's (--arch). Both programs run in their build
directory under one argv[0] with the same arguments; standard output and the files the
application writes are compared (whole_programs.normalise masks timing lines; lines an
application seeds from the clock are masked too, and said so), and exit statuses must be equal.
The instrumented run's report files are decoded with `gmprof report --json`: an application is
ok when both build, outputs and statuses agree, the report decodes and at least one launch was
profiled. Launches that failed a check (an access out of range) are the application's bugs that
gmprof found: counted in their own column, their first located error under the table.
hotspot3D's Makefile includes ~/rodinia_3.0/common/make.config: HOME is a directory where that
is the suite's common/.

Writes DIR/rodinia.md, DIR/rodinia.json and DIR/logs/NAME.txt (commands, standard error,
output differences). `--trim DEST` copies only what these applications need (their directories,
cuda/util, common/, the data files they read; about 6 MB) and exits: small enough to carry to
a GPU machine (suites/ is ignored by git).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import whole_programs as W  # noqa: E402  (bench/ is not a package)

ROOT = W.ROOT


@dataclass
class App:
    name: str
    dir: str                      # under cuda/
    exe: str                      # the program make builds, relative to dir
    args: list[str]               # a small standard input
    cc_vars: tuple = ()           # make variables naming nvcc (or the linking host compiler)
    target: str = ""              # make target ('' : the default)
    outputs: tuple = ()           # files the application writes, compared too
    inputs: tuple = ()            # files of data/ it reads (FILE or FILE.xz in the suite)
    seeded: str = ""              # regex: lines whose numbers come from time(0) seeds
    needs: str = ""               # why it cannot build or run here at all (listed, not tried)


_TEXTURES = ("uses texture references (texture<...>, cudaBindTexture), which CUDA 12 removed: "
             "CUDA 13's nvcc cannot build it")

# Every application of Rodinia 3.1's cuda/ directory, on the run scripts' inputs made smaller
# where the CPU backend would take minutes (the same arguments on both backends, so the tables
# compare).
APPS = [
    App("backprop", "backprop", "backprop", ["65536"], ("NVCC", "CC")),
    App("bfs", "bfs", "bfs.out", ["../../data/bfs/graph4096.txt"], ("CC",),
        outputs=("result.txt",), inputs=("bfs/graph4096.txt",)),
    App("b+tree", "b+tree", "b+tree.out",
        ["file", "../../data/b+tree/mil.txt", "command", "../../data/b+tree/command.txt"],
        ("CUD_C", "C_C"), outputs=("output.txt",),
        inputs=("b+tree/mil.txt", "b+tree/command.txt")),
    App("cfd", "cfd", "euler3d", ["../../data/cfd/fvcorr.domn.097K"], (), target="euler3d",
        inputs=("cfd/fvcorr.domn.097K",)),
    App("dwt2d", "dwt2d", "dwt2d", ["192.bmp", "-d", "192x192", "-f", "-5", "-l", "3"],
        ("NVCC", "LINK"), inputs=("dwt2d/192.bmp",)),
    App("gaussian", "gaussian", "gaussian", ["-s", "16"], ("CC",)),
    App("heartwall", "heartwall", "heartwall", ["../../data/heartwall/test.avi", "5"], (),
        inputs=("heartwall/test.avi",)),
    App("hotspot", "hotspot", "hotspot",
        ["64", "2", "2", "../../data/hotspot/temp_64", "../../data/hotspot/power_64",
         "output.out"], ("CC",), outputs=("output.out",),
        inputs=("hotspot/temp_64", "hotspot/power_64")),
    App("hotspot3D", "hotspot3D", "3D",
        ["64", "8", "10", "../../data/hotspot3D/power_64x8", "../../data/hotspot3D/temp_64x8",
         "output.out"], ("CC",), outputs=("output.out",),
        inputs=("hotspot3D/power_64x8", "hotspot3D/temp_64x8")),
    App("huffman", "huffman", "pavle", ["../../data/huffman/test1024_H2.206587175259.in"],
        ("NVCC",), inputs=("huffman/test1024_H2.206587175259.in",)),
    App("hybridsort", "hybridsort", "hybridsort", ["r"], ("CC",), needs=_TEXTURES),
    App("kmeans", "kmeans", "kmeans", ["-o", "-i", "../../data/kmeans/100"], ("NVCC", "CC"),
        inputs=("kmeans/100",), needs=_TEXTURES),
    App("lavaMD", "lavaMD", "lavaMD", ["-boxes1d", "3"], ("CUD_C", "C_C")),
    App("leukocyte", "leukocyte", "CUDA/leukocyte", ["../../data/leukocyte/testfile.avi", "5"],
        (), needs=_TEXTURES),
    App("lud", "lud/cuda", "lud_cuda", ["-s", "256", "-v"], ("NVCC",)),
    App("mummergpu", "mummergpu", "bin/mummergpu", [], (), needs=_TEXTURES),
    App("myocyte", "myocyte", "myocyte.out", ["100", "1", "0"], (), outputs=("output.txt",),
        inputs=("myocyte/y.txt", "myocyte/params.txt")),
    App("nn", "nn", "nn", ["filelist_4", "-r", "5", "-lat", "30", "-lng", "90"], ("CC",),
        target="nn", inputs=tuple(f"nn/cane4_{k}.db" for k in range(4))),
    App("nw", "nw", "needle", ["256", "10"], ("CC",), outputs=("result.txt",)),
    App("particlefilter_naive", "particlefilter", "particlefilter_naive",
        ["-x", "128", "-y", "128", "-z", "10", "-np", "1000"], ("CC",), target="naive",
        seeded=r"^(XE|YE): |^[\d.]+$"),
    App("particlefilter_float", "particlefilter", "particlefilter_float",
        ["-x", "128", "-y", "128", "-z", "10", "-np", "1000"], ("CC",), target="float",
        seeded=r"^(XE|YE): |^[\d.]+$"),
    App("pathfinder", "pathfinder", "pathfinder", ["1000", "100", "20"], ("CC",)),
    App("srad_v1", "srad/srad_v1", "srad", ["10", "0.5", "502", "458"], ("CC",),
        outputs=("image_out.pgm",), inputs=("srad/image.pgm",)),
    App("srad_v2", "srad/srad_v2", "srad", ["128", "128", "0", "31", "0", "31", "0.5", "2"],
        ("CC",)),
    App("streamcluster", "streamcluster", "sc_gpu",
        ["10", "20", "16", "1024", "1024", "100", "none", "output.txt", "1"], ("NVCC",),
        outputs=("output.txt",)),
]


def stage_inputs(suite: Path, app: App, data: Path) -> str:
    """The application's data/ files in data (a .xz decompressed); '' or why one is missing."""
    import lzma

    for f in app.inputs:
        dest = data / f
        if dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        src = suite / "data" / f
        if src.is_file():
            shutil.copy(src, dest)
        elif src.with_name(src.name + ".xz").is_file():
            with lzma.open(src.with_name(src.name + ".xz")) as z, open(dest, "wb") as out:
                shutil.copyfileobj(z, out)
        else:
            return f"its input data/{f} is not in this copy of the suite (Rodinia's data download)"
    return ""


# CUDA 13's nvcc builds sm_75 and newer; Rodinia's Makefiles ask for older ones
_OLD_ARCH = re.compile(r"\b(sm|compute)_([1-6]\d|7[0-2])\b")

WRAPPER = """#!{python}
# gmprof bench/rodinia.py: the compiler the application's Makefile calls ({mode})
import os, re, sys
args = [re.sub(r"{old}", {arch!r}.replace("sm_", r"\\1_"), a) for a in sys.argv[1:]]
cmd = {cmd!r} + args + {extra!r}
os.execv(cmd[0], cmd)
"""

# Runtime API names CUDA 13 removed, which Rodinia calls (cudaThreadSynchronize in 9
# applications), as the names that replaced them with the same meaning
_REMOVED = {"cudaThreadSynchronize": "cudaDeviceSynchronize", "cudaThreadExit": "cudaDeviceReset",
            "deviceOverlap": "asyncEngineCount"}


def compat_header(directory: Path) -> Path | None:
    """A header of #defines for the names of _REMOVED that this CUDA's headers lack (None when
    they have them all), included in front of every file the GPU builds compile (both alike):
    the one change to what compiles, where CUDA 13 would otherwise refuse the application."""
    from gmprof.program.build import find_nvcc

    directory.mkdir(parents=True, exist_ok=True)
    probe = directory / "probe.cu"
    probe.write_text("#include <cuda_runtime.h>\n")
    p = subprocess.run([find_nvcc(), "-E", str(probe)], capture_output=True, text=True)
    missing = [k for k in _REMOVED if p.returncode == 0 and not re.search(rf"\b{k}\b", p.stdout)]
    if not missing:
        return None
    h = directory / "cuda13_removed.h"
    h.write_text("/* bench/rodinia.py: names CUDA 13 removed */\n" +
                 "".join(f"#define {k} {_REMOVED[k]}\n" for k in missing))
    return h


def toolchain(directory: Path, mode: str, backend: str, arch: str,
              compat: Path | None = None, flags: tuple = ()) -> Path:
    """A bin/ directory whose `nvcc` is the compiler of one build (see the docstring)."""
    from gmprof.program.build import find_nvcc

    if mode == "native" and backend == "gpu":
        cmd = [find_nvcc()]
    else:
        cmd = [*W.gmprof_cmd(), "nvcc", *(["--gmprof-native"] if mode == "native" else [])]
    b = directory / "bin"
    b.mkdir(parents=True, exist_ok=True)
    extra = (["-include", str(compat)] if compat else []) + list(flags)
    (b / "nvcc").write_text(WRAPPER.format(python=sys.executable, mode=mode, cmd=cmd,
                                           old=_OLD_ARCH.pattern, arch=arch or "sm_90",
                                           extra=extra))
    (b / "nvcc").chmod(0o755)
    return b / "nvcc"


def tree(suite: Path, app: App, dest: Path) -> Path:
    """The application's directory copied under dest, with the suite's common/ and the staged
    data/ (dest/../data) beside it, as in the suite."""
    dest.mkdir(parents=True, exist_ok=True)
    if not (dest / "common").exists():
        (dest / "common").symlink_to(suite / "common")
    if not (dest / "data").exists():
        (dest.parent / "data").mkdir(exist_ok=True)
        (dest / "data").symlink_to(dest.parent / "data")
    # (cuda/util: headers several Makefiles name with -I../util)
    for top in (app.dir.split("/")[0], "util"):
        if (suite / "cuda" / top).is_dir() and not (dest / "cuda" / top).exists():
            shutil.copytree(suite / "cuda" / top, dest / "cuda" / top, symlinks=True)
    return dest / "cuda" / app.dir


# Rodinia's own timing lines ("VIDEO SEQUENCE TOOK 0.0074", lavaMD's and srad_v1's
# " 0.000007000000 s,  0.000335276825 % : READ COMMAND LINE PARAMETERS", "GPU Execution: 0.03",
# cuda/util/timing.h's "HtoD: 0.089000", particlefilter's "SEND ARRAY X BACK: 0.000006",
# and their totals, a number of seconds alone on a line)
_TIMED = re.compile(r"(?i)\btook\b|\bexecution:|^(init|memalloc|htod|exec|dtoh|close|total):|"
                    r"^send .* back: |"
                    r"\d\s+s,\s+[\d.]+\s+%|^\s*[\d.]+\s+s\s*$")


def _makefile(suite: Path, app: App) -> str:
    d = suite / "cuda" / app.dir
    for name in ("Makefile", "makefile"):
        if (d / name).is_file():
            return (d / name).read_text(errors="replace")
    return ""


def mask(lines: list[str], seeded: str) -> list[str]:
    return [W._NUMBER.sub("#", ln) if _TIMED.search(ln) or seeded and re.search(seeded, ln)
            else ln for ln in lines]


def compare(res, native: str, gmprof: str, what: str, seeded: str, log) -> None:
    a, b = mask(W.normalise(native), seeded), mask(W.normalise(gmprof), seeded)
    if a == b:
        return
    res["output"] = "differs"
    diff = next((f"{what}: native {x!r} / gmprof {y!r}" for x, y in zip(a, b) if x != y),
                f"{what}: {len(a)} lines natively, {len(b)} with gmprof")
    res["reason"] = res["reason"] or diff[:300]
    log.append(f"{what} difference:\n" + "\n".join(list(difflib.unified_diff(
        a, b, "native", "gmprof", lineterm="", n=1))[:60]))


def run_app(suite: Path, app: App, backend: str, work: Path, timeout: float,
            arch: str, compat: Path | None = None, flags: tuple = ()) -> dict:
    res = {"app": app.name, "build": "-", "run": "-", "output": "-", "report": "-",
           "kernels": 0, "launches": 0, "profiled": 0, "failed_checks": 0, "reason": "",
           "log": []}
    log = res["log"]
    if app.needs:
        res["build"], res["reason"] = "not tried", app.needs
        return res
    from gmprof import cache_dirs

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GMPROF_BACKEND=backend, GMPROF_CACHE_DIR=str(cache_dirs.root()))
    if "~/rodinia_3.0/common/make.config" in _makefile(suite, app):
        # hotspot3D's Makefile includes the suite's make.config from its author's home
        home = work / "home"
        (home / "rodinia_3.0").mkdir(parents=True, exist_ok=True)
        (home / "rodinia_3.0" / "common").symlink_to(suite / "common")
        env["HOME"] = str(home)
    dirs, secs = {}, {}
    for mode in ("native", "gmprof"):
        nvcc = toolchain(work / f"tc-{mode}", mode, backend, arch, compat, flags)
        d = dirs[mode] = tree(suite, app, work / mode)
        menv = dict(env, PATH=str(nvcc.parent) + os.pathsep + env.get("PATH", ""))
        t0 = time.time()
        b = W.sh(["make", "-C", str(d), *([app.target] if app.target else []),
                  *(f"{v}={nvcc}" for v in app.cc_vars)], log, env=menv,
                 timeout=30 * timeout)
        secs[mode] = round(time.time() - t0, 1)
        if b.returncode != 0 or not (d / app.exe).is_file():
            res["build"] = "native fails" if mode == "native" else "fails"
            res["reason"] = W.first_error(b.stderr + b.stdout) or "make built no " + app.exe
            return res
        if mode == "gmprof" and "compiled as it was" in b.stderr:
            res["reason"] = W.first_error(b.stderr)
    res["build"] = "ok"
    res["build_s"] = dict(secs)
    missing = stage_inputs(suite, app, work / "data")
    if missing:
        res["run"], res["reason"] = "no input", res["reason"] or missing
        return res
    runs = {}
    for mode in ("native", "gmprof"):
        renv = dict(env, GMPROF_OUTPUT=str(work / "report-%p.json"), GMPROF_QUIET="1")
        t0 = time.time()
        runs[mode] = W.sh([str(dirs[mode] / app.exe), *app.args], log, cwd=dirs[mode],
                          env=renv, timeout=timeout, argv0="./" + Path(app.exe).name)
        secs[mode] = round(time.time() - t0, 1)
    res["run_s"] = dict(secs)
    rn, ri = runs["native"], runs["gmprof"]
    if rn.returncode == 124:
        res["run"], res["reason"] = "native timeout", f"the native program ran past {timeout} s"
        return res
    if ri.returncode == 124:
        res["run"] = "timeout"
        res["reason"] = f"ran past {timeout} s (natively {secs['native']} s)"
        return res
    if rn.returncode < 0 and ri.returncode == rn.returncode:
        # the application kills itself natively too (dwt2d on a glibc with fortified string
        # functions: main.cu copies argv[0] into malloc(strlen(argv[0])), one byte short, and
        # aborts); no process writes a report after a signal
        res["run"] = f"native aborts (signal {-rn.returncode})"
        res["reason"] = (W.first_error(rn.stderr) or rn.stderr.strip()[-160:] or
                         f"killed by signal {-rn.returncode} natively and with gmprof")
        return res
    res["run"], res["output"] = "ok", "same"
    if rn.returncode != ri.returncode:
        res["run"] = f"status {ri.returncode} (native {rn.returncode})"
        res["reason"] = W.first_error(ri.stderr) or W.first_error(ri.stdout)
    compare(res, rn.stdout, ri.stdout, "stdout", app.seeded, log)
    for f in app.outputs:
        texts = [(dirs[m] / f).read_text(errors="replace") if (dirs[m] / f).is_file() else ""
                 for m in ("native", "gmprof")]
        compare(res, *texts, f, app.seeded, log)
    reports = sorted(str(p) for p in work.glob("report-*.json"))
    if not reports:
        res["report"] = "none written"
        res["reason"] = res["reason"] or "no report file written"
        return res
    rp = W.sh([*W.gmprof_cmd(), "report", "--json", *reports], log, env=env,
              timeout=3 * timeout)
    try:
        doc = json.loads(rp.stdout)
    except json.JSONDecodeError:
        res["report"] = "decode fails"
        res["reason"] = res["reason"] or W.first_error(rp.stderr)
        return res
    res["report"] = "ok"
    res["kernels"] = len(doc["kernels"])
    res["kernel_names"] = [k["kernel"] for k in doc["kernels"]]
    procs = doc["program"]["processes"]
    res["launches"] = sum(p["launches"] for p in procs)
    res["profiled"] = sum(p["profiled"] for p in procs)
    # launches that failed a check (an access out of range): the application's bug, found
    failed = doc["program"].get("failed_launches", [])
    res["failed_checks"] = len(failed)
    if failed:
        text = "\n".join(ln for ln in rp.stderr.splitlines() if "error:" in ln) or \
            str(failed[0])
        res["checks"] = text.replace(str(dirs["gmprof"]) + "/", f"cuda/{app.dir}/")[:2000]
    elif rp.returncode != 0:
        res["report"] = f"status {rp.returncode}"
        res["reason"] = res["reason"] or W.first_error(rp.stderr)
    if res["profiled"] == 0 and not res["reason"]:
        res["reason"] = "no launch profiled (" + ("; ".join(doc["program"]["notes"])[:200] or
                                                  "no instrumented kernel launched") + ")"
    return res


def ok(r: dict) -> bool:
    """Built, ran unchanged and reported (failed checks are findings, listed apart)."""
    return W.ok(r)


def markdown(results: list[dict], meta: dict) -> str:
    good = [r for r in results if ok(r)]
    lines = [
        "# Rodinia built with `gmprof nvcc`", "",
        f"`bench/rodinia.py` on the {meta['backend']} backend ({meta['device']}), Rodinia "
        f"{meta['suite_rev']}, {meta['date']}: each application built with its own Makefile "
        "natively and through `gmprof nvcc`, run on the same small input, outputs and exit "
        "statuses compared, the instrumented run's reports decoded with `gmprof report`.", "",
        *([f"This CUDA lacks names Rodinia calls; every file of both builds was compiled with "
           f"`{'`, `'.join(meta['compat'])}` in front.", ""] if meta.get("compat") else []),
        f"**{len(good)} of {len(results)}** applications built, ran with unchanged output and "
        "exit status, and reported. Launches that failed a check (an access out of range) are "
        "the application's bugs, counted under 'failed checks', the located errors below the "
        "table.", "",
        "| application | input | build | run | output | report | kernels | launches profiled "
        "| failed checks | native s | gmprof s | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        note = r["reason"].replace("|", "\\|").replace("\n", " ")[:180]
        s = r.get("run_s", {})
        lines.append(f"| {r['app']} | `{' '.join(r['args'])}` | {r['build']} | {r['run']} | "
                     f"{r['output']} | {r['report']} | {r['kernels']} | {r['profiled']} of "
                     f"{r['launches']} | {r['failed_checks']} | {s.get('native', '-')} | "
                     f"{s.get('gmprof', '-')} | {note} |")
    for r in results:
        if r.get("checks"):
            lines += ["", f"{r['app']}:", "", *(f"- {e}" for e in r["checks"].splitlines())]
    lines += ["", "Command:", "", "```", meta["command"], "```", ""]
    return "\n".join(lines)


def trim(suite: Path, dest: Path) -> None:
    """A copy of what the applications need: their directories (without objects, programs and
    outputs left in them), cuda/util, common/, their data files and input generators."""
    def ignore(directory, names):
        return [n for n in names if Path(n).suffix in (".o", ".pgm", ".tar", ".out", ".avi")
                or n in ("result.txt", "output.txt", "penmp", "3D", "experiments")]

    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(suite / "common", dest / "common", dirs_exist_ok=True)
    tops = {a.dir.split("/")[0] for a in APPS if not a.needs} | {"util"}
    for top in sorted(t for t in tops if (suite / "cuda" / t).is_dir()):
        shutil.copytree(suite / "cuda" / top, dest / "cuda" / top, ignore=ignore,
                        dirs_exist_ok=True)
    files = [f for a in APPS if not a.needs for f in a.inputs]
    for f in files:
        src = suite / "data" / f
        src = src if src.is_file() else src.with_name(src.name + ".xz")
        if src.is_file():
            (dest / "data" / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / "data" / src.relative_to(suite / "data"))
    (dest / ".revision").write_text(W.revision(suite) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(ROOT / "suites" / "rodinia"),
                    help="a Rodinia checkout (cuda/, common/, data/) or its --trim copy")
    ap.add_argument("--out", help="directory for the table and logs")
    ap.add_argument("--trim", metavar="DEST", help="only copy what the applications need")
    ap.add_argument("--backend", choices=("gpu", "cpu"), default=None)
    ap.add_argument("--only", help="comma-separated application names")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--nvcc-flags", default="",
                    help="flags added to every compile of both builds (an experiment, e.g. "
                         "-fmad=false: whether a difference comes from fused multiply-adds)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per program run")
    ap.add_argument("--arch", help="the GPU architecture old -arch values become (default: "
                                   "the GPU's)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    suite = Path(args.suite).resolve()
    if not (suite / "cuda").is_dir() or not (suite / "common").is_dir():
        print(f"gmprof: error: no Rodinia checkout (cuda/ and common/) at {suite}",
              file=sys.stderr)
        return 2
    if args.trim:
        trim(suite, Path(args.trim))
        print(f"wrote {args.trim}")
        return 0
    if not args.out:
        ap.error("--out is required")
    from gmprof.program.build import choose_backend

    backend = choose_backend(args.backend)
    device, arch = W.device_name(backend)
    arch = args.arch or arch or "sm_90"
    apps = {a.name: a for a in APPS}
    names = args.only.split(",") if args.only else list(apps)
    unknown = [n for n in names if n not in apps]
    if unknown:
        ap.error(f"unknown application(s): {', '.join(unknown)} (known: {', '.join(apps)})")
    out = Path(args.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="gmprof-rodinia-"))
    compat = compat_header(tmp / "compat") if backend == "gpu" else None
    start = time.time()
    meta = {"backend": backend, "device": device, "suite_rev": W.revision(suite),
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "compat": compat.read_text().splitlines()[1:] if compat else [],
            "command": "python3 bench/rodinia.py " + " ".join(
                sys.argv[1:] if argv is None else argv)}
    done: dict = {}

    def one(name):
        app = apps[name]
        w = tmp / name
        try:
            r = run_app(suite, app, backend, w, args.timeout, arch, compat,
                        tuple(args.nvcc_flags.split()))
        except Exception as exc:  # a bench bug must not lose the other applications' results
            r = {"app": name, "build": "-", "run": "-", "output": "-", "report": "-",
                 "kernels": 0, "launches": 0, "profiled": 0, "failed_checks": 0,
                 "reason": f"bench error: {exc!r}"[:240], "log": []}
        r["args"] = app.args
        shutil.rmtree(w, ignore_errors=True)
        (out / "logs" / f"{name}.txt").write_text("\n".join(r.pop("log")) + "\n")
        print(f"{name:22s} build={r['build']:<8s} run={r['run']:<8s} output={r['output']:<8s} "
              f"report={r['report']} profiled={r['profiled']}/{r['launches']} "
              f"{r['reason'][:100]}", flush=True)
        done[name] = r
        results = [done[n] for n in names if n in done]
        meta["seconds"] = round(time.time() - start)
        (out / "rodinia.md").write_text(markdown(results, meta))
        (out / "rodinia.json").write_text(json.dumps({"meta": meta, "results": results},
                                                     indent=2))
        return r

    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, names))
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{sum(ok(r) for r in results)} of {len(results)} applications ok in "
          f"{round(time.time() - start)} s; wrote {out}/rodinia.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
