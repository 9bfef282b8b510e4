"""Every option of every gmprof command has help text."""
import argparse

from gmprof.cli import build_parser


def test_every_option_has_help():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [f"gmprof {name} {act.option_strings or act.dest}"
               for name, p in sub.choices.items() for act in p._actions
               if not act.help and not isinstance(act, argparse._HelpAction)]
    assert missing == []
    assert {a.dest: a for a in parser._actions}["version"].help
