"""bridge/core, bridge/session.py (with bridge/engines.py) stay pure: no asyncio, websockets or aiohttp imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "bridge"
FORBIDDEN = {"asyncio", "websockets", "aiohttp", "socket", "aiosqlite", "asyncpg"}
PURE = sorted(
    [
        *ROOT.joinpath("core").rglob("*.py"),
        ROOT / "session.py",
        ROOT / "protocol.py",
        ROOT / "engines.py",
        ROOT / "jsontext.py",
    ]
)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_module_imports_no_io_library(path: Path) -> None:
    """The pure core and the sans-I/O session never import an I/O library."""
    assert not imported_modules(path) & FORBIDDEN


def test_the_check_sees_an_asyncio_import(tmp_path: Path) -> None:
    """The import scan itself works: a file importing asyncio is caught."""
    sample = tmp_path / "sample.py"
    sample.write_text("import asyncio\nfrom aiohttp import web\n")
    assert imported_modules(sample) == {"asyncio", "aiohttp"}
