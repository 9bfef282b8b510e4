"""The counters of a whole program's report file: read from its counts file, or from the JSON.

Stage: report (whole programs). Takes one raw report file's JSON (gmprof/program/records.py) and
gives each of its counter vectors (a group's area, shared counters, sites' largest launch and
warp statistics; each device object's per-element sums) as int64 numpy arrays. The host runtime
(runtime_cu/host/gmprof_host_counts.h) writes them as raw little-endian words into a counts file
beside the report file (`r.json` -> `r.counts`), which the JSON names in `counts_file` (its name
in the JSON's directory, the run's id, its length); an entry is then

    {"dtype": "u4" | "u8", "offset": BYTES, "n": N}    N words at that offset of the counts file
    {"dtype": "zero", "n": N}                          N zeros (nothing written)
    {"dtype": "packed", "n": N, "chunk": C, "widths": "1204...", "offset": BYTES, "bytes": B}
    {"dtype": "u4" | "u8", "data": BASE64}             older builds: the words inside the JSON

A packed vector (counts file version 2: a device object's per-element totals, narrowed per chunk
on the device, runtime_cu/host/gmprof_host_pack.h) is cut into chunks of C elements (the last
may be short); `widths` has one digit a chunk, the bytes each of its elements takes (0: every
element zero, nothing stored; 1, 2, 4 or 8, little-endian unsigned), and the B bytes at OFFSET
are the non-zero chunks one after another. Version 1 files have no packed vectors.

A counts file that is missing, shorter than the JSON says, or of another run is a plain error
naming the report file, before anything is decoded.
"""
from __future__ import annotations

import base64
import binascii
from pathlib import Path

import numpy as np

from gmprof.errors import InputError, Location

MAGIC = b"gmprof.counts/2\n"
MAGICS = (b"gmprof.counts/1\n", MAGIC)  # the versions this decoder reads
HEADER_BYTES = 32  # MAGIC, then the run's id in 16 hex digits
DTYPES = {"u4": np.dtype("<u4"), "u8": np.dtype("<u8")}


def counts_path(report) -> str:
    """The counts file the host runtime writes beside a report file (gmprof_host_counts.h
    path_for): `r.json` -> `r.counts`, a name without `.json` gets `.counts` appended."""
    report = str(report)
    return report[:-5] + ".counts" if report.endswith(".json") and len(report) > 5 \
        else report + ".counts"


def without_counts_files(paths) -> list:
    """`paths` less the counts files of report files among them (a glob such as
    `gmprof-report-*` matches both)."""
    import os

    paths = [str(p) for p in paths]
    partners = {os.path.normpath(counts_path(p)) for p in paths}
    return [p for p in paths if os.path.normpath(p) not in partners]


