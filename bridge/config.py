"""Where the bridge keeps its data and which secret opens it — no configuration needed to start.

Order of precedence for each setting: command-line option, environment variable, default.
The secret, when neither is given, is generated on first start and kept in ``<data dir>/secret``.
"""

from __future__ import annotations

import hmac
import os
import secrets
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

__all__ = [
    "BridgeConfig",
    "StartupError",
    "data_dir_from",
    "ensure_writable",
    "load_or_create_secret",
    "new_secret",
    "secret_matches",
]

SECRET_FILE = "secret"


class StartupError(Exception):
    """A command cannot start for a reason the person starting it can fix; the message (one line) says
    what and how. The command line prints it after the command's name and exits 2, with no traceback."""


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    """Everything ``sightline serve`` can be told; the defaults need no configuration."""

    host: str = "127.0.0.1"
    port: int = 8765
    data_dir: Path = Path(".")
    secret: str = ""
    world_secrets: dict[str, str] = field(default_factory=dict)
    database: str | None = None
    log: bool = True
    session_idle_minutes: float = 240.0
    certfile: Path | None = None
    keyfile: Path | None = None
    allowed_origins: tuple[str, ...] = ()
    max_frame_bytes: int = 4 * 1024 * 1024
    messages_per_second: float = 100.0
    message_burst: int = 200
    max_connections_per_world: int = 32
    hello_timeout: float = 10.0
    send_queue: int = 256
    heartbeat: float = 20.0
    max_regions: int = 5_000
    max_tokens: int = 5_000
    max_walls: int = 50_000
    max_lights: int = 5_000
    max_vertices: int = 500_000
    compress: bool = False


def data_dir_from(option: str | None) -> Path:
    """``--data-dir``, else ``SIGHTLINE_DATA_DIR``, else the platform's user data directory."""
    chosen = option or os.environ.get("SIGHTLINE_DATA_DIR") or platformdirs.user_data_dir("sightline", "sightline")
    path = Path(chosen).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StartupError(f"cannot make the data directory {path}: {_reason(exc)}") from exc
    return path


def ensure_writable(data_dir: Path) -> None:
    """:class:`StartupError` unless a file can be written in ``data_dir`` (tried, not guessed from modes:
    root passes every mode check, a read-only mount fails them all)."""
    try:
        with tempfile.TemporaryFile(dir=data_dir):
            pass
    except OSError as exc:
        raise StartupError(
            f"cannot write in the data directory {data_dir}: {_reason(exc)} (choose another with --data-dir)"
        ) from exc


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def new_secret() -> str:
    """A fresh secret (24 random bytes, URL-safe) that never starts with ``-``: pasted after ``--secret``
    or ``--world-secret`` on a command line, it must not read as an option."""
    while (secret := secrets.token_urlsafe(24)).startswith("-"):
        pass
    return secret


def load_or_create_secret(data_dir: Path, option: str | None = None) -> str:
    """``--secret``, else ``SIGHTLINE_SECRET``, else the stored one, else a new one stored now (mode 0600)."""
    given = option or os.environ.get("SIGHTLINE_SECRET")
    if given:
        return given
    path = data_dir / SECRET_FILE
    if path.exists():
        stored = path.read_text(encoding="utf-8").strip()
        if stored:
            return stored
    secret = new_secret()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secret + "\n")
    except OSError as exc:
        raise StartupError(f"cannot store the secret in {path}: {_reason(exc)}") from exc
    return secret


def secret_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison; a missing secret never matches."""
    if not given or not expected:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
