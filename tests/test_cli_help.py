"""Every option of every gmprof command has help text."""
import argparse

import pytest

from gmprof.cli import build_parser


def test_every_option_has_help():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [f"gmprof {name} {act.option_strings or act.dest}"
               for name, p in sub.choices.items() for act in p._actions
               if not act.help and not isinstance(act, argparse._HelpAction)]
    assert missing == []
    assert {a.dest: a for a in parser._actions}["version"].help


def test_gmprof_help_describes_the_tool(capsys):
    from gmprof.cli import main

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert description.startswith("Fine-grained memory profiling of CUDA kernels")
    assert "library never" not in out and "argument parsing" not in out  # the module's docstring
    assert "examples:" in out and "gmprof profile samples/matmul_tiled" in out


@pytest.mark.parametrize("mode,said", [
    ("", "--mode '': an empty mode"),
    ("  ", "--mode '  ': an empty mode"),
    ("SA-SA", "--mode 'SA-SA': SA is given twice"),
    ("SA-NA-sa", "--mode 'SA-NA-sa': SA is given twice"),
    ("basic-basic", "--mode 'basic-basic': basic is given twice"),
    ("SA-", "--mode 'SA-': an empty part"),
    ("-SM", "--mode '-SM': an empty part"),
    ("SA--NA", "--mode 'SA--NA': an empty part"),
    ("SA NA", "--mode 'SA NA': unknown mode 'SA NA'"),
    ("XX", "--mode 'XX': unknown mode 'XX'"),
])
@pytest.mark.parametrize("command", ["profile", "instrument"])
def test_a_mode_with_empty_or_repeated_parts_is_a_usage_error(mode, said, command, tmp_path,
                                                              capsys):
    from gmprof.cli import main

    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n")
    extra = ["-o", str(tmp_path / "out.cu")] if command == "instrument" else \
        ["--kernel", "k", "--grid", "1", "--block", "1", "--arg", "a=float32[1]:zeros"]
    assert main([command, str(src), f"--mode={mode}", *extra]) == 2
    err = capsys.readouterr().err
    assert err == f"gmprof: error: {said}" + err[len(f"gmprof: error: {said}"):] and \
        err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == [src]


@pytest.mark.parametrize("mode,name", [("SA-NA-SM-TH", "SA-NA-SM-TH"), ("sa+sm", "default"),
                                       ("basic-SM", "SM"), (" NA ", "NA"), ("basic", "basic")])
def test_the_modes_that_are_accepted(mode, name):
    from gmprof.mode import Mode

    assert Mode.parse(mode).name == name


def test_profile_finds_the_shipped_samples_from_any_directory(tmp_path):
    """`gmprof profile samples/NAME` (the README's command) from outside a checkout runs the
    sample gmprof ships; a path that is neither a file nor a sample is a plain error."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "gmprof", "profile", "samples/transpose_naive"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "self-check passed" in r.stdout + r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "gmprof", "profile", "nosuch.cu", "--kernel", "k",
                        "--grid", "1", "--block", "1"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "nosuch.cu: no such file or sample directory" in r.stderr
    assert "Traceback" not in r.stderr
