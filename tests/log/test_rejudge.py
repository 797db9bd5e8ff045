"""``sightline log rejudge``: a logged game session judged again under another edition or ruleset."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from bridge.config import BridgeConfig
from bridge.log.records import RulingRecord
from bridge.log.rejudge import Outcome, Rejudge, RejudgeError
from bridge.log.rejudge_output import why_text
from bridge.log.sqlite import SqliteLogStore
from bridge.protocol import PROTOCOL
from bridge.server import run_bridge

INFINITY_EDITIONS = ("original", "1.2", "1.3", "2.1")


async def records_of(data_dir: Path) -> list[RulingRecord]:
    """Every record of the one session logged in ``data_dir``."""
    store = SqliteLogStore(data_dir / "sightline.db")
    await store.connect()
    try:
        (session,) = await store.list_sessions()
        return [record async for record in store.export(session.world, session.id)]
    finally:
        await store.close()


async def started_of(data_dir: Path) -> str:
    """When the one session logged in ``data_dir`` started, as the log's pages show it (``YYYY-MM-DD HH:MM:SS``)."""
    store = SqliteLogStore(data_dir / "sightline.db")
    await store.connect()
    try:
        (session,) = await store.list_sessions()
        return session.started.replace("T", " ")[:19]
    finally:
        await store.close()


def _pair(outcome: Outcome) -> tuple[str, str | None, str]:
    r = outcome.record
    return r.actor.name, r.target.name if r.target else None, r.action


@pytest.mark.parametrize("edition", INFINITY_EDITIONS)
async def test_demo_under_each_older_edition_changes_only_marksmanship_through_white_noise(
    demo_log: Path, edition: str
) -> None:
    """infinity-n4.md "Editions": each older edition changes one demo ruling only, Vik's shot through White Noise.

    docs/rules/infinity-n4.md, "Editions": `current` is "2.1 plus Marksmanship among those for whom White Noise is Zero"
    — so under every older edition exactly one demo ruling changes: Vik (Marksmanship) shooting Lin through the White
    Noise zone is allowed, at 0; nothing else the demo asks differs.
    """
    records = await records_of(demo_log)
    assert len(records) == 13
    outcomes = list(Rejudge(edition=edition).judge_all(records))
    changed = [o for o in outcomes if o.status == "changed"]
    assert [_pair(o) for o in changed] == [("Vik", "Lin", "bs-attack")]
    (vik,) = changed
    assert vik.direction == "now-allowed" and vik.after is not None
    assert (vik.after["allowed"], vik.after["modifier"], vik.after["edition"]) == (True, 0, edition)
    assert any("Marksmanship" in citation for citation in vik.dropped)
    assert all(o.status == "same" for o in outcomes if o is not vik)


async def test_demo_under_current_changes_nothing(demo_log: Path) -> None:
    """The demo was played under `current`: judged again under `current`, no ruling changes."""
    outcomes = list(Rejudge(edition="current").judge_all(await records_of(demo_log)))
    assert {o.status for o in outcomes} == {"same"} and len(outcomes) == 13


async def test_the_demos_log_names_its_world(demo_log: Path) -> None:
    """The demo's hello sends the world's name: its log's records carry "Sightline demo" beside the id."""
    assert {(r.world, r.world_name) for r in await records_of(demo_log)} == {("w-sightline-demo", "Sightline demo")}


async def test_demo_under_codeone_loses_every_zone_mod(demo_log: Path) -> None:
    """002: "This N4 rule is not used in CodeOne" — under infinity-codeone no ruling applies a zone MOD.

    Re-judged as `infinity-codeone`, every ruling that a zone changed (a MOD, a block, a forbidden Combat Jump) changes.
    """
    records = await records_of(demo_log)
    outcomes = list(Rejudge(ruleset="infinity-codeone").judge_all(records))
    zone_ruled = {
        r.id
        for r in records
        if any(m.get("source") == "zone" and m.get("applied") for m in r.modifiers)
        or (not r.allowed and any(m.get("source") == "zone" for m in r.modifiers))
    }
    assert len(zone_ruled) == 8
    assert {o.record.id for o in outcomes if o.status == "changed"} == zone_ruled
    for outcome in outcomes:
        assert outcome.after is not None and outcome.after["ruleset"] == "infinity-codeone"
        assert not [m for m in outcome.after["modifiers"] if m["source"] == "zone" and m["applied"]]
        if outcome.record.id in zone_ruled:
            assert outcome.direction in ("easier", "now-allowed")
            assert outcome.after["allowed"] is True
    wall = next(o for o in outcomes if _pair(o) == ("Vik", "Sol", "bs-attack"))
    assert wall.status == "same" and wall.after is not None and wall.after["allowed"] is False


