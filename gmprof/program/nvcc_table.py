"""nvcc's options, as data: each option's long name, short name and whether it takes a value.

Stage: whole programs, build. Read from `nvcc --help` of CUDA 13.0 (V13.0.88): one row per
option line, `--long-name <value>  (-short)`; an option whose line shows a value (`<file>`,
`{true|false}`, `[...]`) takes one. Regenerate with `python3 -m gmprof.program.nvcc_table`
(it prints the rows from the nvcc on PATH) when nvcc gains options. `gmprof nvcc` and `gmprof
run` refuse an option that neither gmprof nor this table knows, as nvcc would
(gmprof/program/nvcc_args.py).

nvcc writes a value as the next argument or after `=` (`-arch sm_80`, `-arch=sm_80`,
`--gpu-architecture=sm_80`); the one-letter short options that take one also glue it
(`-I.`, `-DX=1`, `-lm`, `-O3`); see GLUED.
"""
from __future__ import annotations

# (long name, short name or None, takes a value)
OPTIONS = (
    ('--cuda', '-cuda', False),
    ('--cubin', '-cubin', False),
    ('--fatbin', '-fatbin', False),
    ('--ptx', '-ptx', False),
    ('--optix-ir', '-optix-ir', False),
    ('--ltoir', '-ltoir', False),
    ('--preprocess', '-E', False),
    ('--generate-dependencies', '-M', False),
    ('--generate-nonsystem-dependencies', '-MM', False),
    ('--generate-dependencies-with-compile', '-MD', False),
    ('--generate-nonsystem-dependencies-with-compile', '-MMD', False),
    ('--dependency-output', '-MF', True),  # its help shows no <file>; it takes one
    ('--generate-dependency-targets', '-MP', False),
    ('--compile', '-c', False),
    ('--device-c', '-dc', False),
    ('--device-w', '-dw', False),
    ('--device-link', '-dlink', False),
    ('--link', '-link', False),
    ('--lib', '-lib', False),
    ('--run', '-run', False),
    ('--output-file', '-o', True),
    ('--pre-include', '-include', True),
    ('--objdir-as-tempdir', '-objtemp', False),
    ('--library', '-l', True),
    ('--define-macro', '-D', True),
    ('--undefine-macro', '-U', True),
    ('--include-path', '-I', True),
    ('--system-include', '-isystem', True),
    ('--library-path', '-L', True),
    ('--output-directory', '-odir', True),
    ('--compiler-bindir', '-ccbin', True),
    ('--allow-unsupported-compiler', '-allow-unsupported-compiler', False),
    ('--archiver-binary', '-arbin', True),
    ('--cudart', '-cudart', True),
    ('--cudadevrt', '-cudadevrt', True),
    ('--libdevice-directory', '-ldir', True),
    ('--target-directory', '-target-dir', True),
    ('--use-local-env', '-use-local-env', False),
    ('--force-cl-env-setup', '-force-cl-env-setup', False),
    ('--profile', '-pg', False),
    ('--debug', '-g', False),
    ('--device-debug', '-G', False),
    ('--generate-line-info', '-lineinfo', False),
    ('--optimization-info', '-opt-info', True),
    ('--optimize', '-O', True),
    ('--Ofast-compile', '-Ofc', True),
    ('--dopt', '-dopt', True),
    ('--dlink-time-opt', '-dlto', False),
    ('--lto', '-lto', False),
    ('--gen-opt-lto', '-gen-opt-lto', False),
    ('--ftemplate-backtrace-limit', '-ftemplate-backtrace-limit', True),
    ('--ftemplate-depth', '-ftemplate-depth', True),
    ('--no-exceptions', '-noeh', False),
    ('--shared', '-shared', False),
    ('--x', '-x', True),
    ('--std', '-std', True),
    ('--no-host-device-initializer-list', '-nohdinitlist', False),
    ('--no-host-device-move-forward', '-nohdmoveforward', False),
    ('--expt-relaxed-constexpr', '-expt-relaxed-constexpr', False),
    ('--extended-lambda', '-extended-lambda', False),
    ('--expt-extended-lambda', '-expt-extended-lambda', False),
    ('--machine', '-m', True),
    ('--m64', '-m64', False),
    ('--compiler-options', '-Xcompiler', True),
    ('--linker-options', '-Xlinker', True),
    ('--archive-options', '-Xarchive', True),
    ('--ptxas-options', '-Xptxas', True),
    ('--nvlink-options', '-Xnvlink', True),
    ('--static-global-template-stub', '-static-global-template-stub', True),
    ('--device-entity-has-hidden-visibility', '-device-entity-has-hidden-visibility', True),
    ('--forward-unknown-to-host-compiler', '-forward-unknown-to-host-compiler', False),
    ('--forward-unknown-to-host-linker', '-forward-unknown-to-host-linker', False),
    ('--forward-unknown-opts', '-forward-unknown-opts', False),
    ('--dont-use-profile', '-noprof', False),
    ('--dryrun', '-dryrun', False),
    ('--verbose', '-v', False),
    ('--threads', '-t', True),
    ('--split-compile', '-split-compile', True),
    ('--split-compile-extended', '-split-compile-extended', True),
    ('--fdevice-syntax-only', '-fdevice-syntax-only', False),
    ('--fdevice-time-trace', '-fdevice-time-trace', True),
    ('--keep', '-keep', False),
    ('--keep-dir', '-keep-dir', True),
    ('--save-temps', '-save-temps', False),
    ('--clean-targets', '-clean', False),
    ('--time', '-time', True),
    ('--run-args', '-run-args', True),
    ('--input-drive-prefix', '-idp', True),
    ('--dependency-drive-prefix', '-ddp', True),
    ('--drive-prefix', '-dp', True),
    ('--dependency-target-name', '-MT', True),
    ('--no-align-double', None, False),
    ('--no-device-link', '-nodlink', False),
    ('--gpu-architecture', '-arch', True),
    ('--gpu-code', '-code', True),
    ('--generate-code', '-gencode', True),
    ('--relocatable-device-code', '-rdc', True),
    ('--entries', '-e', True),
    ('--maxrregcount', '-maxrregcount', True),
    ('--use_fast_math', '-use_fast_math', False),
    ('--ftz', '-ftz', True),
    ('--prec-div', '-prec-div', True),
    ('--prec-sqrt', '-prec-sqrt', True),
    ('--fmad', '-fmad', True),
    ('--extra-device-vectorization', '-extra-device-vectorization', False),
    ('--default-stream', '-default-stream', True),
    ('--disable-warnings', '-w', False),
    ('--keep-device-functions', '-keep-device-functions', False),
    ('--source-in-ptx', '-src-in-ptx', False),
    ('--restrict', '-restrict', False),
    ('--Wreorder', '-Wreorder', False),
    ('--Wdefault-stream-launch', '-Wdefault-stream-launch', False),
    ('--Wmissing-launch-bounds', '-Wmissing-launch-bounds', False),
    ('--Wext-lambda-captures-this', '-Wext-lambda-captures-this', False),
    ('--Wno-deprecated-declarations', '-Wno-deprecated-declarations', False),
    ('--Wno-deprecated-gpu-targets', '-Wno-deprecated-gpu-targets', False),
    ('--Werror', '-Werror', True),
    ('--resource-usage', '-res-usage', False),
    ('--extensible-whole-program', '-ewp', False),
    ('--no-compress', '-no-compress', False),
    ('--qpp-config', '-qpp-config', False),
    ('--compile-as-tools-patch', '-astoolspatch', False),
    ('--list-gpu-code', '-code-ls', False),
    ('--list-gpu-arch', '-arch-ls', False),
    ('--display-error-number', '-err-no', False),
    ('--no-display-error-number', '-no-err-no', False),
    ('--diag-error', '-diag-error', True),
    ('--diag-suppress', '-diag-suppress', True),
    ('--diag-warn', '-diag-warn', True),
    ('--host-linker-script', '-hls', True),
    ('--augment-host-linker-script', '-aug-hls', False),
    ('--relocatable-link', '-r', False),
    ('--brief-diagnostics', '-brief-diag', True),
    ('--jump-table-density', '-jtd', True),
    ('--relocatable-ptx', '-reloc-ptx', False),
    ('--device-stack-protector', '-device-stack-protector', True),
    ('--compress-mode', '-compress-mode', True),
    ('--frandom-seed', '-frandom-seed', True),
    ('--sanitize', '-sanitize', True),
    ('--jobserver', '-jobserver', False),
    ('--help', '-h', False),
    ('--version', '-V', False),
    ('--options-file', '-optf', True),
)

