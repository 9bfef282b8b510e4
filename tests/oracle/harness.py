"""Compare gmprof with the generated kernels' models: every counter, reads and writes per array,
the count label, and the outputs (the native run's against the model's, and gmprof's own
native-vs-instrumented check).

Kernels are batched into one translation unit (one analysis, one compile per mode) up to
BATCH kernels: gmprof allows 64 memory objects a unit and a kernel has at most 5.

KNOWN_WRONG: the families of issue 11 that are wrong today, each with the generator features
that reach it. The CI suite generates kernels without them (zero mismatches expected) and, per
family, a strict xfail checks the family still fails: when a fix lands the xfail passes, the
test fails, and the family comes out of KNOWN_WRONG (its features then join the main suite).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(HERE), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

import gen  # noqa: E402
import model  # noqa: E402

# family -> generator features that reach it. The first group is issue 11's list; the second
# the families this oracle found (see tests/oracle/regressions/ for a minimal kernel of each).
# Fixed (their strict xfails turned to XPASS, so they left this table and their features joined
# the generated suite): braceless_loop_invariant, constant_device_globals, shared_scalar,
# uniform_site_thread_dependent_trip (found here: a tid-invariant, loop-invariant site in a loop
# whose trip count differs between threads), then memory_read_loop_condition,
# helper_offset_pointer, ldg_not_a_site, thread_only_and_condition, helper_site_static_zero
# (a site in a __device__ function with one caller planned static and counted 0) and
# atomic_pointer_nested_read (`atomicAdd(h + d[i], 1u)` did not count d).
KNOWN_WRONG: dict = {
    # (every family found so far is fixed; its regression file names it)
}

# families that a dozen generated kernels do not reliably reach: their strict xfail is their
# regression file (tests/oracle/regressions/<family>.py), not the generated family test
RARE_FAMILIES: set[str] = set()

MODES = ("default", "SA", "basic", "trace")
BATCH = 12


def disabled_features(known=None) -> frozenset:
    known = KNOWN_WRONG if known is None else known
    return frozenset().union(*known.values()) if known else frozenset()


@dataclass
class Mismatch:
    kernel: str
    seed: int
    mode: str
    what: str

    def __str__(self):
        return f"seed {self.seed} ({self.kernel}) [{self.mode}] {self.what}"


@dataclass
class Outcome:
    kernels: int = 0
    launches: int = 0
    seconds: float = 0.0
    mismatches: list = field(default_factory=list)
    failed_seeds: dict = field(default_factory=dict)  # seed -> Kernel


def compare(k: gen.Kernel, exp: model.Expected, report, args, mode: str) -> list[str]:
    """What differs between one launch's report and the model (empty: nothing)."""
    out = []
    for arr, want in exp.counts.items():
        if arr.startswith("c_"):  # the __constant__ array, named after the kernel
            arr_in_report = f"c_{k.name}"
        else:
            arr_in_report = arr
        try:
            a = report.array(arr_in_report)
        except KeyError:
            if want.any():
                out.append(f"{arr}: not in the report, {int(want.sum())} accesses expected")
            continue
        got = np.asarray(a.counts, dtype=np.int64)
        if got.shape != want.shape:
            out.append(f"{arr}: {got.size} counters, {want.size} expected")
            continue
        if not np.array_equal(got, want):
            bad = np.nonzero(got != want)[0]
            ex = ", ".join(f"[{i}] {got[i]} (expected {want[i]})" for i in bad[:4])
            out.append(f"{arr}: {bad.size} counters differ, total {int(got.sum())} "
                       f"(expected {int(want.sum())}): {ex}")
        # None: gmprof says it could not split reads from writes (a note says why): no claim
        if a.reads is not None and (a.reads, a.writes) != (exp.reads[arr], exp.writes[arr]):
            out.append(f"{arr}: reads/writes {a.reads}/{a.writes} (expected "
                       f"{exp.reads[arr]}/{exp.writes[arr]})")
        if a.out_of_range:
            out.append(f"{arr}: {a.out_of_range} accesses out of range (expected 0)")
        if a.label != "exact":
            out.append(f"{arr}: labelled {a.label} (expected exact)")
    for name, i in (("out", 1), ("res", 2), ("hist", 3)):
        if not np.array_equal(np.asarray(args[i]), exp.values[name]):
            out.append(f"{name}: the native run's values differ from the model's")
    if report.run.outputs_identical is not True:
        out.append(f"outputs_identical = {report.run.outputs_identical}")
    return out


