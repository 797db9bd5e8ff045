"""The whole-scene engine's compiled loops, made ready in the background once the bridge listens.

``bridge.core.visibility`` imports :mod:`bridge.core.meetings`, whose two numba loops are compiled
for their one signature at import (about 5 s the first time, then read from numba's cache). Nothing
that answers ``/healthz``, ``hello``, ``scene.sync`` or a per-pair ``adjudicate`` needs them, so
``sightline serve`` imports them in a daemon thread after it starts listening (:func:`start`), and
``/healthz`` reports how far it got (:func:`status`). A ``watch`` that arrives first waits for that
import (Python's import lock), never fails for it; an ``adjudicate`` is answered by the per-pair path
meanwhile (:func:`loading`), so the first chat card of a fresh install never waits for a compilation.
"""

from __future__ import annotations

import logging
import sys
import threading
import time

__all__ = ["load", "loaded", "loading", "start", "status"]

_ENGINE = "bridge.core.visibility"

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_status = "not started"
_seconds: float | None = None


def status() -> dict[str, object]:
    """``{"engine": "not started" | "compiling" | "ready" | "failed", "engine_seconds": …}``."""
    return {"engine": _status, "engine_seconds": None if _seconds is None else round(_seconds, 3)}


def loading() -> bool:
    """Whether the background import is under way: a question that would wait for it takes another path."""
    return _status == "compiling"


def loaded() -> bool:
    """Whether the engine's module is imported whole (by :func:`start`, :func:`load` or anything else),
    with no background import under way: only then may a question build an engine without waiting."""
    return not loading() and _ENGINE in sys.modules


def load() -> None:
    """Import the engine's loops now, in this thread (compiled the first time, else read from cache)."""
    import bridge.core.visibility  # noqa: F401


def start() -> None:
    """Import (compile, or load from cache) the engine's loops in a daemon thread; once per process."""
    global _status
    with _lock:
        if _status != "not started":
            return
        _status = "compiling"
    threading.Thread(target=_warm, name="sightline-warmup", daemon=True).start()


def _warm() -> None:
    global _status, _seconds
    began = time.perf_counter()
    try:
        import bridge.core.visibility  # noqa: F401  (imports and compiles bridge.core.meetings)
    except Exception as exc:  # the loops could not be made: the first watch will raise it again, answered
        _log.error("the whole-scene engine could not be loaded: %s: %s", type(exc).__name__, exc)
        _status = "failed"
    else:
        _status = "ready"
    _seconds = time.perf_counter() - began
