"""`gmprof bench` writes to a new directory unless told where (--out DIR): run in a checkout,
it never replaces the committed tables in docs/results. `--apps none --no-cases` runs no
kernel, so these take a second."""
from __future__ import annotations

import json

from gmprof.cli import main

QUICK = ["bench", "--apps", "none", "--no-cases", "--backend", "cpu"]


def test_bench_writes_a_new_directory_and_leaves_docs_results_alone(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.chdir(tmp_path)
    committed = tmp_path / "docs" / "results"
    committed.mkdir(parents=True)
    (committed / "paper.md").write_text("H100 tables\n")
    (committed / "paper.json").write_text("{}\n")
    assert main(QUICK) == 0
    assert main(QUICK) == 0  # twice within a second: two directories
    assert (committed / "paper.md").read_text() == "H100 tables\n"
    assert (committed / "paper.json").read_text() == "{}\n"
    made = sorted(p.name for p in tmp_path.iterdir() if p.name != "docs")
    assert len(made) == 2 and all(name.startswith("gmprof-bench-") for name in made)
    for name in made:
        assert json.loads((tmp_path / name / "paper.json").read_text())["info"]["backend"] == \
            "cpu"
        assert (tmp_path / name / "paper.md").is_file()
    assert "gmprof bench: results written to gmprof-bench-" in capsys.readouterr().err


def test_bench_out_names_the_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(QUICK + ["--out", "here"]) == 0
    assert sorted(p.name for p in (tmp_path / "here").iterdir()) == ["paper.json", "paper.md"]
    assert [p.name for p in tmp_path.iterdir()] == ["here"]


def test_merge_needs_out(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--merge"]) == 2
    assert capsys.readouterr().err.startswith("gmprof: error: --merge reads the "
                                              "paper_part_*.json files in a directory")
    assert list(tmp_path.iterdir()) == []
