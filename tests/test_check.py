"""`gmprof check EXPECT.toml`: profile what the file names (CPU backend here) and check bounds
on the counts: status 0 and one summary line when every expectation holds, 1 with a located
message per failed one, 2 (located, nothing run) for bad TOML, an unknown metric or array.

Every expected count is derived by hand from the kernel below (the arithmetic in comments)."""
from __future__ import annotations

import textwrap

import pytest

from gmprof.cli import main

# grid 4 x block 32. Each block copies in[0..31] through shared memory into its 32 floats of
# out[]: every in[i] is read once per block (4 = gridDim.x times, 4 * 32 = 128 reads) and every
# out[j] written once. Line 6 writes s[t * 32]: the 32 lanes of a warp hit 32 different words
# of bank 0 (t * 32 % 32 == 0), 32 wavefronts for a request whose ideal is 1: degree 32; line 5
# writes s[t], 32 lanes in 32 banks: degree 1. in[t] is 32 x 4 contiguous aligned bytes: 4
# sectors of 32 bytes a request.
KERNEL = """\
__global__ void spread(float *out, const float *in)
{
    __shared__ float s[32 * 32];
    int t = threadIdx.x;
    s[t] = in[t];
    s[t * 32] = 1.0f;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t] * 2.0f;
}
"""

PROFILE = """\
[profile]
file = "k.cu"
kernel = "spread"
grid = 4
block = 32
args = ["out=float32[128]:zeros", "in=float32[32]:arange"]
backend = "cpu"
"""


