"""Who may open which world: the bridge secret opens every world, a world's own secret only that world.

World secrets live in ``<data dir>/worlds.json`` (mode 0600), made by ``sightline secret --world W``, or
come from ``--world-secret W=SECRET``. Every comparison is constant-time. A running bridge holds a
:class:`LiveAccess`, which also sees the worlds that ``sightline secret --world`` adds to worlds.json while
it runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from .config import StartupError, new_secret, secret_matches

__all__ = ["WORLDS_FILE", "Access", "LiveAccess", "load_world_secrets", "world_secret"]

WORLDS_FILE = "worlds.json"

logger = logging.getLogger("sightline.access")


@dataclass(frozen=True, slots=True)
class Access:
    bridge_secret: str
    world_secrets: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def opens(self, world: str | None, secret: str | None) -> bool:
        """Whether ``secret`` opens ``world`` (``None``: every world, which only the bridge secret does)."""
        bridge = secret_matches(self.bridge_secret, secret)
        own = world is not None and world in self.world_secrets
        world_ok = secret_matches(self.world_secrets[world], secret) if own and world is not None else False
        return bridge or world_ok

    def worlds_opened_by(self, secret: str | None) -> frozenset[str] | None:
        """The worlds ``secret`` opens: ``None`` means all of them (the bridge secret)."""
        if secret_matches(self.bridge_secret, secret):
            return None
        return frozenset(w for w, s in self.world_secrets.items() if secret_matches(s, secret))


class LiveAccess:
    """A running bridge's :class:`Access` (``access``), which takes the worlds worlds.json gained since.

    ``sightline secret --world W`` writes W's new secret into worlds.json while the bridge runs; when a
    secret opens nothing the bridge knows, worlds.json is looked at again — one ``stat`` per refused
    secret, read only when its inode, size or time changed since it was last read — and worlds it did
    not know are added. Only new worlds: a secret the bridge already holds for a world (from the file at
    start, or ``--world-secret``) stays as it is until a restart, as does a world removed from the file.
    A damaged worlds.json is logged once per change and left aside; the secrets already held still work.
    """

    def __init__(self, bridge_secret: str, world_secrets: Mapping[str, str], data_dir: Path) -> None:
        self.access = Access(bridge_secret, MappingProxyType(dict(world_secrets)))
        self._path = data_dir / WORLDS_FILE
        self._seen: tuple[int, int, int] | None = None  # not read here yet: the first refusal reads it

    def opens(self, world: str | None, secret: str | None) -> bool:
        """:meth:`Access.opens`, after taking worlds.json's new worlds when ``secret`` does not open ``world``
        (``None`` asks for the bridge secret, which worlds.json does not hold: nothing is looked at)."""
        if self.access.opens(world, secret):
            return True
        return world is not None and self._refresh() and self.access.opens(world, secret)

    def own_worlds(self, secret: str) -> frozenset[str]:
        """The worlds ``secret`` is the own secret of (none for the bridge secret, which opens every world by
        itself), after taking worlds.json's new worlds when it is of none known."""
        worlds = self.access.worlds_opened_by(secret)
        if worlds is None:
            return frozenset()
        if not worlds and self._refresh():
            worlds = self.access.worlds_opened_by(secret)
        return worlds or frozenset()

    def _refresh(self) -> bool:
        """Take the worlds worlds.json gained since it was last read; whether there were any."""
        try:
            found = os.stat(self._path)
            stamp: tuple[int, int, int] | None = (found.st_ino, found.st_size, found.st_mtime_ns)
        except OSError:
            stamp = None
        if stamp is None or stamp == self._seen:
            return False
        self._seen = stamp
        try:
            secrets = load_world_secrets(self._path.parent)
        except StartupError as exc:
            logger.warning("%s; world secrets added to it are not seen until it is repaired", exc)
            return False
        known = self.access.world_secrets
        added = {world: secret for world, secret in secrets.items() if world not in known}
        if not added:
            return False
        self.access = Access(self.access.bridge_secret, MappingProxyType({**known, **added}))
        return True


def load_world_secrets(data_dir: Path) -> dict[str, str]:
    """The world secrets kept in ``data_dir``'s worlds.json (none when it is missing). A file that cannot be
    read, is not JSON or is not an object of world id to secret is a :class:`StartupError` naming it: the
    command stops in one line instead of serving without the worlds' own secrets."""
    path = data_dir / WORLDS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StartupError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise StartupError(f"{path} is not UTF-8 text (byte {exc.start + 1}); {_REMAKE}") from exc
    except json.JSONDecodeError as exc:
        raise StartupError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); {_REMAKE}"
        ) from exc
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise StartupError(f"{path}: expected an object of world id to secret; {_REMAKE}")
    return data


#: What to do about a damaged worlds.json (its secrets cannot be guessed back).
_REMAKE = "repair it, or move it away and give each world a new secret with `sightline secret --world W`"


def world_secret(data_dir: Path, world: str) -> tuple[str, bool]:
    """The world's secret, created and stored now if it has none, and whether it was made just now (as
    :func:`bridge.config.ensure_secret` answers for the bridge secret)."""
    known = load_world_secrets(data_dir)
    made = world not in known
    if made:
        known[world] = new_secret()
        path = data_dir / WORLDS_FILE
        # A temporary file of its own (mkstemp: owner-only, a unique name), so that two commands writing at
        # once never write into one file; the last rename wins whole.
        fd, tmp = tempfile.mkstemp(dir=data_dir, prefix=f".{WORLDS_FILE}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(known, handle, indent=2, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return known[world], made
