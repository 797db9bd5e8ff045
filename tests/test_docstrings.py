"""Every test says in one line what it proves: a docstring whose first paragraph is a single line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
FILES = sorted(TESTS.rglob("test_*.py"))


def unsaid(source: str) -> list[str]:
    """The test functions in ``source`` with no docstring, or whose summary wraps over more than one line
    (a body after a blank line is welcome: quotations from the seeds live there)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            text = ast.get_docstring(node, clean=False)
            if text is None or not text.strip() or "\n" in text.strip().split("\n\n")[0]:
                found.append(f"{node.name} (line {node.lineno})")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_each_test_has_a_one_line_summary(path: Path) -> None:
    """Each test function's docstring opens with one line saying what it proves."""
    assert unsaid(path.read_text(encoding="utf-8")) == []


def test_the_check_sees_a_missing_or_wrapped_summary() -> None:
    """A test without a docstring, or whose first sentence wraps, is named; a summary with a body is not."""
    source = '''
def test_silent():
    pass

def test_wrapped():
    """One sentence that goes on
    to a second line."""

def test_summary_and_body():
    """One line.

    001: 'a quotation kept as the body'.
    """

async def test_async_blank():
    """ """
'''
    assert unsaid(source) == ["test_silent (line 2)", "test_wrapped (line 5)", "test_async_blank (line 15)"]
