"""Configuration: the secrets the bridge makes itself are safe to paste after ``--secret``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge import config
from bridge.config import load_or_create_secret, new_secret


def test_a_new_secret_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new secret never starts with "-", which a command line reads as an option.

    ``token_urlsafe`` may begin with "-": such a draw is thrown away and another one made.
    """
    draws: Iterator[str] = iter(["-looks-like-an-option", "_fine-secret"])
    monkeypatch.setattr(config.secrets, "token_urlsafe", lambda nbytes: next(draws))
    assert new_secret() == "_fine-secret"


def test_the_stored_secret_is_made_once_and_kept(tmp_path: Path) -> None:
    """Without --secret the bridge makes one, stores it (owner-only) and reads the same one next time."""
    first = load_or_create_secret(tmp_path)
    assert not first.startswith("-") and load_or_create_secret(tmp_path) == first
    assert (tmp_path / config.SECRET_FILE).stat().st_mode & 0o077 == 0
