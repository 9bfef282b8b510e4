"""An expectations file (`gmprof check EXPECT.toml`): what to profile, and bounds on its counts.

Stage: report (reading). Takes the path of a TOML file and returns an ExpectFile: the
[profile] table (checked for known keys and their types), where each of its keys is, and the
Expectations (expect.py) of its [array.*], [site.*] and [kernel.*] tables, each located at its
line and column in the file. The file is parsed by tomllib; tomllib gives no positions, so each
line's key (or table header) is parsed again on its own, by tomllib too, to find where a key
path is written. A file that is not TOML, an unknown key or a value of the wrong type is a
located ExpectError (status 2) before anything runs. The language: docs/workflows/assertions.md.

    [profile]
    file = "k.cu"
    kernel = "k"
    grid = "4"
    block = "32"
    args = ["out=float32[128]:zeros", "in=float32[32]:arange"]

    [array.in]
    reads = 128
    reads_per_element = "<= 4"
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from gmprof.errors import InputError, Location

from .expect import WARP_METRICS, Bound, Expectation, ExpectError, Target, metric

# [profile]'s keys and the types each takes (docs/workflows/assertions.md)
_DIM = (str, int, list)
PROFILE_KEYS = {
    "sample": (str,), "file": (str,), "run": (str,),
    "kernel": (str,), "grid": _DIM, "block": _DIM, "args": (list,), "shared_mem": (int,),
    "defines": (list,), "include_dirs": (list,), "arch": (str,),
    "size": (str,), "seed": (int,), "backend": (str,), "mode": (str,), "profile": (str,),
    "threshold": (int,), "counter_bits": (int,), "enhanced": (bool,),
    "sampling": (int, float), "sampler": (str,), "access_stats": (bool,),
    "access_stats_blocks": (int,), "timeout": (int, float),
}
SOURCES = ("sample", "file", "run")


@dataclass
class ExpectFile:
    path: str
    profile: dict
    expectations: list = field(default_factory=list)
    where: dict = field(default_factory=dict)  # key path (tuple) -> Location
    lines: list = field(default_factory=list)

    def at(self, *path) -> Location:
        """Where a key path is written: its first written descendant where it has no line of
        its own (`[array.A]` writes the table `array`), else its nearest written ancestor."""
        below = [at for p, at in self.where.items() if p[:len(path)] == path]
        if below:
            return min(below, key=lambda at: at.line)
        while path:
            if path in self.where:
                return self.where[path]
            path = path[:-1]
        return Location(self.path, 1, 1, self.lines[0] if self.lines else None)

    @property
    def warps(self) -> bool:
        """Whether an expectation needs warp statistics (--access-stats)."""
        return any(e.metric in WARP_METRICS for e in self.expectations)


def read(path) -> ExpectFile:
    name = str(path)
    try:
        text = Path(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: a directory, not an expectations file (.toml)") from None
    except UnicodeDecodeError:
        raise InputError(f"{name}: not UTF-8 text (an expectations file is TOML)") from None
    except OSError as e:
        raise InputError(f"{name}: cannot be read: {e.strerror}") from None
    return parse(text, name)


def parse(text: str, name: str = "<expect>") -> ExpectFile:
    lines = text.splitlines()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _decode_error(e, name, lines) from None
    f = ExpectFile(name, {}, where=_key_locations(lines, name), lines=lines)
    for key, value in data.items():
        if key == "profile":
            f.profile = _profile(f, value)
        elif key in ("array", "site"):
            f.expectations += _targets(f, key, value, None, (key,))
        elif key == "kernel":
            _table(f, value, ("kernel",), "a table of kernels: [kernel.NAME]")
            for kname, body in value.items():
                f.expectations += _kernel(f, kname, body)
        else:
            raise ExpectError(f"unknown table {key!r}: an expectations file has [profile], "
                              "[array.NAME], [site.\"LINE:COL\"] and [kernel.NAME] (with "
                              "[kernel.NAME.array.A], [kernel.NAME.site.\"L:C\"])", f.at(key))
    if not f.profile:
        raise ExpectError("no [profile] table: say what to profile (sample = \"DIR\", file = "
                          "\"K.cu\" with kernel, grid, block and args, or run = \"RUN.json\")",
                          Location(name, 1, 1, lines[0] if lines else None))
    if not f.expectations:
        raise ExpectError("no expectations: add a table such as [array.A] with a metric "
                          "(reads_per_element = \"<= 2\")", f.at("profile"))
    return f


def _decode_error(e, name, lines) -> ExpectError:
    msg = str(e)
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", msg)
    if m:
        line, col = int(m.group(1)), int(m.group(2))
        src = lines[line - 1] if 0 < line <= len(lines) else None
        return ExpectError(f"not TOML: {msg[:m.start()]}", Location(name, line, col, src))
    msg = re.sub(r"\s*\(at end of document\)$", "", msg)
    return ExpectError(f"not TOML: {msg} (at the end of the file)",
                       Location(name, max(len(lines), 1), 1, lines[-1] if lines else None))


def _table(f, value, path, what):
    if not isinstance(value, dict):
        raise ExpectError(f"{'.'.join(path)}: expected {what}", f.at(*path))


def _profile(f, table) -> dict:
    _table(f, table, ("profile",), "a table: [profile]")
    for key, value in table.items():
        at = f.at("profile", key)
        if key not in PROFILE_KEYS:
            import difflib

            close = difflib.get_close_matches(key, list(PROFILE_KEYS), n=1)
            hint = f" (did you mean {close[0]}?)" if close else \
                f" (keys: {', '.join(PROFILE_KEYS)})"
            raise ExpectError(f"[profile]: unknown key {key!r}{hint}", at)
        types = PROFILE_KEYS[key]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            raise ExpectError(f"[profile] {key}: expected "
                              f"{' or '.join(_type_name(t) for t in types)}", at)
        if key in ("args", "defines", "include_dirs") and \
                not all(isinstance(v, str) for v in value):
            raise ExpectError(f"[profile] {key}: expected a list of strings", at)
    given = sorted((k for k in SOURCES if k in table), key=lambda k: f.at("profile", k).line)
    if len(given) != 1:
        where = f.at("profile", given[1]) if len(given) > 1 else f.at("profile")
        raise ExpectError("[profile]: give exactly one of sample = \"DIR\", file = \"K.cu\" "
                          "and run = \"RUN.json\"" + (f" (found {', '.join(given)})"
                                                      if given else ""), where)
    return table


def _type_name(t) -> str:
    return {str: "a string", int: "an integer", float: "a number", list: "a list",
            bool: "true or false"}[t]


def _kernel(f, kname, body) -> list:
    path = ("kernel", kname)
    _table(f, body, path, "a table of metrics, [kernel.NAME.array.A] and "
                          "[kernel.NAME.site.\"L:C\"]")
    out = []
    target = Target("kernel", None, kname, f.at(*path))
    for key, value in body.items():
        if key in ("array", "site"):
            out += _targets(f, key, value, kname, path + (key,))
        else:
            out.append(_expectation(f, target, key, value, path + (key,)))
    return out


def _targets(f, kind, table, kname, path) -> list:
    _table(f, table, path, f"a table of {kind}s: [{'.'.join(path)}.NAME]")
    out = []
    for tname, body in table.items():
        tpath = path + (tname,)
        _table(f, body, tpath, f"a table of metrics ({kind} {tname}: reads = 128, ...)")
        target = Target(kind, tname, kname, f.at(*tpath))
        for key, value in body.items():
            out.append(_expectation(f, target, key, value, tpath + (key,)))
    return out


def _expectation(f, target, key, value, path) -> Expectation:
    at = f.at(*path)
    metric(key, target.kind, at)  # an unknown metric is an error before any run
    return Expectation(target, key, Bound.parse(value, at), at)


# -- where each key is written --------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[")


def _key_locations(lines, name) -> dict:
    """Key path -> Location of every table header and key/value line. Lines inside a
    multi-line string or array are not keys; their text does not parse as one."""
    where, table = {}, ()
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        col = len(line) - len(line.lstrip()) + 1
        if _HEADER.match(line) and not stripped.startswith("[["):
            path = _header_path(stripped)
            if path is not None:
                table = path
                where.setdefault(path, Location(name, number, col, line))
            continue
        path = _key_path(stripped)
        if path is not None:
            where.setdefault(table + path, Location(name, number, col, line))
    return where


def _path_of(data) -> tuple:
    path = []
    while isinstance(data, dict) and len(data) == 1:
        key, data = next(iter(data.items()))
        path.append(key)
    return tuple(path)


def _header_path(text):
    end = text.rfind("]")
    try:
        return _path_of(tomllib.loads(text[:end + 1]))
    except tomllib.TOMLDecodeError:
        return None


def _key_path(text):
    for m in re.finditer("=", text):
        try:
            return _path_of(tomllib.loads(text[:m.start()] + "= 0"))
        except tomllib.TOMLDecodeError:
            continue
    return None
