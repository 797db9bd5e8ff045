"""Carrying out the session's log operations on a store, and the answer each one gives.

A logged ruling is committed before its answer is built; when the store fails (or there is none) the
ruling is still answered, with ``logged: false`` — the table never waits on a broken database.

What could not be logged is said on the ``bridge.log.effects`` logger, one line per ruling (its request
id and world, and why; the first of a run with the whole traceback), and when the log works again, how
many rulings between which times were answered without being logged (:func:`log_outage` gives the same
to ``/healthz``).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel

from ..config import LOG_WAIT, LOG_WAIT_FAILING
from ..errors import BridgeError, InvalidMessage, LogUnavailable
from ..protocol import RulingOverridden, SessionEnded, SessionStarted
from ..session import StoreThenSend, error_message, with_log_result
from .records import Party
from .store import LogStore

__all__ = ["LOG_WAIT", "LOG_WAIT_FAILING", "LogOutage", "log_outage", "perform", "unlogged_answer"]

_log = logging.getLogger(__name__)


@dataclass
class LogOutage:
    """Rulings a store could not keep: those of the failure under way (``since`` its first, ``None`` when
    the store works) and every one since the bridge started (``total``)."""

    since: datetime | None = None
    unlogged: int = 0
    total: int = 0
    reason: str = ""


_outages: weakref.WeakKeyDictionary[LogStore, LogOutage] = weakref.WeakKeyDictionary()


def log_outage(store: LogStore) -> LogOutage:
    """What ``store`` could not keep so far (nothing, for a store that never failed)."""
    return _outages.setdefault(store, LogOutage())


def _unlogged(store: LogStore, effect: StoreThenSend, exc: Exception) -> None:
    outage = log_outage(store)
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    first = outage.since is None
    if first:
        outage.since, outage.unlogged = datetime.now(UTC), 0
    outage.unlogged += 1
    outage.total += 1
    outage.reason = reason
    _log.error(
        "could not log ruling %s of world %s: %s%s",
        effect.request_id,
        effect.world,
        reason,
        " (answered with logged: false, as every ruling until the log works again)" if first else "",
        exc_info=exc if first else None,
    )


def _logged_again(store: LogStore) -> None:
    outage = _outages.get(store)
    if outage is None or outage.since is None:
        return
    _log.warning(
        "the log works again: %d ruling(s) answered between %s and %s with logged: false are not in it"
        " (but any named since as committed afterwards)",
        outage.unlogged,
        outage.since.strftime("%Y-%m-%d %H:%M:%S UTC"),
        datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    outage.since, outage.unlogged = None, 0


async def perform(
    effect: StoreThenSend, store: LogStore | None, *, wait: float = LOG_WAIT, wait_failing: float = LOG_WAIT_FAILING
) -> BaseModel:
    """Run ``effect`` on ``store`` and return the message to send; a ruling waits for its commit at most ``wait``
    seconds, or ``wait_failing`` while the store is failing, then is answered ``logged: false``."""
    if store is None:
        return unlogged_answer(effect)
    if effect.operation == "append":
        assert effect.answer is not None and effect.record is not None
        wait = wait if log_outage(store).since is None else wait_failing
        try:
            try:
                saved = await asyncio.wait_for(store.append(effect.record), wait)
            except TimeoutError as exc:
                raise TimeoutError(f"the log did not answer within {wait:g} s") from exc
        except Exception as exc:  # the ruling stands; only its logging failed
            _unlogged(store, effect, exc)
            return with_log_result(effect.answer, logged=False, record=None)
        _logged_again(store)
        return with_log_result(effect.answer, logged=True, record=str(saved.id))
    try:
        return await _session_operation(effect, store)
    except BridgeError as exc:
        return error_message(exc, effect.request_id)
    except KeyError as exc:
        return error_message(InvalidMessage(f"record: {exc.args[0]}", field="record"), effect.request_id)
    except Exception:
        _log.exception("log operation %s failed", effect.operation)
        return error_message(LogUnavailable("the log store failed; try again"), effect.request_id)


def unlogged_answer(effect: StoreThenSend) -> BaseModel:
    """The answer when there is no store (``sightline replay``): rulings unlogged, log operations refused."""
    if effect.operation == "append":
        assert effect.answer is not None
        return with_log_result(effect.answer, logged=False, record=None)
    return error_message(LogUnavailable("no log is kept here (sightline replay)"), effect.request_id)


async def _session_operation(effect: StoreThenSend, store: LogStore) -> BaseModel:
    if effect.operation == "start":
        session = await store.start_session(effect.world, effect.name, effect.at, world_name=effect.world_name)
        return SessionStarted(id=effect.request_id, session=session.wire())
    if effect.operation == "end":
        ended = await store.end_session(effect.world, effect.at)
        return SessionEnded(id=effect.request_id, session=ended.wire() if ended else None)
    override = effect.override
    assert override is not None
    user = effect.user
    record = await store.override(
        effect.world,
        override.record,
        modifier=override.modifier,
        allowed=override.allowed,
        reason=override.reason,
        user=Party(id=user.id, name=user.name) if user and (user.id or user.name) else None,
        at=effect.at,
    )
    return RulingOverridden(id=effect.request_id, record=str(record.id), original=override.record)