def run_batch(kernels: list, backend: str = "cpu", modes=MODES, log=None,
              counts: dict | None = None) -> list[Mismatch]:
    """Profile every kernel of one translation unit in every mode (`counts`: filled with
    {kernel: {mode: {array: counts list}}}, to compare backends)."""
    import gmprof

    src = "\n".join(k.cuda() for k in kernels)
    found = []
    try:
        prof = gmprof.api.profiler(src, backend=backend)
    except Exception as e:  # noqa: BLE001 (a failure to read a kernel is a mismatch too)
        if len(kernels) > 1:  # find the kernel it is about
            for k in kernels:
                found += run_batch([k], backend, modes, log, counts)
            return found
        return [Mismatch(kernels[0].name, kernels[0].seed, "-",
                         f"analysis failed: {type(e).__name__}: {e}")]
    for k in kernels:
        exp = model.run_model(k)
        for mode in modes:
            args = model.inputs(k)
            if backend == "gpu":
                import cupy as cp

                args = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
            try:
                report = prof.launch(k.name, k.grid, k.block, args, mode=parse_mode(mode))
            except Exception as e:  # noqa: BLE001
                if len(kernels) > 1 and type(e).__name__ == "CompileError":
                    # one kernel that does not compile fails its whole unit: run each alone
                    return [m for one in kernels
                            for m in run_batch([one], backend, modes, log, counts)]
                found.append(Mismatch(k.name, k.seed, mode, f"launch failed: "
                                      f"{type(e).__name__}: {str(e)[:300]}"))
                continue
            if backend == "gpu":
                args = [a.get() if hasattr(a, "get") else a for a in args]
            if counts is not None:
                counts.setdefault(k.name, {})[mode] = {
                    a.name: [int(x) for x in a.counts] for a in report.arrays}
            for what in compare(k, exp, report, args, mode):
                found.append(Mismatch(k.name, k.seed, mode, what))
    return found


def parse_mode(text: str):
    """A mode's name, or `default/first`: the default mode with once-per-entry counts made in
    the loop's first iteration (Mode.loop_entry False), not before the loop."""
    import dataclasses

    from gmprof.mode import Mode

    name, _, variant = text.partition("/")
    mode = Mode.parse(name)
    return dataclasses.replace(mode, loop_entry=False) if variant == "first" else mode


def run(seeds, backend: str = "cpu", modes=MODES, disabled=None, batch: int = BATCH,
        log=None, counts_out: str | None = None, jobs: int = 1, ranges=False) -> Outcome:
    """Generate a kernel per seed (without the `disabled` features), profile, compare."""
    disabled = disabled_features() if disabled is None else frozenset(disabled)
    t0 = time.time()
    res = Outcome()
    seeds = list(seeds)
    counts = {} if counts_out else None
    batches = pack([generate(s, disabled, ranges) for s in seeds], batch)
    def absorb(ks, mm, cs):
        if counts is not None:
            counts.update(cs)
        res.kernels += len(ks)
        res.launches += len(ks) * len(modes)
        res.mismatches += mm
        for m in mm:
            res.failed_seeds[m.seed] = next(k for k in ks if k.seed == m.seed)
        if log:
            log(f"{res.kernels}/{len(seeds)} kernels, {len(res.mismatches)} mismatches, "
                f"{time.time() - t0:.0f} s")

    jobs_list = [(ks, backend, modes, counts is not None) for ks in batches]
    if jobs > 1 and backend == "cpu" and len(batches) > 1:
        # the compiles (g++) dominate: several units at a time, one per core
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for ks, (mm, cs) in zip(batches, pool.imap(_batch_job, jobs_list)):
                absorb(ks, mm, cs)
    else:
        for ks, job in zip(batches, jobs_list):
            absorb(ks, *_batch_job(job))
    res.seconds = time.time() - t0
    if counts_out:
        import json

        Path(counts_out).write_text(json.dumps(counts, sort_keys=True))
    return res


def objects(k: gen.Kernel) -> int:
    """Memory objects gmprof counts for the kernel (its 4 pointer parameters, its shared and
    constant arrays)."""
    return 4 + bool(k.S) + bool(k.SP) + bool(k.SC) + bool(k.C)


def pack(kernels: list, batch: int = BATCH, limit: int = 64) -> list:
    """Kernels in units of at most `batch` kernels and `limit` memory objects."""
    out, cur, n = [], [], 0
    for k in kernels:
        if cur and (len(cur) >= batch or n + objects(k) > limit):
            out.append(cur)
            cur, n = [], 0
        cur.append(k)
        n += objects(k)
    return out + ([cur] if cur else [])


def _batch_job(job):
    ks, backend, modes, want_counts = job
    counts = {} if want_counts else None
    return run_batch(ks, backend, modes, None, counts), counts


def generate(seed: int, disabled=frozenset(), ranges=False) -> gen.Kernel:
    k = gen.generate(seed, f"k{seed}", disabled, ranges)
    k.seed = seed
    return k


def families(k: gen.Kernel) -> list[str]:
    """The known-wrong families a kernel's features reach."""
    return sorted(f for f, feats in KNOWN_WRONG.items() if feats & k.features)


def regression_text(k: gen.Kernel, mismatches: list, family: str | None = None) -> str:
    """A regression file: the minimal kernel as CUDA (to read), its tree (to run), the family
    it belongs to (None: new), and what gmprof got wrong when it was found."""
    what = "\n".join(f"  [{m.mode}] {m.what}" for m in mismatches[:12])
    return (f'"""Found by the oracle (seed {k.seed}), shrunk; launch grid={k.grid} '
            f'block={k.block} n={k.n}.\n\ngmprof got (when found):\n{what}\n\n'
            f'{k.cuda()}"""\n'
            f"FAMILY = {family!r}\n"
            f"KERNEL = {k!r}\n")


def load_regression(path) -> tuple:
    """(family, Kernel) from a regression file."""
    ns = dict(vars(gen))
    exec(compile(Path(path).read_text(), str(path), "exec"), ns)  # noqa: S102 (ours)
    return ns["FAMILY"], ns["KERNEL"]
