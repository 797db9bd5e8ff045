"""Types for the command line's options: a value out of range is refused by ``argparse`` while parsing
(``sightline serve: error: argument --port: 99999 is not a port (0 to 65535) (sightline serve --help lists
the options)``, one line, exit 2), before anything starts, instead of failing later with a traceback or
being accepted and misbehaving."""

from __future__ import annotations

import argparse
import ipaddress
import math
import re
from collections.abc import Callable

__all__ = ["at_least", "finite_number", "host", "port"]

_HOSTNAME_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_DOTTED_NUMBERS = re.compile(r"[0-9.]+")


def port(text: str) -> int:
    """A TCP port, 0 (pick a free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0 to 65535)") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0 to 65535)")
    return value


def host(text: str) -> str:
    """An IPv4 or IPv6 address, or a host name (resolved when the bridge starts); ``256.1.1.1`` and
    other numbers that are no address are refused here rather than looked up as names. Square brackets
    are taken off an IPv6 address (``[::1]``, as in a URL) and nothing else: ``[localhost]`` and an unmatched
    bracket are refused."""
    bracketed = text.startswith("[") and text.endswith("]")
    candidate = text[1:-1] if bracketed else text
    if bracketed and ":" not in candidate:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IPv6 address (only those go in square brackets)")
    if ":" in candidate or _DOTTED_NUMBERS.fullmatch(candidate):
        try:
            ipaddress.ip_address(candidate)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an IP address") from None
        return candidate
    labels = candidate.rstrip(".").split(".")
    if not candidate or len(candidate) > 253 or not all(_HOSTNAME_LABEL.fullmatch(label) for label in labels):
        raise argparse.ArgumentTypeError(f"{text!r} is neither an IP address nor a host name")
    return candidate


def finite_number(text: str) -> float:
    """A finite decimal number (``1e400``, ``inf`` and ``nan`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def at_least(
    minimum: float, *, integer: bool = False, exclusive: bool = False, unit: str = "", most: float | None = None
) -> Callable[[str], float | int]:
    """A finite number ``>= minimum`` (``> minimum`` when ``exclusive``) and ``<= most`` when given, an integer
    when ``integer``."""
    bound = f"more than {minimum:g}" if exclusive else f"at least {minimum:g}"
    kind = "a whole number" if integer else "a number"
    suffix = f" {unit}" if unit else ""

    def parse(text: str) -> float | int:
        value: float | int
        if integer:
            try:
                value = int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        else:
            value = finite_number(text)
        if value < minimum or (exclusive and value == minimum):
            raise argparse.ArgumentTypeError(f"{text} must be {bound}{suffix}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"{text} must be at most {most:g}{suffix}")
        return value

    parse.__name__ = "integer" if integer else "number"  # argparse names the type in some messages
    return parse
