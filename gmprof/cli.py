"""Command-line interface: argument parsing and output only; the library never exits.

    gmprof parse|analyze|instrument|profile FILE.cu ...           (cli_commands.py)
    gmprof compare FILE.cu ...                                    (cli_compare.py)
    gmprof advise FILE.cu|samples/NAME ...                        (cli_advise.py)
    gmprof report|diff RUN.json ...                              (cli_report.py)
    gmprof check EXPECT.toml                                     (cli_check.py)
    gmprof bench ...                                             (bench.py)
    gmprof nvcc|run ...                                          (program/cli.py)
    gmprof cache --info|--clean                                  (cli_cache.py)

A GmprofError (a user's mistake) is printed as `file:line:col: error: ...` with the source line
and a caret, never with a traceback. Exit statuses (docs/errors.md): 0 success, 1 a failed check
(outputs that differ, an out-of-range access, a kernel fault or timeout; `--error-exitcode`
changes it), 2 a usage error (a bad option, bad source, a kernel that does not compile, a file
that cannot be read or written), 3 an internal error (with its traceback), 130 and 143 when
stopped by SIGINT or SIGTERM. Output files go through gmprof.outputs: checked before any work,
written whole, all of a command's or none, even when the reader of standard output has gone
(gmprof.streams); the stages run under a recursion limit that covers the deepest tree the
frontend accepts (gmprof.frontend.nesting).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import traceback

from . import bench, cli_advise, cli_cache, cli_check, cli_commands, cli_compare, cli_report, timing
from .argparser import Parser
from .frontend.nesting import deep_recursion
from .program import cli as program_cli
from .streams import reader_may_close
from .errors import (EXIT_CHECK_FAILED, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED,
                     EXIT_USAGE, CheckFailed, GmprofError)
from .version import __version__


DESCRIPTION = """\
Fine-grained memory profiling of CUDA kernels (after GMProf): how many times each element of
each shared-memory and device-memory array was read and written, per array, access site and
source line, with every count labelled exact, thresholded, sampled or approximate. Kernels run
on a GPU (CuPy) or, without one, on gmprof's CPU backend."""

EXAMPLES = """\
examples:
  gmprof profile samples/matmul_tiled                  a sample: its kernels, sizes and check
  gmprof profile k.cu -k saxpy --grid 4 --block 256 --arg n=1024 \\
      --arg x=float32[1024]:random --arg y=float32[1024]:random
  gmprof profile samples/em_v1 --json > v1.json        save a run; then:
  gmprof report v1.json --html v1.html                 re-render or convert it
  gmprof check expect.toml                             assert bounds on the counts (CI)
  make NVCC="gmprof nvcc" && ./app                     a whole program, built through gmprof;
  gmprof report gmprof-report-*.json                   its report files, merged
  gmprof COMMAND --help                                a command's options

documentation: README.md and docs/ (report.md, errors.md, whole-programs.md)"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="gmprof", description=DESCRIPTION, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gmprof {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    cli_commands.register(sub)
    cli_compare.register(sub)
    cli_advise.register(sub)  # after profile: advise takes its arguments
    cli_report.register(sub)
    cli_check.register(sub)
    bench.register(sub)
    cli_cache.register(sub)
    program_cli.register(sub)
    return parser


class Terminated(BaseException):
    """SIGTERM arrived: unwind (temporaries are removed on the way) and exit with 143."""


@contextlib.contextmanager
def _sigterm_unwinds():
    """While a command runs, SIGTERM raises Terminated instead of killing the process at once,
    so that temporary files are removed and no output is left half-written (a background job
    stopped with `kill`). Only where SIGTERM had its default action, and on the main thread."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def on_term(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    timing.mark_startup()
    with reader_may_close():  # `gmprof ... | head`: outputs are still written, exit quietly
        return _parse_and_run(argv)


def _parse_and_run(argv) -> int:
    parser = build_parser()
    try:
        from .program.cli import raw_command  # nvcc and run take their arguments raw

        args = raw_command(sys.argv[1:] if argv is None else list(argv)) or \
            parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help (0), or a usage error it has printed (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the run document records it
    return _run(args)


def _run(args) -> int:
    """Run the command: its exit status, whatever it raised turned into one."""
    try:
        # the passes, the rewriter and the runtime walk trees up to MAX_NESTING deep
        with _sigterm_unwinds(), deep_recursion():
            return args.run(args)
    except GmprofError as exc:
        print(exc.render(), file=sys.stderr)
        status = (getattr(args, "error_exitcode", EXIT_CHECK_FAILED)
                  if isinstance(exc, CheckFailed) else exc.exit_status)
        if getattr(exc, "kernel_still_running", False):
            # a GPU kernel past --timeout cannot be stopped from the host; the interpreter's
            # exit would wait for it in CUDA's clean-up, ending the process ends it
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(status)
        return status
    except KeyboardInterrupt:
        print("gmprof: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("gmprof: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        # a write that went around sys.stdout's guard (streams.py) to a reader that has gone
        # (`gmprof ... | head`): not an error of ours
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        return 0
    except MemoryError:
        print("gmprof: error: out of memory (a problem size too large for this machine?)",
              file=sys.stderr)
        return EXIT_USAGE
    except Exception:
        traceback.print_exc()
        print("gmprof: internal error: this is a bug in gmprof, not in your input; please "
              "report it with the traceback above", file=sys.stderr)
        return EXIT_INTERNAL


def nvcc_main() -> int:
    """The `gmprof-nvcc` executable: `gmprof nvcc` as one program, for build systems that take
    a compiler path only (CMake: `gmprof nvcc --gmprof-cmake`, docs/whole-programs.md)."""
    return main(["nvcc", *sys.argv[1:]])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