async def _log_session(data_dir: Path, scene: dict[str, Any], asks: Sequence[dict[str, Any]]) -> None:
    """Play ``asks`` against a real bridge on ``scene``, every ruling logged into ``data_dir``."""
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=data_dir, secret="s3cret-test")
    async with run_bridge(config) as (host, port), connect(f"ws://{host}:{port}/ws") as ws:
        hello = {"type": "hello", "protocol": PROTOCOL, "world": "w-gurps", "secret": "s3cret-test"}
        await ws.send(json.dumps(hello))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "scene.sync", "id": "s", "scene": scene}))
        assert json.loads(await ws.recv())["type"] == "scene.synced"
        for number, ask in enumerate(asks):
            await ws.send(json.dumps({"type": "adjudicate", "id": f"a{number}", "scene": scene["id"], **ask}))
            answer = json.loads(await ws.recv())
            assert answer["type"] == "adjudication" and answer["logged"] is True, answer


def _gurps_scene() -> dict[str, Any]:
    token = {"width": 1, "height": 1, "elevation": 0}
    return {
        "id": "s-crypt",
        "name": "Crypt",
        "grid": {"size": 100, "distance": 1, "units": "yd"},
        "rules": {"ruleset": "gurps-4e"},
        "environment": {"darkness": -5},
        "regions": [
            {
                "id": "r-pitch",
                "name": "Pitch black",
                "shapes": [{"type": "rectangle", "x": 500, "y": 0, "width": 300, "height": 300, "hole": False}],
                "zone": {"type": "darkness", "total": True},
            }
        ],
        "tokens": [
            {"id": "t-a", "name": "Brother Ash", "x": 0, "y": 0, "traits": ["night-vision-3"], **token},
            {"id": "t-b", "name": "Ghoul", "x": 600, "y": 100, **token},
            {"id": "t-c", "name": "Acolyte", "x": 0, "y": 600, "light": {"radius": 3}, **token},
            {"id": "t-d", "name": "Torchbearer", "x": 100, "y": 0, "light": {"radius": 3}, **token},
        ],
        "walls": [],
    }


async def test_gurps_session_as_traveller_lists_every_ruling_that_cannot_carry_over(tmp_path: Path) -> None:
    """A GURPS session judged as Traveller lists every ruling as not carried over, saying what is missing.

    GURPS's actions (attack, dodge) and traits (Night Vision) have no Traveller counterpart; no ruling is dropped.
    """
    asks = [
        {"actor": "t-a", "target": "t-b", "action": "attack"},
        {"actor": "t-b", "target": "t-a", "action": "dodge"},
        {"actor": "t-c", "target": "t-b", "action": "attack"},
    ]
    await _log_session(tmp_path, _gurps_scene(), asks)
    records = await records_of(tmp_path)
    outcomes = list(Rejudge(ruleset="traveller").judge_all(records))
    assert [o.status for o in outcomes] == ["untranslatable"] * 3
    assert "traveller has no action 'attack'" in (outcomes[0].why or "")
    assert "trait 'night-vision-3'" in (outcomes[0].why or "")
    assert "zone type 'darkness'" in (outcomes[0].why or "")
    assert "action 'dodge'" in (outcomes[1].why or "")
    judge = Rejudge(ruleset="traveller")
    assert why_text(outcomes[0], judge, "en") == (
        "Traveller has no action 'Attack', trait 'Night Vision 3', zone type 'Darkness'"
    )
    assert why_text(outcomes[0], judge, "es") == (
        "Traveller no tiene la acción «Ataque», el rasgo «Visión Nocturna 3», el tipo de zona «Oscuridad»"
    )
    same = list(Rejudge(ruleset="gurps-4e", edition="current").judge_all(records))
    assert [o.status for o in same] == ["same"] * 3