@pytest.fixture
def write(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(KERNEL)

    def write(body: str, profile: str = PROFILE) -> str:
        (tmp_path / "expect.toml").write_text(profile + textwrap.dedent(body))
        return "expect.toml"
    return write


def test_every_expectation_holds(write, capsys):
    path = write("""
        [array.in]
        reads = "== gridDim.x * blockDim.x"   # 4 * 32
        reads_per_element = 4
        reads_per_element_min = "== gridDim.x"
        untouched = 0

        [array.out]
        writes = 128
        writes_per_element = "<= 1"
        untouched = 0

        [array.s]
        untouched = 961        # 1024 words; s[t] and s[t * 32] touch 32 + 31 distinct ones

        [site."5:12"]          # in[t]
        sectors_per_request = 4

        [site."6:5"]           # s[t * 32]
        bank_conflict_degree = 32

        [site."in[t]"]         # a site by its text, where only one site has it
        executions = 128       # 4 blocks x 32 threads
        """)
    assert main(["check", path]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == ("gmprof check: expect.toml: 11 expectations passed (kernel spread, "
                           "cpu backend)"), err


def test_a_failed_expectation_is_located_and_exits_1(write, capsys):
    path = write("""
        [array.in]
        reads = 128
        reads_per_element = "<= 2"

        [kernel.spread.site."5:5"]
        bank_conflict_degree = 1
        [kernel.spread.site."6:5"]
        bank_conflict_degree = "== 1"
        """)
    assert main(["check", path]) == 1
    out, err = capsys.readouterr()
    # line numbers: PROFILE is 7 lines, then a blank one
    assert "expect.toml:11:1: error: kernel spread, array in: reads_per_element is 4, " \
           "expected <= 2" in err
    assert "expect.toml:16:1: error: kernel spread, site 6:5 s[t * 32]: bank_conflict_degree " \
           "is 32, expected == 1" in err
    assert "reads = 128" not in err and "5:5" not in err  # those hold
    assert err.strip().endswith("2 of 4 expectations failed (kernel spread)")
    assert out == ""


def test_bad_toml_is_a_located_usage_error(write, capsys):
    path = write("""
        [array.in]
        reads = <= 2
        """)
    assert main(["check", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith("expect.toml:10:9: error: not TOML: Invalid value"), err
    assert "Traceback" not in err


@pytest.mark.parametrize("body, said", [
    ("[array.in]\nreads_per_elemnt = 2\n",
     "expect.toml:10:1: error: unknown metric 'reads_per_elemnt' (did you mean "
     "reads_per_element?)"),
    ("[array.in]\nbank_conflict_degree = true\n",
     "expect.toml:10:1: error: expected a number or a string such as \"<= 2\", not a boolean"),
    ("[array.in]\nreads = \"about 2\"\n", "expect.toml:10:1: error: 'about 2': expected OP"),
    ("[array.in]\nreads = \"<= len(x)\"\n", "expect.toml:10:1: error: 'len(x)': only numbers"),
    ("[site.\"6:5\"]\nlaunches = 1\n",
     "expect.toml:10:1: error: launches is not a metric of a site"),
    ("[arrays.in]\nreads = 1\n", "expect.toml:9:1: error: unknown table 'arrays'"),
])
def test_a_bad_expectation_is_a_usage_error_before_anything_runs(write, capsys, body, said):
    path = write("\n" + body)
    assert main(["check", path]) == 2
    assert capsys.readouterr().err.startswith(said)


@pytest.mark.parametrize("body, said", [
    ("[array.inn]\nreads = 1\n",
     "expect.toml:9:1: error: kernel spread has no array 'inn' (arrays: out, in, s)"),
    ("[site.\"9:9\"]\nexecutions = 1\n", "expect.toml:9:1: error: kernel spread has no site '9:9'"),
    ("[kernel.other.array.in]\nreads = 1\n",
     "expect.toml:9:1: error: no kernel 'other' in the run (kernels: spread)"),
    ("[array.in]\nreads = \"== n\"\n", "expect.toml:10:1: error: 'n': unknown name n"),
    ("[array.s]\nsectors_per_request = 1\n",
     "expect.toml:10:1: error: sectors_per_request is a device-memory metric; kernel spread, "
     "array s is in shared memory"),
])
def test_a_name_the_run_does_not_have_is_a_usage_error(write, capsys, body, said):
    path = write("\n" + body)
    assert main(["check", path]) == 2
    assert capsys.readouterr().err.startswith(said)


@pytest.mark.parametrize("profile, said", [
    ("[profile]\nfil = \"k.cu\"\n", "expect.toml:2:1: error: [profile]: unknown key 'fil' "
                                    "(did you mean file?)"),
    ("[profile]\nfile = \"k.cu\"\nsample = \"samples/x\"\n",
     "expect.toml:3:1: error: [profile]: give exactly one of"),
    ("[profile]\nfile = \"k.cu\"\nkernel = \"spread\"\ngrid = \"4,x\"\nblock = 32\n",
     "expect.toml:4:1: error: [profile] grid '4,x': expected X[,Y[,Z]]"),
    ("[profile]\nfile = \"k.cu\"\nkernel = \"spread\"\ngrid = 4\nblock = 32\n"
     "args = [\"out=float32[128]:zeros\"]\n",
     "expect.toml:6:1: error: spread takes (out, in); missing --arg for in"),
    ("[profile]\nfile = \"k.cu\"\ngrid = 4\nblock = 32\n",
     "expect.toml:2:1: error: [profile]: a .cu file needs kernel"),
    ("[profile]\nfile = \"k.cu\"\nenhanced = 1\n",
     "expect.toml:3:1: error: [profile] enhanced: expected true or false"),
    ("[profile]\nfile = \"k.cu\"\naccess_stats_blocks = -1\n",
     "expect.toml:3:1: error: [profile] access_stats_blocks -1: expected 0 (every block) or more"),
])
def test_a_bad_profile_table_is_a_located_usage_error(write, capsys, profile, said):
    path = write("[array.in]\nreads = 1\n", profile=profile)
    assert main(["check", path]) == 2
    assert capsys.readouterr().err.startswith(said)


def test_a_sample_with_its_size_parameters_in_the_bounds(tmp_path, monkeypatch, capsys):
    """samples/matmul_naive (small: m = 64, n = 96, k = 48): C = A B with one thread per
    element of C, so each element of A (m x k) is read by the n threads of its row of C, each
    of B by the m threads of its column, and each of C written once."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mm.toml").write_text(textwrap.dedent("""\
        [profile]
        sample = "samples/matmul_naive"
        backend = "cpu"

        [array.A]
        reads_per_element = "== n"
        reads = "== m * k * n"     # 294,912
        [array.B]
        reads_per_element = "== m"
        [array.C]
        writes_per_element = 1
        untouched = 0
        """))
    assert main(["check", "mm.toml"]) == 0
    assert "5 expectations passed (kernel matmul_naive" in capsys.readouterr().out


def test_o_writes_the_run_whatever_the_expectations_say(write, capsys, tmp_path):
    path = write("\n[array.in]\nreads_per_element = \"<= 2\"\n")
    assert main(["check", path, "-o", "run.json"]) == 1
    from gmprof.report.document import load

    (kernel,) = load(tmp_path / "run.json")["kernels"]
    assert [a["reads"] for a in kernel["arrays"] if a["name"] == "in"] == [128]
    capsys.readouterr()
    # an existing file is refused before anything runs, unless -f
    assert main(["check", path, "-o", "run.json"]) == 2
    assert "-o run.json: the file exists; give -f" in capsys.readouterr().err
    assert main(["check", path, "-o", "run.json", "-f"]) == 1
    # an expectation that cannot be checked (status 2) writes nothing
    path = write("\n[array.inn]\nreads = 1\n")
    assert main(["check", path, "-o", "run2.json"]) == 2
    assert not (tmp_path / "run2.json").exists()
    capsys.readouterr()
    # nor over an input: here the saved run it checks
    path = write("[array.in]\nreads = 128\n", profile="[profile]\nrun = \"run.json\"\n")
    assert main(["check", path]) == 0
    assert main(["check", path, "-o", "run.json", "-f"]) == 2
    assert "-o 'run.json' is an input of this command" in capsys.readouterr().err


def test_gmprof_help_lists_check(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "check" in out.split("positional arguments:")[1].split("options:")[0]
    assert "gmprof check expect.toml" in out
