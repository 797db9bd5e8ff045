"""What :mod:`bridge.core._loops` asks of Cython's ``cython`` module when neither it is installed nor the
loops are compiled: its decorators and ``with`` blocks do nothing, and ``compiled`` is false. (Type
annotations such as ``cython.double[:]`` are never evaluated: the module defers annotations.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

compiled = False


def _same(function: Callable[..., Any]) -> Callable[..., Any]:
    return function


cfunc = cclass = ccall = inline = _same


def exceptval(*_args: Any, **_kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return _same


class _Block:
    """``cython.nogil`` / ``cython.gil``: as a decorator and as a ``with`` block, nothing."""

    def __call__(self, function: Callable[..., Any]) -> Callable[..., Any]:
        return function

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_exc: object) -> None:
        return None


nogil = gil = _Block()

double = float


def declare(_type: Any, value: Any = None) -> Any:
    """``cython.declare(type, value)``: the value."""
    return value
