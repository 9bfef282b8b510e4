"""Every runnable snippet in README.md and docs/ runs as written: the ```python blocks of
README.md, and docs/report.md's command block (on the CPU backend where there is no GPU)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _blocks(path: Path, lang: str) -> list[str]:
    return [b for lg, b in re.findall(r"```(\w*)\n(.*?)```", path.read_text(), re.S)
            if lg == lang]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.parametrize("i", range(len(_blocks(ROOT / "README.md", "python"))))
def test_readme_python_snippet_runs(i, tmp_path):
    code = _blocks(ROOT / "README.md", "python")[i]
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env=_env(), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr


def test_report_doc_commands_run(tmp_path):
    lines = [line for b in _blocks(ROOT / "docs" / "report.md", "")
             if b.lstrip().startswith("gmprof ") for line in b.strip().splitlines()]
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    gmprof = [sys.executable, "-m", "gmprof"]
    for line in lines:
        command = line.split("#")[0].strip()
        assert command.startswith("gmprof ")
        out = None
        if ">" in command:
            command, out = (c.strip() for c in command.split(">"))
        r = subprocess.run(gmprof + command.split()[1:], cwd=tmp_path, capture_output=True,
                           text=True, env=_env(), timeout=600)
        assert r.returncode == 0, (line, r.stderr[-3000:])
        if out:
            (tmp_path / out).write_text(r.stdout)
    assert (tmp_path / "v1.html").is_file() and (tmp_path / "v1.csv").is_file()
    assert (tmp_path / "jcb.json").is_file()
