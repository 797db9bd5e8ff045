"""The whole-scene engine, imported in the background once the bridge listens.

``bridge.core.visibility`` and its inner loops (:mod:`bridge.core.meetings`, a Cython extension compiled
when the package is built: nothing is compiled at run time) take a few tenths of a second of CPU to
import — shapely's and the engine's modules. Nothing that answers ``/healthz``, ``hello``,
``scene.sync`` or a per-pair ``adjudicate`` needs them, so ``sightline serve`` imports them in a daemon
thread after it starts listening (:func:`start`), and ``/healthz`` reports how far it got and whether the
loops run compiled (:func:`status`). A ``watch`` that arrives first waits for that import (Python's
import lock), never fails for it; an ``adjudicate`` is answered by the per-pair path meanwhile
(:func:`loading`).

(Until issue 15 the loops were numba's, compiled at import: about 5 s from numba's cache, up to a minute
on a fresh install. That is why this module exists; it is kept because the import still costs CPU
the port need not wait for.)
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
_compiled: bool | None = None


def status() -> dict[str, object]:
    """``{"engine": "not started" | "loading" | "ready" | "failed", "engine_seconds": …, "engine_compiled":
    …}``: ``engine_compiled`` is true when the loops run compiled, false when they run as plain Python (the
    package was built without a C compiler: slower, same answers), ``None`` until the engine is loaded."""
    return {
        "engine": _status,
        "engine_seconds": None if _seconds is None else round(_seconds, 3),
        "engine_compiled": _compiled,
    }


def loading() -> bool:
    """Whether the background import is under way: a question that would wait for it takes another path."""
    return _status == "loading"


def loaded() -> bool:
    """Whether the engine's module is imported whole (by :func:`start`, :func:`load` or anything else),
    with no background import under way: only then may a question build an engine without waiting."""
    return not loading() and _ENGINE in sys.modules


def load() -> None:
    """Import the engine now, in this thread."""
    import bridge.core.visibility  # noqa: F401


def start() -> None:
    """Import the engine in a daemon thread; once per process."""
    global _status
    with _lock:
        if _status != "not started":
            return
        _status = "loading"
    threading.Thread(target=_warm, name="sightline-warmup", daemon=True).start()


def _warm() -> None:
    global _status, _seconds, _compiled
    began = time.perf_counter()
    try:
        import bridge.core.visibility  # noqa: F401  (imports bridge.core.meetings)
        from bridge.core.meetings import COMPILED

        _compiled = COMPILED
    except Exception as exc:  # the engine could not be imported: the first watch will raise it again, answered
        _log.error("the whole-scene engine could not be loaded: %s: %s", type(exc).__name__, exc)
        _status = "failed"
    else:
        _status = "ready"
    _seconds = time.perf_counter() - began
