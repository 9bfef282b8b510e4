"""Errors and warnings: the one located error type, its kinds, and warnings as values.

A user's mistake (bad input, a syntax error in a kernel, wrong launch arguments) is a GmprofError:
rendered `file:line:col: error: message`, then the source line and a caret; the CLI prints it and
exits with the error's `exit_status`, never with a traceback. Each error has a `kind`, a short tag
that tests and tools match instead of the text (as pyflakes' message classes do); the classes
below group the kinds, and where Python's convention names a built-in exception for the mistake
(a wrong type, a bad value) the class is that exception too, so `except TypeError` still works:

    kind                     class                exit  what
    syntax, preprocess, no-kernel, kernel-not-parsed, bad-kernel-name, no-compiler, no-gpu,
    unknown-size, no-variable, too-many-objects
                             GmprofError          2     bad source, a kernel that is missing or
                                                        does not parse, anything else the user
                                                        must change before gmprof can run
                                                        (each made with its kind=; 'error', the
                                                        default, is made nowhere)
    bad-option               OptionError          2     an option or keyword out of its range
    bad-argument             ArgumentError        2     a launch argument of the wrong type
    bad-argument-value       ArgumentValueError   2     a launch argument of the right type whose
                                                        value does not fit or cannot be used
    compile                  CompileError         2     the kernel does not compile (nvcc/g++)
    input / output           InputError/OutputError 2   a file that cannot be read / written
    cache                    CacheError           2     the compiled-module cache cannot be used
    bad-expectation          report.expect.ExpectError 2  a `gmprof check` file that cannot be
                                                        checked (docs/workflows/assertions.md)
    outputs-differ, out-of-range, deadlock, livelock, invalid-address, stack-overflow,
    arithmetic, illegal-instruction, trap, assert, timeout
                             CheckFailed          1     the kernel ran and a check failed

docs/errors.md lists every kind. Warnings (a function left uninstrumented, an access that could
not be classified, a divergent barrier) are Diagnostic values returned to the caller, which
decides whether to print them. Internal errors stay ordinary exceptions and keep their traceback.
"""
from __future__ import annotations

from dataclasses import dataclass

# exit statuses of the command line (docs/errors.md)
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_TERMINATED = 143  # 128 + SIGTERM


@dataclass(frozen=True)
class Location:
    """A point in a source file. line and col are 1-based; col counts characters. Line 0 is
    the file as a whole (the message says where in it: a saved run's JSON pointer)."""

    file: str
    line: int
    col: int
    source_line: str | None = None  # the text of that line, for the caret display

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line else str(self.file)


def _render(kind: str, message: str, location: Location | None) -> str:
    if location is None:
        return f"gmprof: {kind}: {message}"
    text = f"{location}: {kind}: {message}"
    if location.source_line is not None:
        line = location.source_line.rstrip("\n").expandtabs(1)
        text += f"\n{line}\n{' ' * max(location.col - 1, 0)}^"
    return text


class GmprofError(Exception):
    """A user-facing error, located where possible. `kind` is a short tag (see the module
    docstring); a subclass sets its default, an instance may narrow it (`kind=`)."""

    kind = "error"
    exit_status = EXIT_USAGE

    def __init__(self, message: str, location: Location | None = None, *,
                 kind: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        if kind is not None:
            self.kind = kind

    def render(self) -> str:
        return _render("error", self.message, self.location)

    def __str__(self) -> str:
        return self.render()


class OptionError(GmprofError, ValueError):
    """A command-line option or API keyword (grid, block, repeat, mode, timeout...) with a value
    out of its range; the message names the option."""

    kind = "bad-option"


class ArgumentError(GmprofError, TypeError):
    """A kernel launch argument of the wrong type (an object where an array is needed, an array
    for a scalar, a dtype that is not the parameter's); the message names the parameter."""

    kind = "bad-argument"


class ArgumentValueError(GmprofError, ValueError):
    """A launch argument of an acceptable type whose value cannot be used (too large for the
    parameter's C type, a non-finite value for an integer, an array too big to allocate)."""

    kind = "bad-argument-value"


class CompileError(GmprofError):
    """The kernel does not compile (g++ on the CPU path, NVRTC on the GPU); located at the
    compiler's line. `compiler_output` holds the full output."""

    kind = "compile"
    compiler_output = ""


class InputError(GmprofError):
    kind = "input"


class OutputError(GmprofError):
    """An output file that cannot or must not be written (a directory, an input of the same
    command, a missing directory, no permission); nothing was written."""

    kind = "output"


class CacheError(GmprofError):
    kind = "cache"


class CheckFailed(GmprofError):
    """The kernel ran and a check failed: it faulted, deadlocked, timed out, accessed memory out
    of range, or its instrumented run's outputs differ from the native run's. Exit status 1."""

    kind = "check"
    exit_status = EXIT_CHECK_FAILED


class KernelFault(CheckFailed):
    """A launch that did not complete; kind is deadlock, livelock, invalid-address,
    stack-overflow, arithmetic, illegal-instruction, trap, assert or bad-launch."""

    kind = "fault"


class KernelTimeout(KernelFault):
    kind = "timeout"


# kinds of Diagnostic that are failed checks (the CLI exits with status 1 when a report has one)
FAILED_CHECK_KINDS = frozenset({"outputs-differ", "out-of-range"})


class CheckWarning(UserWarning):
    """A failed check (outputs that differ, an access out of range), raised as a Python
    warning by the API (gmprof.profile, RawKernel calls): `warnings.simplefilter("error",
    gmprof.CheckWarning)` makes it an exception. `diagnostic` is the Diagnostic."""

    def __init__(self, diagnostic):
        super().__init__(diagnostic.render())
        self.diagnostic = diagnostic


@dataclass(frozen=True)
class Diagnostic:
    """A warning as a value. kind is a short machine-readable tag (tests assert on it).
    Kinds in FAILED_CHECK_KINDS render as errors: the run completed, and a check failed."""

    kind: str
    message: str
    location: Location | None = None

    @property
    def failed_check(self) -> bool:
        return self.kind in FAILED_CHECK_KINDS

    def render(self) -> str:
        return _render("error" if self.failed_check else "warning", self.message, self.location)

    def __str__(self) -> str:
        return self.render()
