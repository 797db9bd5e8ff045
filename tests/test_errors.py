"""The bridge's errors: each carries its contract code, the fatal ones their close code, and a message and details."""

from __future__ import annotations

import json

import pytest

from bridge import errors
from bridge.errors import (
    BridgeError,
    ConnectionFatal,
    HelloRequired,
    InternalError,
    InvalidMessage,
    LogUnavailable,
    RateLimited,
    RefusedBeforeHello,
    TooLarge,
    TooManyConnections,
    Unauthorized,
    UnknownRuleset,
    UnknownScene,
    UnknownToken,
    UnsupportedProtocol,
)

#: The error codes the contract lists under "## Errors" (/work/shared/contract/protocol-v1.md).
CONTRACT_CODES = (
    "invalid-message",
    "unknown-scene",
    "unknown-token",
    "unknown-ruleset",
    "unauthorized",
    "unsupported-protocol",
    "too-large",
    "rate-limited",
)

#: Errors after which the connection stays open, with their codes.
KEPT_OPEN = {
    InvalidMessage: "invalid-message",
    UnknownScene: "unknown-scene",
    UnknownToken: "unknown-token",
    UnknownRuleset: "unknown-ruleset",
    TooLarge: "too-large",
    RateLimited: "rate-limited",
    TooManyConnections: "rate-limited",
    LogUnavailable: "log-unavailable",
    InternalError: "internal-error",
}

#: Errors after which the bridge closes the connection: code and close code.
FATAL = {
    Unauthorized: ("unauthorized", 4401),
    UnsupportedProtocol: ("unsupported-protocol", 4400),
    HelloRequired: ("invalid-message", 4400),
}


@pytest.mark.parametrize(("error", "code"), KEPT_OPEN.items(), ids=lambda v: getattr(v, "__name__", v))
def test_each_error_that_keeps_the_connection_carries_its_code(error: type[BridgeError], code: str) -> None:
    """Each error after which the connection stays open has its code and is no ConnectionFatal.

    "After any error except `unauthorized` and `unsupported-protocol` the connection stays
    open and every scene and log record held before it is intact."
    """
    raised = error("what went wrong")
    assert raised.code == code
    assert not isinstance(raised, ConnectionFatal)


@pytest.mark.parametrize(("error", "codes"), FATAL.items(), ids=lambda v: getattr(v, "__name__", v))
def test_each_fatal_error_carries_its_code_and_close_code(error: type[ConnectionFatal], codes: tuple[str, int]) -> None:
    """Each connection-fatal error has its code and the close code the connection is closed with.

    "A wrong or missing secret: an `error` with code `unauthorized`, then close code 4401."
    """
    raised = error("refused")
    assert (raised.code, raised.close_code) == codes
    assert isinstance(raised, BridgeError)


def test_every_code_the_contract_lists_has_an_error() -> None:
    """Every code in the contract's list of error codes is carried by one of the exported errors."""
    codes = {getattr(errors, name).code for name in errors.__all__}
    assert set(CONTRACT_CODES) <= codes
    assert all(issubclass(getattr(errors, name), BridgeError) for name in errors.__all__)


def test_an_error_keeps_its_message_and_details() -> None:
    """The message is the exception's text and the keyword arguments are its JSON-safe details."""
    error = TooLarge("the scene has too many walls", limit="walls", value=60_001, max=50_000)
    assert str(error) == error.message == "the scene has too many walls"
    assert error.details == {"limit": "walls", "value": 60_001, "max": 50_000}
    assert json.loads(json.dumps(error.details)) == error.details
    assert InvalidMessage("no type").details == {}


def test_a_bare_bridge_error_is_an_internal_error_without_a_request_id() -> None:
    """A BridgeError of no subclass answers `internal-error`; `request_id` is unset until someone sets it."""
    error = BridgeError("a bug")
    assert error.code == "internal-error" and error.request_id is None
    error.request_id = "q7"
    assert InvalidMessage("another").request_id is None


def test_refused_before_hello_keeps_the_refused_errors_code_message_and_details() -> None:
    """An error before hello is answered with its own code, message and details, then the connection closes 4400."""
    refused = RefusedBeforeHello(TooLarge("frame too large", limit="frame-bytes", value=9, max=8))
    assert isinstance(refused, ConnectionFatal)
    assert (refused.code, refused.message, refused.close_code) == ("too-large", "frame too large", 4400)
    assert refused.details == {"limit": "frame-bytes", "value": 9, "max": 8}


def test_one_refusal_before_hello_does_not_change_anothers_code() -> None:
    """Each RefusedBeforeHello keeps its own code: a later one for another error leaves the first as it was."""
    first = RefusedBeforeHello(UnknownScene("no scene s1"))
    second = RefusedBeforeHello(RateLimited("too fast"))
    assert (first.code, second.code) == ("unknown-scene", "rate-limited")
    assert RefusedBeforeHello.code == BridgeError.code == "internal-error"