async def test_gurps_session_keeps_the_light_and_darkness_it_was_judged_in(tmp_path: Path) -> None:
    """003: the log keeps the light and darkness a GURPS ruling read; judged again, it matches entry for entry.

    The situation the log keeps is enough to judge again: the torchbearer's light (3 yd) beside Brother Ash, and the
    scene's darkness (−5), are what the live ruling read (003: a light "turns" darkness into −3 within its radius), and
    the re-judged ruling matches it entry for entry.
    """
    asks = [
        {"actor": "t-b", "target": "t-a", "action": "attack"},
        {"actor": "t-c", "target": "t-b", "action": "attack"},
    ]
    await _log_session(tmp_path, _gurps_scene(), asks)
    records = await records_of(tmp_path)
    lit = records[0]
    assert lit.snapshot is not None and lit.snapshot.setting["environment"] == {"darkness": -5}
    assert lit.situation is not None and [t["id"] for t in lit.situation["tokens"]] == ["t-b", "t-a", "t-d"]
    assert lit.modifier == -3
    assert records[1].situation is not None
    assert [t["id"] for t in records[1].situation["tokens"]] == ["t-c", "t-b"]  # no light reaches the ghoul
    for outcome in Rejudge(edition="current").judge_all(records):
        assert outcome.status == "same" and outcome.after is not None
        after = [{k: v for k, v in m.items() if v is not None} for m in outcome.after["modifiers"]]
        assert after == outcome.record.modifiers
    unlit = lit.model_copy(update={"situation": {**lit.situation, "tokens": lit.situation["tokens"][:2]}})
    (dark,) = Rejudge(edition="current").judge_all([unlit])
    assert dark.status == "changed" and dark.after is not None and dark.after["modifier"] == -5


async def test_a_ruling_with_an_option_its_ruleset_does_not_read_is_logged_with_its_note_and_judged_the_same(
    tmp_path: Path,
) -> None:
    """A GURPS attack asked with Traveller's ``size`` is logged with its note, and judged again the same, note too."""
    asks = [{"actor": "t-a", "target": "t-b", "action": "attack", "options": {"size": 2, "warm": False}}]
    await _log_session(tmp_path, _gurps_scene(), asks)
    (record,) = await records_of(tmp_path)
    note = "Option “size” is an input of another ruleset (Traveller): ignored by GURPS 4e."
    assert record.notes[0] == note
    assert record.situation is not None and record.situation["options"] == {"size": 2, "warm": False}
    (outcome,) = Rejudge(edition="current").judge_all([record])
    assert outcome.status == "same" and outcome.after is not None
    assert outcome.after["notes"] == record.notes


async def test_records_without_their_situation_are_listed_not_dropped(demo_log: Path) -> None:
    """A record written before the log kept each ruling's situation is reported as not carried over."""
    (first, *_) = await records_of(demo_log)
    old = first.model_copy(update={"situation": None})
    (outcome,) = Rejudge(edition="1.2").judge_all([old])
    assert outcome.status == "untranslatable"
    assert outcome.why == "recorded before the log kept each ruling's whole situation"


def test_unknown_ruleset_or_edition_is_refused() -> None:
    """A ruleset or edition that does not exist is refused by name before anything is read."""
    with pytest.raises(RejudgeError, match="unknown ruleset 'dnd'"):
        Rejudge(ruleset="dnd")
    with pytest.raises(RejudgeError, match=r"unknown edition '9\.9'"):
        Rejudge(ruleset="infinity-n4", edition="9.9")
    with pytest.raises(RejudgeError, match="name an edition"):
        Rejudge()


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bridge", "log", "rejudge", *argv], capture_output=True, text=True, timeout=120
    )


