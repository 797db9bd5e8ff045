"""Errors the bridge answers with, each knowing its contract ``code``.

::

    BridgeError                      any problem the client is told about as {"type": "error", …}
    ├── InvalidMessage               invalid-message: malformed JSON, wrong field, unknown id of a vocabulary
    ├── UnknownScene                 unknown-scene: a scene id this world never synced
    ├── UnknownToken                 unknown-token: an actor or target not in the scene
    ├── UnknownRuleset               unknown-ruleset: a ruleset or edition the bridge does not have
    ├── TooLarge                     too-large: a frame or a scene over the configured limits
    ├── RateLimited                  rate-limited: too many messages too fast
    │   └── TooManyConnections       rate-limited: a hello refused, its world has its most connections; the
    │                                connection stays open, not admitted, and may say hello again
    ├── LogUnavailable               log-unavailable: a log operation with no log store behind it
    ├── InternalError                internal-error: a bug in the bridge, answered (and logged) instead of raised
    └── ConnectionFatal              errors after which the bridge closes the connection
        ├── Unauthorized             unauthorized (close 4401): wrong or missing secret
        ├── UnsupportedProtocol      unsupported-protocol (close 4400): a protocol other than 1
        ├── HelloRequired            invalid-message (close 4400): a message before hello succeeded was not
        │                            hello (nor, after a hello refused for want of room, ping)
        └── RefusedBeforeHello       any error before hello (close 4400), keeping that error's code

After any error but a :class:`ConnectionFatal` one the connection stays open and every scene and log
record held before it is intact.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "BridgeError",
    "ConnectionFatal",
    "HelloRequired",
    "InternalError",
    "InvalidMessage",
    "LogUnavailable",
    "RateLimited",
    "RefusedBeforeHello",
    "TooLarge",
    "TooManyConnections",
    "Unauthorized",
    "UnknownRuleset",
    "UnknownScene",
    "UnknownToken",
    "UnsupportedProtocol",
]


class BridgeError(Exception):
    """A problem to report to the client; ``details`` is JSON-safe."""

    code: ClassVar[str] = "internal-error"
    #: The request id, when it was read before the message was (a frame refused unparsed).
    request_id: str | None = None

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidMessage(BridgeError):
    code = "invalid-message"


class UnknownScene(BridgeError):
    code = "unknown-scene"


class UnknownToken(BridgeError):
    code = "unknown-token"


class UnknownRuleset(BridgeError):
    code = "unknown-ruleset"


class TooLarge(BridgeError):
    code = "too-large"


class RateLimited(BridgeError):
    code = "rate-limited"


class TooManyConnections(RateLimited):
    """A ``hello`` refused because its world already has its most connections. Not fatal: the connection
    stays open and unadmitted (still awaiting hello, counted for no world) until a later ``hello`` on it is
    admitted or the hello deadline closes it."""


class LogUnavailable(BridgeError):
    code = "log-unavailable"


class InternalError(BridgeError):
    code = "internal-error"


class ConnectionFatal(BridgeError):
    """After this error the bridge closes the connection with ``close_code``."""

    close_code: ClassVar[int] = 4400


class Unauthorized(ConnectionFatal):
    code = "unauthorized"
    close_code = 4401


class UnsupportedProtocol(ConnectionFatal):
    code = "unsupported-protocol"
    close_code = 4400


class HelloRequired(ConnectionFatal):
    code = "invalid-message"
    close_code = 4400


class RefusedBeforeHello(ConnectionFatal):
    """Any other error before ``hello``: its code, message and details, and then the connection closes."""

    close_code = 4400

    def __init__(self, error: BridgeError) -> None:
        super().__init__(error.message, **error.details)
        self.code = error.code  # type: ignore[misc]
