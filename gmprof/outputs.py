"""A command's output files: checked before any work, written whole, all of them or none.

Stage: command-line support (the library itself writes no files). Input: the files a command
will write (reserved with the option that named them, before any work is done) and the files it
read; then each output's text. Output: the files in place, or an OutputError with nothing
created, changed or deleted.

    outs = Outputs(inputs=[args.file])
    csv = outs.reserve(args.csv, "--csv")        # checked now: a bad name fails before the run
    ...
    outs.put(csv, text)
    outs.commit()                                # every output, or none

Rules (those of compilers and of tools that write reports):
- `-` means standard output (where the option allows it); an empty name, a directory, a missing
  directory, a name given twice, or a file the command reads (the source, an included header, an
  input array) is refused before anything runs.
- A regular file is written to a temporary beside it and renamed into place only once every
  output of the command has been written, so a failure (a full disk, Ctrl-C, a second output
  that cannot be written) leaves the old file as it was. A symbolic link is followed: the file it
  names is replaced, the link stays.
- A special file (`/dev/null`, a FIFO, a terminal, `/dev/stdout`) is written in place, as `cc -o
  /dev/null` does: it is never replaced by a regular file.
- A new file gets mode 0666 less the umask, as files from `cc -o` and shell redirections do; a
  replaced file keeps its mode.
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from dataclasses import dataclass

from .errors import OutputError

STDOUT = "-"


def _umask() -> int:
    # os.umask can only be read by setting it; nothing else runs between the two calls
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


@dataclass
class _Output:
    name: str            # as the user gave it (for messages)
    option: str          # the option that named it
    kind: str            # 'stdout', 'special' or 'regular'
    target: str          # the path written (a symbolic link resolved)
    data: bytes | None = None
    mode: int | None = None  # a replaced file's mode


class Outputs:
    """The outputs of one command. See the module docstring."""

    def __init__(self, inputs=()):
        self.inputs = [str(p) for p in inputs if p is not None]
        self._outputs: list[_Output] = []

    def reserve(self, path, option: str = "-o", *, allow_stdout: bool = True,
                regular_only: bool = False) -> _Output | None:
        """Check an output's name now; None for None (the option was not given)."""
        if path is None:
            return None
        name = os.fspath(path)
        what = f"{option} {name!r}" if name else f"{option} ''"
        if name == "":
            raise OutputError(f"{what}: an empty file name")
        if "\0" in name:
            raise OutputError(f"{what}: a file name cannot hold a NUL character")
        if name == STDOUT:
            if not allow_stdout:
                raise OutputError(f"{what}: this output needs a file name (it is written "
                                  "together with another file)")
            if any(o.kind == "stdout" for o in self._outputs):
                raise OutputError(f"{what}: standard output is already taken by "
                                  f"{next(o.option for o in self._outputs if o.kind == 'stdout')}")
            out = _Output(name, option, "stdout", name)
            self._outputs.append(out)
            return out
        try:
            st = os.stat(name)  # follows symbolic links
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise OutputError(f"{what}: cannot be written: {e.strerror}") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise OutputError(f"{what} is a directory; give a file name")
        # /dev/stdout and /proc/self/fd/N name a descriptor's file: written in place even when it
        # is a regular file (replacing it would leave the descriptor on the old one)
        magic = os.path.abspath(name).startswith(("/dev/", "/proc/"))
        if st is not None and (not stat.S_ISREG(st.st_mode) or magic):
            if stat.S_ISSOCK(st.st_mode):
                raise OutputError(f"{what} is a socket")
            if regular_only:
                raise OutputError(f"{what} is not a regular file (a device, FIFO or terminal); "
                                  "this command writes a pair of files: give a file name")
            kind, target, mode = "special", name, None
        else:
            # a link is followed: the file it names is replaced and the link stays
            target = os.path.realpath(name) if os.path.islink(name) else name
            directory = os.path.dirname(target) or "."
            if not os.path.isdir(directory):
                raise OutputError(f"{what}: no such directory {directory!r}")
            if not os.access(directory, os.W_OK | os.X_OK):
                raise OutputError(f"{what}: the directory {directory!r} is not writable")
            kind, mode = "regular", (stat.S_IMODE(st.st_mode) if st is not None else None)
        for src in self.inputs:
            if _same_file(target, src):
                raise OutputError(f"{what} is an input of this command ({src}); refusing to "
                                  "overwrite it: give another output name")
        for other in self._outputs:
            if other.kind != "stdout" and _same_file(target, other.target) and \
                    (kind == "regular" or other.kind == "regular"):
                raise OutputError(f"{what} and {other.option} {other.name!r} name the same file")
        out = _Output(name, option, kind, target, mode=mode)
        self._outputs.append(out)
        return out

    def put(self, out: _Output | None, data: str | bytes) -> None:
        if out is None:
            return
        # surrogateescape: a source's bytes that are not UTF-8 (in its comments) go back as
        # they were read
        out.data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) \
            else bytes(data)

    def commit(self) -> None:
        """Write every output that was given data; on any failure none is changed."""
        todo = [o for o in self._outputs if o.data is not None]
        temps: list[tuple[_Output, str]] = []
        renamed: list[tuple[_Output, str | None]] = []  # (output, backup of the old file)
        try:
            for o in todo:
                if o.kind == "regular":
                    temps.append((o, self._write_temporary(o)))
            for o in todo:
                if o.kind == "special":
                    self._write_in_place(o)
            for o, tmp in temps:
                backup = self._backup(o.target)
                try:
                    os.replace(tmp, o.target)
                except OSError as e:
                    if backup:
                        os.unlink(backup)
                    raise OutputError(f"{o.option} {o.name!r}: cannot be written: "
                                      f"{e.strerror}") from None
                renamed.append((o, backup))
        except BaseException:
            for o, backup in reversed(renamed):  # put the old files back
                try:
                    if backup:
                        os.replace(backup, o.target)
                    else:
                        os.unlink(o.target)
                except OSError:
                    pass
            for _, tmp in temps:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            raise
        for _, backup in renamed:
            if backup:
                try:
                    os.unlink(backup)
                except OSError:
                    pass
        for o in todo:
            if o.kind == "stdout":
                out = sys.stdout
                text = o.data.decode(errors="replace")
                out.write(text if text.endswith("\n") or not text else text + "\n")
                out.flush()

    # -- helpers -----------------------------------------------------------------------
    def _write_temporary(self, o: _Output) -> str:
        directory = os.path.dirname(o.target) or "."
        base = os.path.basename(o.target)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".gmprof-tmp", dir=directory)
        except OSError as e:
            raise OutputError(f"{o.option} {o.name!r}: cannot be written: {e.strerror}") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(o.data)
                os.fchmod(fh.fileno(), o.mode if o.mode is not None else 0o666 & ~_umask())
        except BaseException as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(e, OSError):
                raise OutputError(f"{o.option} {o.name!r}: cannot be written: "
                                  f"{e.strerror}") from None
            raise
        return tmp

    def _write_in_place(self, o: _Output) -> None:
        try:
            # no O_CREAT and no O_TRUNC: a device or FIFO is opened as it is
            fd = os.open(o.target, os.O_WRONLY)
            with os.fdopen(fd, "wb") as fh:
                fh.write(o.data)
        except OSError as e:
            raise OutputError(f"{o.option} {o.name!r}: cannot be written: {e.strerror}") from None

    @staticmethod
    def _backup(target: str) -> str | None:
        """A hard link to the file about to be replaced, so it can be put back if a later
        output fails; None where there is no old file (or links are not supported)."""
        if not os.path.exists(target):
            return None
        directory = os.path.dirname(target) or "."
        for _ in range(3):
            name = os.path.join(directory, f".{os.path.basename(target)}."
                                           f"{os.urandom(4).hex()}.gmprof-bak")
            try:
                os.link(target, name)
                return name
            except FileExistsError:
                continue
            except OSError:
                return None
        return None


def write_outputs(files: dict, inputs=()) -> None:
    """Write {path: text} as one command's outputs (see Outputs)."""
    outs = Outputs(inputs)
    reserved = [(outs.reserve(path, "output"), data) for path, data in files.items()]
    for out, data in reserved:
        outs.put(out, data)
    outs.commit()


def source_inputs(tu, extra=()) -> list[str]:
    """The files a command read: the translation unit's files (the main file and every local
    header it included) and any others (input arrays)."""
    out = [str(f.path) for f in getattr(tu, "files", []) if getattr(f, "path", None)]
    out.extend(str(p) for p in extra if p)
    return out


__all__ = ["Outputs", "write_outputs", "source_inputs", "STDOUT"]
