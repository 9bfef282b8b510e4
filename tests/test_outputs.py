"""gmprof/outputs.py: a command's output files are checked first and written all or none, never
over an input, never replacing a device; new files respect the umask."""
from __future__ import annotations

import os
import stat

import pytest

from gmprof.errors import OutputError
from gmprof.outputs import Outputs, write_outputs


def listing(d):
    """Every entry under d with its bytes (None for a directory), to compare before/after."""
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs:
            out[os.path.relpath(os.path.join(root, name), d)] = None
        for name in files:
            p = os.path.join(root, name)
            out[os.path.relpath(p, d)] = open(p, "rb").read()
    return out


def test_writes_and_replaces(tmp_path):
    (tmp_path / "old.txt").write_text("old")
    write_outputs({str(tmp_path / "new.txt"): "new", str(tmp_path / "old.txt"): "fresh"})
    assert (tmp_path / "new.txt").read_text() == "new"
    assert (tmp_path / "old.txt").read_text() == "fresh"
    assert sorted(os.listdir(tmp_path)) == ["new.txt", "old.txt"]  # no temporaries left


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_new_files_respect_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        write_outputs({str(tmp_path / "f"): "x"})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o666 & ~mask


def test_a_replaced_file_keeps_its_mode(tmp_path):
    f = tmp_path / "f"
    f.write_text("a")
    f.chmod(0o640)
    write_outputs({str(f): "b"})
    assert stat.S_IMODE(f.stat().st_mode) == 0o640 and f.read_text() == "b"


@pytest.mark.parametrize("name,kind", [
    ("", "output"), ("dir", "output"), ("missing/x.txt", "output"), ("in.cu", "output"),
])
def test_refused_before_anything_is_written(tmp_path, name, kind):
    (tmp_path / "dir").mkdir()
    (tmp_path / "in.cu").write_text("source")
    before = listing(tmp_path)
    outs = Outputs(inputs=[str(tmp_path / "in.cu")])
    with pytest.raises(OutputError) as e:
        outs.reserve(str(tmp_path / name) if name else "", "-o")
    assert e.value.kind == kind
    assert listing(tmp_path) == before


def test_an_input_reached_through_a_link_is_refused(tmp_path):
    (tmp_path / "in.cu").write_text("source")
    os.symlink(tmp_path / "in.cu", tmp_path / "alias.cu")
    with pytest.raises(OutputError, match="input"):
        Outputs(inputs=[str(tmp_path / "in.cu")]).reserve(str(tmp_path / "alias.cu"))


def test_a_link_is_followed_and_kept(tmp_path):
    (tmp_path / "target").write_text("old")
    os.symlink(tmp_path / "target", tmp_path / "link")
    write_outputs({str(tmp_path / "link"): "new"})
    assert os.path.islink(tmp_path / "link") and (tmp_path / "target").read_text() == "new"


def test_all_or_none_when_a_later_output_fails(tmp_path, monkeypatch):
    """The second output cannot be written (its temporary fails): the first keeps its old
    bytes and no temporary is left."""
    (tmp_path / "a").write_text("old a")
    outs = Outputs()
    a = outs.reserve(str(tmp_path / "a"))
    b = outs.reserve(str(tmp_path / "b"))
    outs.put(a, "new a")
    outs.put(b, "new b")
    real = Outputs._write_temporary
    calls = []

    def failing(self, o):
        calls.append(o.name)
        if len(calls) == 2:
            raise OutputError("disk full")
        return real(self, o)

    monkeypatch.setattr(Outputs, "_write_temporary", failing)
    with pytest.raises(OutputError):
        outs.commit()
    assert listing(tmp_path) == {"a": b"old a"}


def test_all_or_none_when_a_rename_fails(tmp_path, monkeypatch):
    (tmp_path / "a").write_text("old a")
    outs = Outputs()
    a, b = outs.reserve(str(tmp_path / "a")), outs.reserve(str(tmp_path / "b"))
    outs.put(a, "new a")
    outs.put(b, "new b")
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("/b"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OutputError):
        outs.commit()
    monkeypatch.setattr(os, "replace", real)
    assert listing(tmp_path) == {"a": b"old a"}


def test_dash_is_standard_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_outputs({"-": "to stdout\n"})
    assert capsys.readouterr().out == "to stdout\n"
    assert os.listdir(tmp_path) == []  # no file named '-'


def test_special_files_are_written_in_place(tmp_path):
    write_outputs({"/dev/null": "discarded"})
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_outputs({str(fifo): "through a fifo"})
        assert os.read(r, 100) == b"through a fifo"
    finally:
        os.close(r)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_device_is_a_plain_error_and_stays_a_device():
    with pytest.raises(OutputError, match="No space"):
        write_outputs({"/dev/full": "x" * 100000})
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_the_same_file_twice_is_refused(tmp_path):
    outs = Outputs()
    outs.reserve(str(tmp_path / "x"), "--csv")
    with pytest.raises(OutputError, match="same file"):
        outs.reserve(str(tmp_path / "x"), "--out")
