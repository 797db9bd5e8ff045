"""Carrying out the session's log operations on a store, and the answer each one gives.

A logged ruling is committed before its answer is built; when the store fails (or there is none) the
ruling is still answered, with ``logged: false`` — the table never waits on a broken database.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel

from ..errors import BridgeError, InvalidMessage, LogUnavailable
from ..protocol import RulingOverridden, SessionEnded, SessionStarted
from ..session import StoreThenSend, error_message, with_log_result
from .records import Party
from .store import LogStore

__all__ = ["perform", "unlogged_answer"]

_log = logging.getLogger(__name__)


async def perform(effect: StoreThenSend, store: LogStore | None) -> BaseModel:
    """Run ``effect`` on ``store`` and return the message to send."""
    if store is None:
        return unlogged_answer(effect)
    if effect.operation == "append":
        assert effect.answer is not None and effect.record is not None
        try:
            saved = await store.append(effect.record)
        except Exception:  # the ruling stands; only its logging failed
            _log.exception("could not log ruling %s", effect.request_id)
            return with_log_result(effect.answer, logged=False, record=None)
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