# short options whose value may follow without a space or `=` (nvcc accepts `-I.`, `-lm`,
# `-O3`, `-t2`; it refuses `-ok.o`, `-xcu`, `-archsm_80`)
GLUED = ("-I", "-D", "-U", "-L", "-l", "-O", "-t", "-m")


def by_name() -> dict:
    """{spelling: (long name, takes a value)} for every long and short spelling."""
    out = {}
    for long, short, value in OPTIONS:
        out[long] = (long, value)
        if short:
            out[short] = (long, value)
    return out


def _rows_from_help(text: str) -> list:
    import re

    pattern = re.compile(r"^(--[\w+-]+)(\s+(?:<[^>]*>|\{[^}]*\}|\[[^\]]*\]|\w+))?(?:,\.\.\.)?"
                         r"\s+\(?(-[\w+-]+)?\)?\s*$")
    rows = []
    for line in text.splitlines():
        m = pattern.match(line.rstrip())
        if m:
            long, value, short = m.groups()
            rows.append((long, short if short and short != long else None,
                         bool(value) or long == "--dependency-output"))
    return rows


if __name__ == "__main__":  # pragma: no cover
    import subprocess

    help_text = subprocess.run(["nvcc", "--help"], capture_output=True, text=True).stdout
    for row in _rows_from_help(help_text):
        print(f"    {row!r},")
