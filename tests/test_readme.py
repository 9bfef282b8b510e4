"""README.md's two set-up commands stay true: .ci/run calls the test command verbatim."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command():
    readme = ROOT / "README.md"
    blocks = readme.read_text().split("```")
    commands = [b.strip() for b in blocks[1::2] if b.strip().startswith("python3 -m pip")]
    assert len(commands) == 2, commands
    install_and_run, tests = commands
    assert "gmprof profile samples/" in install_and_run
    assert tests in (ROOT / ".ci" / "run").read_text()
    assert (ROOT / install_and_run.split()[-1]).is_dir()  # the sample it profiles exists
