"""Every command in docs/workflows/*.md runs as written (on the CPU backend here) and says
what the page shows.

A page's ```console blocks hold commands (`$ ...`, a line ending in `\\` continues it) and,
below each, lines of its output: each shown line (but `...`) must appear in what the command
printed (standard output and error, spaces collapsed). `# exit N` after a command is the
status it must end with (default 0). A fenced block right after `<!-- file: NAME -->` is
written to NAME first; ```python blocks run in order in one Python process after the console
blocks. Commands run in one bash session per page, in a fresh directory with `samples/` linked
from the checkout and `gmprof`, `gmprof-nvcc` on PATH running this checkout's code.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p for p in (ROOT / "docs" / "workflows").glob("*.md") if p.name != "README.md")
SLOW: set = set()  # every page runs in seconds on a warm cache (tens cold: a first g++ build)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
MARK = "__gmprof_docs_status__"


def blocks(text: str):
    """(language, body, file name or None) of every fenced block, in order."""
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip().splitlines()
        name = None
        if before and (f := re.fullmatch(r"<!-- file: (\S+) -->", before[-1].strip())):
            name = f.group(1)
        yield m.group(1), m.group(2), name


def commands(body: str):
    """(command, expected status, shown output lines) of a console block."""
    out, lines = [], body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if out and line.strip() and line.strip() != "...":
                out[-1][2].append(line.strip())
            i += 1
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        status = 0
        m = re.search(r"\s+# exit (\d+)$", cmd)
        if m:
            cmd, status = cmd[:m.start()], int(m.group(1))
        out.append((cmd, status, []))
        i += 1
    return out


def squash(text: str) -> str:
    return " ".join(text.split())


def test_every_workflow_has_a_page():
    names = {p.stem for p in PAGES}
    assert {"kernel", "sample", "makefile", "cmake", "notebook", "ci"} <= names


@pytest.mark.parametrize("page", [pytest.param(p, id=p.name, marks=[pytest.mark.slow]
                                               if p.name in SLOW else [])
                                  for p in PAGES])
def test_page_commands_run_as_written(page, tmp_path):
    text = page.read_text()
    work = tmp_path / "work"
    work.mkdir()
    (work / "samples").symlink_to(ROOT / "samples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, argv in (("gmprof", "-m gmprof"), ("gmprof-nvcc", "-m gmprof nvcc")):
        (bin_dir / name).write_text(f"#!/bin/sh\nexec {sys.executable} {argv} \"$@\"\n")
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(ROOT), COLUMNS="80")
    env.pop("GMPROF_OUTPUT", None)
    # the CPU backend everywhere (the pages show its output): CuPy sees no GPU, and whole
    # programs build for the CPU
    env.update(CUDA_VISIBLE_DEVICES="", GMPROF_BACKEND="cpu")
    script, expected, python = [], [], []
    for lang, body, name in blocks(text):
        if name:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(body)
        elif lang == "console":
            for cmd, status, shown in commands(body):
                script.append(f"{cmd}\necho {MARK} {len(expected)} $?")
                expected.append((cmd, status, shown))
        elif lang == "python":
            python.append(body)
    if page.name == "cmake.md" and (shutil.which("cmake") is None or
                                    shutil.which("nvcc") is None):
        pytest.skip("needs cmake and nvcc (CMake identifies the CUDA compiler with it)")
    assert expected or python, f"{page.name}: nothing to run"
    if expected:
        p = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=900)
        parts = re.split(rf"^{MARK} (\d+) (\d+)$", p.stdout, flags=re.M)
        outputs = {int(parts[i]): (int(parts[i + 1]), parts[i - 1])
                   for i in range(1, len(parts) - 1, 3)}
        for n, (cmd, status, shown) in enumerate(expected):
            assert n in outputs, f"{page.name}: `{cmd}` did not run:\n{p.stdout[-3000:]}"
            got, output = outputs[n]
            assert got == status, f"{page.name}: `{cmd}` exited {got}, not {status}:\n{output}"
            for line in shown:
                assert squash(line) in squash(output), \
                    f"{page.name}: `{cmd}` did not print {line!r}:\n{output}"
    if python:
        p = subprocess.run([sys.executable, "-c", "\n".join(python)], cwd=work, env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"{page.name}: its Python failed:\n{p.stdout}\n{p.stderr}"
