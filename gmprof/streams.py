"""Standard output and error while a command runs: a reader may close them, and a document on
standard output is not mixed with what the kernels print.

Stage: command-line support.

A reader may close the pipe (`gmprof profile S -o run.json | head -1`): while a command runs,
sys.stdout and sys.stderr are wrapped so that a write to a pipe whose reader has gone
(BrokenPipeError) is dropped instead of raised: the command goes on, writes the files it was
asked for and exits with its own status, quietly (as `yes | head` does). Raising instead would
stop the command before its outputs are committed; rich's Console would even exit with status
1 itself (Console.on_broken_pipe), before gmprof's handler runs. Once a stream's reader has
gone, its descriptor is pointed at /dev/null, so the interpreter's last flush at exit cannot
print "Exception ignored ...".

    with reader_may_close():
        status = args.run(args)

A document on standard output (`gmprof profile ... --json | jq`): what the kernels print
(printf, written to file descriptor 1 at the end of each launch by the CPU backend, at
synchronisation by CUDA) goes to standard error while they run, as `gmprof run --json` sends
the program's own output there.

    with program_output_to_stderr(json_on_stdout):
        run the kernels
"""
from __future__ import annotations

import contextlib
import os
import sys


class _ReaderMayClose:
    """A text stream that drops what it cannot write once its reader has gone."""

    def __init__(self, stream):
        self._stream = stream
        self.reader_gone = False

    def _gone(self) -> None:
        self.reader_gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)

    def write(self, text):
        if self.reader_gone:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        if self.reader_gone:
            with contextlib.suppress(OSError, ValueError):
                self._stream.flush()  # the buffer goes to /dev/null
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()
            with contextlib.suppress(OSError, ValueError):
                self._stream.flush()

    def __getattr__(self, name):  # isatty, fileno, encoding, buffer...: the stream's own
        return getattr(self._stream, name)


@contextlib.contextmanager
def reader_may_close():
    """Wrap sys.stdout and sys.stderr for the duration (see the module docstring)."""
    saved = sys.stdout, sys.stderr
    wrapped = [_ReaderMayClose(s) if s is not None else None for s in saved]
    sys.stdout, sys.stderr = wrapped
    try:
        yield
    finally:
        for w in wrapped:
            if w is not None:
                w.flush()
        sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def program_output_to_stderr(when: bool = True):
    """While the block runs, file descriptor 1 is standard error (see the module docstring)."""
    if not when:
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no standard output or error to speak of: nothing to keep apart
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stdout.flush()  # what Python code printed meanwhile goes where the kernels' went
        os.dup2(saved, 1)
        os.close(saved)


__all__ = ["reader_may_close", "program_output_to_stderr"]
