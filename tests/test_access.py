"""Who may open which world: the bridge secret every world, a world's secret only its own; worlds.json kept 0600."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bridge.access import WORLDS_FILE, Access, LiveAccess, load_world_secrets, world_secret
from bridge.config import StartupError

BRIDGE = "bridge-secret"
ACCESS = Access(BRIDGE, {"w-ashes": "ashes-secret", "w-embers": "embers-secret"})


def test_the_bridge_secret_opens_every_world() -> None:
    """The bridge secret opens each world, a world no one has a secret for, and all worlds at once (None)."""
    for world in ("w-ashes", "w-embers", "w-unlisted", None):
        assert ACCESS.opens(world, BRIDGE), world
    assert ACCESS.worlds_opened_by(BRIDGE) is None


def test_a_world_secret_opens_only_its_own_world() -> None:
    """A world's secret opens that world, but neither another world, an unlisted one, nor all worlds."""
    assert ACCESS.opens("w-ashes", "ashes-secret")
    assert not ACCESS.opens("w-embers", "ashes-secret")
    assert not ACCESS.opens("w-unlisted", "ashes-secret")
    assert not ACCESS.opens(None, "ashes-secret")
    assert ACCESS.worlds_opened_by("ashes-secret") == frozenset({"w-ashes"})


def test_a_wrong_or_missing_secret_opens_nothing() -> None:
    """A wrong, empty or missing secret opens no world; a prefix of the right one is wrong too."""
    for secret in ("a-guess", "", None, "ashes", BRIDGE[:-1], BRIDGE + " "):
        assert not any(ACCESS.opens(world, secret) for world in ("w-ashes", "w-embers", None)), secret
        assert ACCESS.worlds_opened_by(secret) == frozenset(), secret


def test_an_empty_bridge_secret_opens_nothing() -> None:
    """A bridge with an empty secret configured is not opened by an empty or missing secret."""
    access = Access("", {"w-ashes": ""})
    assert not access.opens(None, "") and not access.opens("w-ashes", None)
    assert access.worlds_opened_by("") == frozenset()


def test_one_secret_shared_by_two_worlds_opens_both() -> None:
    """A secret given to two worlds opens both of them and no third."""
    access = Access(BRIDGE, {"w-a": "shared", "w-b": "shared", "w-c": "other"})
    assert access.worlds_opened_by("shared") == frozenset({"w-a", "w-b"})
    assert access.opens("w-b", "shared") and not access.opens("w-c", "shared")


def test_no_worlds_file_means_no_world_secrets(tmp_path: Path) -> None:
    """A data directory without worlds.json has no world secrets, and loading it creates nothing."""
    assert load_world_secrets(tmp_path) == {}
    assert not (tmp_path / WORLDS_FILE).exists()


def test_a_worlds_file_of_the_wrong_shape_is_refused_naming_it(tmp_path: Path) -> None:
    """A worlds.json that is not an object of world id to secret is refused with its path in the message."""
    path = tmp_path / WORLDS_FILE
    for content in (["w-ashes"], {"w-ashes": 5}, {"w-ashes": None}, "w-ashes"):
        path.write_text(json.dumps(content), encoding="utf-8")
        with pytest.raises(StartupError, match="expected an object of world id to secret") as caught:
            load_world_secrets(tmp_path)
        assert str(path) in str(caught.value)


def test_a_worlds_file_that_is_not_json_is_refused_naming_it(tmp_path: Path) -> None:
    """A worlds.json cut short, or not UTF-8, is refused naming the file, where it breaks and what to do."""
    path = tmp_path / WORLDS_FILE
    path.write_text('{"w-ashes": ', encoding="utf-8")
    with pytest.raises(StartupError, match=r"is not valid JSON \(.* at line 1, column 13\)") as caught:
        load_world_secrets(tmp_path)
    assert str(path) in str(caught.value) and "sightline secret --world" in str(caught.value)
    path.write_bytes(b'{"w-ashes": "\xff"}')
    with pytest.raises(StartupError, match="is not UTF-8 text") as caught:
        load_world_secrets(tmp_path)
    assert str(path) in str(caught.value)


def test_a_world_secret_is_made_once_owner_only_and_kept(tmp_path: Path) -> None:
    """The first ask makes a world's secret in worlds.json (0600, under a permissive umask); later asks read it."""
    previous = os.umask(0o022)
    try:
        first, made = world_secret(tmp_path, "w-ashes")
    finally:
        os.umask(previous)
    assert first and not first.startswith("-") and made
    assert (tmp_path / WORLDS_FILE).stat().st_mode & 0o777 == 0o600
    assert world_secret(tmp_path, "w-ashes") == (first, False)
    assert load_world_secrets(tmp_path) == {"w-ashes": first}
    assert sorted(p.name for p in tmp_path.iterdir()) == [WORLDS_FILE]  # no temporary file left


def test_writing_worlds_json_never_goes_through_a_fixed_temporary_name(tmp_path: Path) -> None:
    """A file or link already at a temporary name (``worlds.tmp``) is neither written through nor removed."""
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not a secret", encoding="utf-8")
    (tmp_path / "worlds.tmp").symlink_to(elsewhere)
    secret, _ = world_secret(tmp_path, "w-ashes")
    assert elsewhere.read_text(encoding="utf-8") == "not a secret"
    assert load_world_secrets(tmp_path) == {"w-ashes": secret}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.txt", WORLDS_FILE, "worlds.tmp"]


def test_a_new_world_secret_keeps_the_others(tmp_path: Path) -> None:
    """Making a second world's secret keeps the first world's (also one written by hand) and differs from it."""
    (tmp_path / WORLDS_FILE).write_text(json.dumps({"w-ashes": "by-hand"}), encoding="utf-8")
    embers, _ = world_secret(tmp_path, "w-embers")
    assert embers != "by-hand"
    assert load_world_secrets(tmp_path) == {"w-ashes": "by-hand", "w-embers": embers}
    access = Access(BRIDGE, load_world_secrets(tmp_path))
    assert access.opens("w-embers", embers) and not access.opens("w-ashes", embers)


def test_a_running_bridge_takes_only_new_worlds_and_survives_a_damaged_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A live access adds the worlds worlds.json gains; a known world's new secret or a damaged file changes nothing.

    A damaged worlds.json is logged without a secret in the line, and the secrets already held still open their worlds.
    """
    live = LiveAccess(BRIDGE, {"w-ashes": "by-option"}, tmp_path)
    embers, _ = world_secret(tmp_path, "w-embers")
    assert live.opens("w-embers", embers) and live.opens("w-ashes", "by-option")
    (tmp_path / WORLDS_FILE).write_text(json.dumps({"w-ashes": "rotated", "w-embers": embers}), encoding="utf-8")
    assert not live.opens("w-ashes", "rotated") and live.opens("w-ashes", "by-option")
    (tmp_path / WORLDS_FILE).write_text('{"w-cinders": ', encoding="utf-8")
    assert not live.opens("w-cinders", "anything") and live.opens("w-embers", embers)
    warnings = [r.getMessage() for r in caplog.records if r.name == "sightline.access"]
    assert len(warnings) == 1 and WORLDS_FILE in warnings[0] and embers not in warnings[0]
