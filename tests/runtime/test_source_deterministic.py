"""The generated device code is the same text in every process: CuPy keeps NVRTC's output on
disk by the code's text, so a second `gmprof profile` compiles nothing only if no set order,
hash seed or object id leaks into the text (issue 16)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import hashlib, sys
from gmprof.driver import load_sample
from gmprof.mode import Mode
from gmprof.passes.targets import NVRTC
from gmprof.runtime.samples import sample_profiler
prof = sample_profiler(load_sample(sys.argv[1]), "cpu")
h = hashlib.sha256()
for mode in ("default", "basic", "trace"):
    for sm in (True, False):
        text, done = prof.pipeline.instrumented_source(prof.program, prof.plan(Mode.parse(mode)),
                                                       NVRTC, sm=sm, defines=False)
        h.update(text.encode() + repr(sorted(done.defines.items())).encode())
h.update(prof.modules.source(None)[0].encode())
print(h.hexdigest())
"""


def test_instrumented_text_is_the_same_under_other_hash_seeds(tmp_path):
    digests = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT),
                   GMPROF_CACHE_DIR=str(tmp_path / seed))
        r = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "samples" / "spmv")],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        digests.append(r.stdout.strip())
    assert digests[0] == digests[1]