async def test_console_command_formats_and_the_log_stays_as_it_was(demo_log: Path) -> None:
    """The real command lists the one changed ruling in every format; the log stays byte-for-byte unchanged.

    The table, JSONL (summary last), CSV (summary on standard error) and Markdown list it with both sides' reasons;
    the summary names the unnamed session by its start and world.
    """
    records = await records_of(demo_log)
    session = records[0].session
    assert session is not None
    before = [r.model_dump_json() for r in records]
    common = ("--session", session, "--data-dir", str(demo_log), "--edition", "1.3")

    table = _cli(*common)
    assert table.returncode == 0, table.stderr
    assert "Vik → Lin" in table.stdout and "before: not allowed  →  after: allowed, 0" in table.stdout
    assert "rulings re-judged: 13; changed: 1; unchanged: 12; cannot carry over: 0." in table.stdout
    assert re.search(
        r"^Session \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(Sightline demo\), under Update 1\.3 — ", table.stdout, re.M
    )
    assert session not in table.stdout  # the unnamed session by its start and world, as the pages name it

    jsonl = _cli(*common, "--format", "jsonl")
    lines = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [line.get("status") for line in lines[:-1]] == ["changed"]
    assert lines[0]["before"]["reasons"] == ["White Noise Zone"] and lines[0]["after"]["allowed"] is True
    assert lines[-1]["summary"]["changed"] == 1 and lines[-1]["summary"]["directions"] == {"now-allowed": 1}

    listed = _cli(*common, "--format", "csv", "--all")
    rows = list(csv.DictReader(io.StringIO(listed.stdout)))
    assert len(rows) == 13 and sum(row["status"] == "changed" for row in rows) == 1
    assert "changed: 1;" in listed.stderr

    md = _cli(*common, "--format", "md")
    assert md.stdout.startswith("| Time | Actor | Target |") and "| Vik | Lin |" in md.stdout

    assert [r.model_dump_json() for r in await records_of(demo_log)] == before


async def test_console_command_in_spanish(demo_log: Path) -> None:
    """With --locale es the real command writes the table, the Markdown and the CSV's summary in Spanish, word for word.

    The ruling's reasons and the citations are the log's own texts (the demo was played in English) and stay as logged;
    the CSV's columns and cells stay data, exactly as in English.
    """
    records = await records_of(demo_log)
    session = records[0].session
    assert session is not None
    vik = next(r for r in records if (r.actor.name, r.target.name if r.target else None) == ("Vik", "Lin"))
    common = ("--session", session, "--data-dir", str(demo_log), "--edition", "1.3", "--locale", "es")
    summary = (
        f"Sesión {await started_of(demo_log)} UTC (Sightline demo), con Actualización 1.3 — resoluciones juzgadas de "
        "nuevo: 13; cambian: 1; sin cambios: 12; "
        "no se pueden trasladar: 0."
    )

    table = _cli(*common)
    assert table.returncode == 0, table.stderr
    block, rest = table.stdout.split("\n\n")
    assert block.splitlines() == [
        f"{vik.time}  Vik → Lin  Ataque CD",
        "  antes: no permitida  →  después: permitida, 0  (ahora permitida)",
        "  motivos antes: White Noise Zone",
        "  motivos ahora: —",
    ]
    lines = rest.splitlines()
    assert lines[:3] == [
        summary,
        "  ahora permitida: 1",
        "Reglas que marcaron la diferencia (+ citada ahora, − ya no citada):",
    ]
    assert len(lines) == 8 and all(line.startswith(("  1 × + ", "  1 × − ")) for line in lines[3:])

    md = _cli(*common, "--format", "md")
    assert md.stdout.splitlines()[:3] == [
        "| Hora | Actor | Objetivo | Acción | Antes | Después | Motivos antes | Motivos ahora |",
        "|---|---|---|---|---|---|---|---|",
        f"| {vik.time} | Vik | Lin | Ataque CD | no permitida | permitida, 0 | White Noise Zone |  |",
    ]
    assert f"\n- {summary}\n- ahora permitida: 1\n" in md.stdout

    spanish = _cli(*common, "--format", "csv", "--all")
    english = _cli(*common[:-2], "--format", "csv", "--all")
    assert spanish.stdout == english.stdout and spanish.stdout.startswith(
        "\ufeffrecord,time,actor,target,action,status,"
    )
    assert spanish.stderr.splitlines()[:2] == [summary, "  ahora permitida: 1"]


def test_console_command_refuses_an_unknown_edition_in_one_line(demo_log: Path) -> None:
    """An unknown edition: one line naming it, exit 2, no traceback."""
    result = _cli("--session", "x", "--data-dir", str(demo_log), "--edition", "0.9")
    assert result.returncode == 2
    assert result.stderr.strip().startswith("sightline log rejudge: unknown edition '0.9'")
    assert "Traceback" not in result.stderr
