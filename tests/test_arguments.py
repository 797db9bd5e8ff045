"""The command line's option types: ports, hosts and numbers out of range are refused while parsing, named."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from bridge.arguments import at_least, finite_number, host, port


def refusal(parse: Callable[[str], object], text: str) -> str:
    """The message ``parse`` refuses ``text`` with (failing the test if it accepts it)."""
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        parse(text)
    return str(caught.value)


def test_a_port_is_0_to_65535_inclusive() -> None:
    """Ports 0 (pick a free one) and 65535 are accepted; -1 and 65536 are refused naming the range."""
    assert (port("0"), port("65535"), port("8765")) == (0, 65535, 8765)
    assert refusal(port, "65536") == "65536 is not a port (0 to 65535)"
    assert refusal(port, "-1") == "-1 is not a port (0 to 65535)"


def test_a_port_that_is_no_number_is_named() -> None:
    """A port that is no whole number is refused quoting what was typed."""
    assert refusal(port, "http") == "'http' is not a port number (0 to 65535)"
    assert refusal(port, "80.5") == "'80.5' is not a port number (0 to 65535)"


def test_addresses_are_checked_as_addresses() -> None:
    """IPv4 and IPv6 addresses pass (IPv6 brackets dropped); numbers that are no address are refused."""
    assert host("127.0.0.1") == "127.0.0.1"
    assert host("::1") == "::1" and host("[::1]") == "::1"
    assert host("0.0.0.0") == "0.0.0.0"
    for text in ("256.1.1.1", "1.2.3", "1..2.3", "::g", "[1:2:3]", "[::1", "::1]"):
        assert refusal(host, text) == f"{text!r} is not an IP address"


def test_only_an_ipv6_address_goes_in_square_brackets() -> None:
    """Square brackets are taken off an IPv6 address only: a bracketed name or IPv4 address is refused."""
    for text in ("[localhost]", "[127.0.0.1]", "[]"):
        assert refusal(host, text) == f"{text!r} is not an IPv6 address (only those go in square brackets)"
    for text in ("[localhost", "localhost]"):
        assert refusal(host, text) == f"{text!r} is neither an IP address nor a host name"


def test_host_names_follow_the_label_rules() -> None:
    """Host names of letters, digits and inner hyphens pass, with or without the root's trailing dot."""
    assert host("localhost") == "localhost"
    assert host("sightline-1.example.org") == "sightline-1.example.org"
    assert host("example.org.") == "example.org."
    assert host("a" * 63 + ".example") == "a" * 63 + ".example"


def test_malformed_host_names_are_refused() -> None:
    """A space, an edge hyphen, an empty label, a 64-character label or a name over 253 characters is refused."""
    too_long = ".".join(["a" * 50] * 6)  # 305 characters of valid labels
    for text in ("bad host", "-edge.org", "edge-.org", "a..b", "", "a" * 64 + ".org", too_long, "under_score"):
        assert refusal(host, text) == f"{text!r} is neither an IP address nor a host name"


def test_finite_number_refuses_what_is_not_finite() -> None:
    """Decimal numbers pass; `1e400`, `inf`, `-inf` and `nan` are refused as not finite, words as no number."""
    assert finite_number("2.5") == 2.5 and finite_number("-1e3") == -1000.0
    for text in ("1e400", "inf", "-inf", "nan"):
        assert refusal(finite_number, text) == f"{text!r} is not a finite number"
    assert refusal(finite_number, "ten") == "'ten' is not a number"


def test_at_least_accepts_its_minimum_and_refuses_below_it() -> None:
    """`at_least(0)` takes 0 and more; below it the message names the bound and the unit."""
    seconds = at_least(0, unit="seconds")
    assert seconds("0") == 0.0 and seconds("0.25") == 0.25
    assert refusal(seconds, "-0.5") == "-0.5 must be at least 0 seconds"
    assert refusal(seconds, "nan") == "'nan' is not a finite number"


def test_an_exclusive_minimum_refuses_the_minimum_itself() -> None:
    """With `exclusive`, the minimum itself is refused as not "more than" it; anything above passes."""
    minutes = at_least(0, exclusive=True, unit="minutes")
    assert refusal(minutes, "0") == "0 must be more than 0 minutes"
    assert minutes("0.001") == 0.001
    rate = at_least(2.5, exclusive=True)
    assert refusal(rate, "2.5") == "2.5 must be more than 2.5"
    assert rate("2.6") == 2.6


def test_a_maximum_refuses_what_is_over_it() -> None:
    """With `most`, the maximum itself passes and anything over it is refused naming the bound and the unit."""
    seconds = at_least(0, exclusive=True, unit="seconds", most=60)
    assert seconds("60") == 60.0 and seconds("0.5") == 0.5
    assert refusal(seconds, "60.5") == "60.5 must be at most 60 seconds"
    assert refusal(seconds, "0") == "0 must be more than 0 seconds"


def test_an_integer_option_takes_whole_numbers_only() -> None:
    """With `integer`, "1.5" and "1e3" are refused as not whole numbers; a whole number comes back as an int."""
    frames = at_least(1, integer=True)
    value = frames("4096")
    assert value == 4096 and isinstance(value, int)
    assert refusal(frames, "1.5") == "'1.5' is not a whole number"
    assert refusal(frames, "1e3") == "'1e3' is not a whole number"
    assert refusal(frames, "0") == "0 must be at least 1"


def test_argparse_refuses_a_bad_value_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    """A real parser exits 2 with "argument --port: … is not a port", the option named, no traceback."""
    parser = argparse.ArgumentParser(prog="sightline serve")
    parser.add_argument("--port", type=port)
    parser.add_argument("--burst", type=at_least(1, integer=True))
    with pytest.raises(SystemExit) as stopped:
        parser.parse_args(["--port", "99999"])
    assert stopped.value.code == 2
    assert "sightline serve: error: argument --port: 99999 is not a port (0 to 65535)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["--burst", "0"])
    assert "argument --burst: 0 must be at least 1" in capsys.readouterr().err
    assert parser.parse_args(["--port", "0", "--burst", "3"]) == argparse.Namespace(port=0, burst=3)