class Counts:
    """The counter vectors of one report file (`path`, its JSON `data`)."""

    def __init__(self, path, data: dict):
        self.report = str(path)
        self.path = None
        self.bytes = 0
        ref = data.get("counts_file")
        if ref is None:  # an older build's file: every vector is inside the JSON
            return
        if not (isinstance(ref, dict) and isinstance(ref.get("name"), str)
                and isinstance(ref.get("id"), str) and isinstance(ref.get("bytes"), int)):
            raise self._error(f"its counts_file entry is malformed ({ref!r})")
        self.path = Path(path).parent / ref["name"]
        self.bytes = ref["bytes"]
        if not data.get("groups"):
            return  # nothing to read: the report file is complete without it
        renamed = Path(counts_path(path))
        if not self.path.exists() and renamed.exists():
            self.path = renamed  # both files renamed alike (r.json, r.counts -> s.json, s.counts)
        try:
            with open(self.path, "rb") as fh:
                header = fh.read(HEADER_BYTES)
                size = fh.seek(0, 2)
        except FileNotFoundError:
            raise self._error(f"its counts file {self.path} is missing (written beside the "
                              "report file at exit; the two files travel together)") from None
        except OSError as exc:
            raise self._error(f"cannot read its counts file {self.path}: {exc.strerror}") \
                from None
        if header[:len(MAGIC)] not in MAGICS:
            raise self._error(f"its counts file {self.path} is not a gmprof counts file")
        if header[len(MAGIC):] != ref["id"].encode("ascii", "replace"):
            raise self._error(f"its counts file {self.path} belongs to another run (id "
                              f"{header[len(MAGIC):].decode('ascii', 'replace')}, the report "
                              f"file's {ref['id']}): copy the two files together")
        if size < self.bytes:
            raise self._error(f"its counts file {self.path} is shorter than the {self.bytes:,} "
                              f"bytes the report file expects ({size:,} bytes: truncated?)")

    def _error(self, message: str) -> InputError:
        return InputError(message, Location(self.report, 0, 0), kind="input")

    def array(self, entry: dict) -> np.ndarray:
        """One counter vector as int64 (a u8 word past 2^63 wraps, as the decoder expects)."""
        kind = entry.get("dtype")
        n = int(entry.get("n", 0))
        if kind == "zero":
            return np.zeros(n, np.int64)
        if kind == "packed":
            return self._packed(entry, n)
        if kind not in DTYPES:
            raise self._error(f"a counter vector of unknown dtype {kind!r}")
        dtype = DTYPES[kind]
        if "data" in entry:  # an older build's base64
            try:
                raw = base64.b64decode(entry["data"], validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise self._error("a counter vector whose data is not base64") from None
            return np.frombuffer(raw, dtype).astype(np.int64)
        offset = int(entry.get("offset", -1))
        if self.path is None or offset < HEADER_BYTES or \
                offset + n * dtype.itemsize > self.bytes:
            raise self._error(f"a counter vector ({n} {kind} at byte {offset}) lies outside "
                              "its counts file")
        words = np.fromfile(self.path, dtype, count=n, offset=offset)
        if len(words) != n:
            raise self._error(f"its counts file {self.path} is shorter than the {self.bytes:,} "
                              "bytes the report file expects (truncated?)")
        return words.view("<i8") if kind == "u8" else words.astype(np.int64)

    def _packed(self, entry: dict, n: int) -> np.ndarray:
        """A packed vector: each run of chunks of one width read as one numpy view."""
        chunk, widths = entry.get("chunk"), entry.get("widths")
        offset, size = int(entry.get("offset", -1)), int(entry.get("bytes", -1))
        if not (isinstance(chunk, int) and chunk > 0 and isinstance(widths, str)
                and len(widths) == -(-n // chunk) and set(widths) <= set("01248")):
            raise self._error(f"a packed counter vector is malformed (n {n}, chunk {chunk!r}, "
                              f"{len(widths) if isinstance(widths, str) else widths!r} widths)")
        w = np.frombuffer(widths.encode("ascii"), np.uint8) - ord("0")
        sizes = w.astype(np.int64) * chunk
        if len(sizes):
            sizes[-1] = int(w[-1]) * (n - chunk * (len(w) - 1))  # the last chunk may be short
        if self.path is None or offset < HEADER_BYTES or size != int(sizes.sum()) or \
                offset + size > self.bytes:
            raise self._error(f"a packed counter vector ({n} counts, {size} bytes at byte "
                              f"{offset}) lies outside its counts file or disagrees with its "
                              "widths")
        raw = np.fromfile(self.path, np.uint8, count=size, offset=offset)
        if len(raw) != size:
            raise self._error(f"its counts file {self.path} is shorter than the {self.bytes:,} "
                              "bytes the report file expects (truncated?)")
        out = np.zeros(n, np.int64)
        # runs of chunks of one width: [starts[k], starts[k + 1])
        starts = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])
        ends = np.r_[starts[1:], len(w)]
        at = np.r_[0, np.cumsum(sizes)]
        for a, b in zip(starts.tolist(), ends.tolist()):
            width = int(w[a])
            if width:
                words = raw[at[a]:at[b]].view(f"<u{width}")
                out[a * chunk:min(b * chunk, n)] = words.view("<i8") if width == 8 else words
        return out


__all__ = ["Counts", "MAGIC", "HEADER_BYTES", "counts_path", "without_counts_files"]
