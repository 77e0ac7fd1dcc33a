"""``seawall --help`` reads like a product's: every command named with a one-line summary, and
no docstring markup leaking into what a user reads."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from seawall.cli.main import build_parser

SEAWALL = str(Path(sys.executable).parent / "seawall")


def _commands(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    """Each command's name and the summary the top-level help lists for it."""
    return {choice.dest: choice.help for choice in _commands(parser)._choices_actions}


def test_every_command_has_a_one_line_summary() -> None:
    parser = build_parser()
    summaries = _summaries(parser)

    assert set(summaries) == set(_commands(parser).choices)  # none is missing from the list
    for name, summary in summaries.items():
        assert summary and summary.strip(), f"{name} has no summary"
        assert "\n" not in summary, f"{name}'s summary is not one line"
        assert not summary.endswith("."), f"{name}'s summary is a phrase, not a paragraph"


def test_top_level_help_names_every_command_with_its_summary() -> None:
    parser = build_parser()
    text = " ".join(parser.format_help().split())  # argparse wraps long lines

    assert parser.description and text.startswith("usage: seawall")
    for name, summary in _summaries(parser).items():
        assert f"{name} {' '.join((summary or '').split())}" in text


def test_no_help_text_carries_docstring_markup() -> None:
    parser = build_parser()
    texts = {"seawall": parser.format_help()}
    texts.update(
        {f"seawall {name}": sub.format_help() for name, sub in _commands(parser).choices.items()}
    )

    for where, text in texts.items():
        assert "``" not in text, f"{where} --help shows docstring markup"
        assert ":func:" not in text and ":class:" not in text, where
    assert "The ``seawall`` command" not in texts["seawall"]


def test_every_command_has_a_description_of_its_own() -> None:
    for name, sub in _commands(build_parser()).choices.items():
        assert sub.description, f"seawall {name} --help has no description"


def test_the_installed_command_prints_the_help() -> None:
    done = subprocess.run([SEAWALL, "--help"], capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: seawall")
    assert "Seawall runs AI-agent prompts as durable Temporal workflows" in done.stdout
    for name in _commands(build_parser()).choices:
        assert f"    {name} " in done.stdout
