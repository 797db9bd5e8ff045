"""The GM pages as HTML text: the login form, the session list and a session's rulings with its map.

Pure functions from data to markup (every value escaped); :mod:`.http` serves them. The session page
carries the rows' sight lines and the scene snapshots as JSON in a ``<script type="application/json">``
block, which ``static/log.js`` reads to draw the map when a row is selected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Any, Final
from urllib.parse import quote, urlencode

from ..core.rules import RULESETS
from ..core.rules.data_files import vocabulary
from ..core.rules.labels import label, readable_citation
from ..palette import PALETTE
from .export import candidate_text, crossing_text
from .i18n import TEXTS
from .records import RulingRecord
from .store import LAST_PAGE, ORDERS, LoggedSession, SessionChoices

__all__ = ["login_page", "session_page", "sessions_page", "world_html"]

_STYLE = """
body{font:15px/1.4 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d2d3a;color:#fff;padding:.6rem 1rem;display:flex;gap:1rem;align-items:center}
header h1{font-size:1.1rem;margin:0;flex:1}header form{margin:0}
header button{background:none;color:#fff;border:1px solid #9fb3c8;border-radius:4px;
padding:.2rem .6rem;cursor:pointer}
main{padding:1rem;max-width:1800px;margin:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #dde1e6;padding:.3rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#eef1f4;font-weight:600}
th a.sort{color:inherit}th[aria-sort=ascending] a.sort::after{content:"\\a0\\25B2"}
th[aria-sort=descending] a.sort::after{content:"\\a0\\25BC"}
tbody tr.ruling{cursor:pointer}tbody tr.ruling:hover{background:#f0f6ff}
tbody tr.ruling.changed{background:#fff1c2;box-shadow:inset 4px 0 #d68910}
tbody tr.ruling.untranslatable{box-shadow:inset 4px 0 #922b21}
form.rejudge{margin:.5rem 0}
tbody tr.ruling[aria-selected=true],tbody tr.ruling[aria-selected=true]:hover{background:#cfe3ff}
tr.override td:first-child{border-left:4px solid #c0392b}
.denied{color:#b03a2e;font-weight:600}
details.why summary{cursor:pointer;color:#1f5f99}
details.why:not([open]){display:inline}details.why:not([open]) summary{display:inline;margin-left:.3em}
details.why ul{margin:.2rem 0;padding-left:1.1rem}
details.why p{margin:.2rem 0;font-weight:600}.muted{color:#68737d}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.5rem 0 1rem}
form.filters label{display:flex;flex-direction:column;font-size:.85rem}
form.filters .hint{flex-basis:100%;margin:0;font-size:.8rem}
.layout{display:grid;grid-template-columns:minmax(0,1fr) minmax(280px,29%);gap:1rem;align-items:start}
.rows{min-width:0;overflow-x:auto}
#rulings td.notes{min-width:8rem}#rulings td.crossings{min-width:6.5rem}
#rulings th,#rulings td{padding:.3rem .4rem}
#rulings td.mod,#rulings td.allowed{white-space:nowrap}
.map-pane{position:sticky;top:.5rem;min-width:0}
#map{display:block;width:100%;height:auto;max-height:calc(100vh - 6rem);background:#fff;border:1px solid #dde1e6}
#map-caption{margin:.4rem 0}
#map :is(line,circle,rect,ellipse,polygon){vector-effect:non-scaling-stroke}
nav.paging{margin:.8rem 0;display:flex;gap:1rem}
@media (max-width:900px){
main{padding:.5rem}
.layout{grid-template-columns:minmax(0,1fr);gap:.5rem}
.map-pane{order:-1;position:static}
#map{max-height:32vh}
.rows{max-height:56vh;overflow:auto;border:1px solid #dde1e6}
#rulings td.notes{min-width:18rem}#rulings td.crossings{min-width:11rem}
#rulings thead th{position:sticky;top:0;z-index:1}
}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.error{background:#fdecea;color:#8a1f11;padding:.5rem;border-radius:4px}
.login{max-width:24rem;margin:3rem auto;background:#fff;padding:1.5rem;border-radius:6px}
.login input{width:100%;box-sizing:border-box;margin:.3rem 0 1rem;padding:.4rem}
"""


def _document(lang: str, title: str, body: str, *, header: str = "") -> str:
    t = TEXTS[lang]
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · {escape(t['title'])}</title><style>{_STYLE}</style></head>"
        f"<body><header><h1>{escape(t['title'])}</h1>{header}</header><main>{body}</main></body></html>\n"
    )


def _logout(lang: str, root: str = "") -> str:
    t = TEXTS[lang]
    return (
        f'<form method="post" action="{escape(root)}/log/logout?lang={lang}">'
        f'<button type="submit" class="link">{escape(t["logout"])}</button></form>'
    )


def login_page(lang: str, *, next_url: str, failed: bool, expired: bool = False, root: str = "") -> str:
    """The sign-in form; posting it sets the HttpOnly cookie that the other pages read.

    ``root`` is the path the bridge is reached under behind a proxy (``--public-url``'s path, "" at the
    top): every link, form and script of the pages starts with it. ``expired``: the browser came with a
    sign-in the bridge no longer knows (signed out, or the bridge restarted), which the form says."""
    t = TEXTS[lang]
    error = f'<p class="error" role="alert">{escape(t["wrong_secret"])}</p>' if failed else ""
    if expired and not failed:
        error = f'<p class="error" role="alert">{escape(t["expired"])}</p>'
    body = (
        f'<form class="login" method="post" action="{escape(root)}/log/login?lang={lang}">'
        f"<h2>{escape(t['login'])}</h2><p>{escape(t['login_help'])}</p>{error}"
        f'<label>{escape(t["secret"])}<input type="password" name="secret" autocomplete="current-password"'
        " required autofocus></label>"
        f'<input type="hidden" name="next" value="{escape(next_url)}">'
        f'<button type="submit">{escape(t["login"])}</button></form>'
    )
    return _document(lang, t["login"], body)


#: After a header or a field of times: "(UTC)" in the markup, the reader's own zone once ``times.js`` ran.
ZONE_LABEL = '<span class="tz" data-tz> (UTC)</span>'


def _short_time(text: str | None) -> str:
    if not text:
        return ""
    return text.replace("T", " ")[:19]


def _time(text: str | None) -> str:
    """A UTC time as a ``<time>`` element: UTC in the markup (marked so), the reader's local time once
    ``log.js`` has run (it rewrites every ``time[datetime]`` with the browser's time zone)."""
    if not text:
        return ""
    return f'<time datetime="{escape(text)}">{escape(_short_time(text))} UTC</time>'


def world_html(world: str, name: str) -> str:
    """A world as people know it: its name, its id only as the name's tooltip; the id itself (muted)
    when the world never sent a name (a client older than ``hello.world_name``)."""
    if name:
        return f'<span class="world" title="{escape(world)}">{escape(name)}</span>'
    return f'<span class="world muted">{escape(world)}</span>'


def _ended(t: Mapping[str, str], session: LoggedSession, idle_timeout: timedelta | None) -> str:
    """When a session ended; "open" — or, with ``idle_timeout``, its last ruling's time marked idle when no
    ruling came for that long (the world's next ruling will close it there: ``LoggedSession.state``)."""
    if session.ended:
        return _time(session.ended)
    if idle_timeout is not None and session.state(datetime.now(UTC), idle_timeout) == "idle":
        return f'{_time(session.last_activity)} <span class="muted idle">({escape(t["idle"])})</span>'
    return f'<span class="muted">{escape(t["open"])}</span>'


def sessions_page(
    lang: str, sessions: Sequence[LoggedSession], *, root: str = "", idle_timeout: timedelta | None = None
) -> str:
    """Every session the secret can see, newest first, each linking to its page (``idle_timeout``: the
    store's, by which a session no ruling came to for that long shows as idle, ended at its last ruling)."""
    t = TEXTS[lang]
    if not sessions:
        body = f"<h2>{escape(t['sessions'])}</h2><p>{escape(t['no_sessions'])}</p>"
        return _document(lang, t["sessions"], body, header=_logout(lang, root))
    rows = []
    for s in sessions:
        href = f"{root}/log/{_path(s.world)}/{_path(s.id)}?lang={lang}"
        name = escape(s.name) if s.name else _time(s.started)
        ended = _ended(t, s, idle_timeout)
        rows.append(
            f'<tr><td>{world_html(s.world, s.world_name)}</td><td><a href="{escape(href)}">{name}</a></td>'
            f"<td>{_time(s.started)}</td><td>{ended}</td><td>{s.rulings}</td></tr>"
        )
    body = (
        f'<h2>{escape(t["sessions"])}</h2><table id="sessions"><thead><tr>'
        f'<th scope="col">{escape(t["world"])}</th><th scope="col">{escape(t["session"])}</th>'
        f'<th scope="col">{escape(t["started"])}{ZONE_LABEL}</th><th scope="col">{escape(t["ended"])}{ZONE_LABEL}</th>'
        f'<th scope="col">{escape(t["rulings"])}</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    return _document(lang, t["sessions"], body + _local_times(root), header=_logout(lang, root))


def _local_times(root: str) -> str:
    """Every ``time[datetime]`` shown in the reader's own time zone and language (``static/times.js``, a
    file of its own: the pages' Content-Security-Policy refuses inline scripts); without script the UTC
    text stays, marked "UTC"."""
    return f'<script src="{escape(root)}/log/static/times.js" defer></script>'


def _path(segment: str) -> str:
    return quote(segment, safe="")


def _party(record: RulingRecord, which: str) -> str:
    party = record.actor if which == "actor" else record.target
    if party is None:
        return ""
    return escape(party.name or party.id)  # tokens by name; a token without one keeps its id


def _crossings(record: RulingRecord, lang: str, regions: Mapping[str, str] | None = None) -> str:
    return "<br>".join(escape(crossing_text(record, c, lang, regions)) for c in record.crossings)


def _json_for_script(data: Any) -> str:
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e")


def rejudge_choices(lang: str) -> list[tuple[str, str]]:
    """Every ``ruleset:edition`` a page can re-judge under, with its label (ruleset title — edition)."""
    rows = vocabulary().rulesets
    return [
        (f"{rid}:{edition}", f"{rows[rid].title} — {label(rid, 'edition', edition, lang)}")
        for rid, ruleset in RULESETS.items()
        for edition in ruleset.editions
    ]


def _rejudged_cell(t: Mapping[str, str], outcome: Mapping[str, Any] | None) -> tuple[str, str]:
    """The "Re-judged" cell of a row and the row's extra class."""
    if outcome is None:
        return "", ""
    if outcome["status"] == "untranslatable":
        return (
            f'<span class="denied">{escape(t["cannot_carry"])}</span>: '
            f"{escape(outcome.get('why_text') or outcome['why'] or '')}",
            " untranslatable",
        )
    after = outcome["after"]
    verdict = t["yes"] if after["allowed"] else t["no"]
    mod = "" if after["modifier"] is None else f" {after['modifier']:+d}" if after["modifier"] else " 0"
    if outcome["status"] == "same":
        return f'<span class="muted">{escape(t["unchanged"])}</span>', ""
    reasons = "<br>".join(escape(reason) for reason in after["reasons"])
    direction = escape(t.get(outcome["direction"] or "", ""))
    return f"<strong>{escape(verdict + mod)}</strong> ({direction})<br>{reasons}", " changed"


def _rejudge_form(
    t: Mapping[str, str], lang: str, base: str, filters: Mapping[str, str], chosen: str, summary: str
) -> str:
    options = [("", t["rejudge_none"]), *rejudge_choices(lang)]
    select = "".join(
        f'<option value="{escape(value)}"{" selected" if value == chosen else ""}>{escape(label)}</option>'
        for value, label in options
    )
    kept = "".join(
        f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">'
        for k, v in filters.items()
        if v and k != "rejudge"
    )
    return (
        f'<form class="rejudge" method="get" action="{escape(base)}" aria-label="{escape(t["rejudge"])}">'
        f'<input type="hidden" name="lang" value="{lang}">{kept}'
        f'<label>{escape(t["rejudge_help"])} <select name="rejudge" id="rejudge">{select}</select></label>'
        f'<button type="submit" id="rejudge-go">{escape(t["rejudge_go"])}</button>'
        + (f' <span id="rejudge-summary">{escape(summary)}</span>' if summary else "")
        + "</form>"
    )


def _signed(value: int | None) -> str:
    """A modifier as players read it: +3, −6, 0; "" for none."""
    if value is None:
        return ""
    return f"+{value}" if value > 0 else f"\u2212{-value}" if value < 0 else "0"


def _why_body(record: RulingRecord, lang: str) -> str:
    """What the ruling weighed and the rules it stands on, for its "Why": every candidate MOD (applied or
    not, with its reason) and every citation by its source's title; "" when it has neither."""
    if not record.modifiers and not record.citations:
        return ""
    t = TEXTS[lang]
    parts = []
    if record.modifiers:
        items = "".join(f"<li>{escape(candidate_text(m, lang))}</li>" for m in record.modifiers)
        parts.append(f'<ul class="candidates">{items}</ul>')
    if record.citations:
        items = "".join(f"<li>{escape(readable_citation(c))}</li>" for c in record.citations)
        parts.append(f'<p class="sources-heading">{escape(t["sources"])}</p><ul class="citations">{items}</ul>')
    return "".join(parts)


def _scene_name(record: RulingRecord, scenes: Mapping[str, str]) -> str:
    """A ruling's scene by its name (its snapshot's, else the session's latest for that scene)."""
    if record.snapshot is not None and record.snapshot.name:
        return record.snapshot.name
    return scenes.get(record.scene) or record.scene  # a scene never named keeps its id


def _difficulty(record: RulingRecord, lang: str) -> str:
    """A Traveller ruling's difficulty by its label ("Difficult", "Difícil"); "" for other rulesets."""
    value = record.details.get("difficulty")
    return label(record.ruleset, "difficulty", str(value), lang) if value else ""


def _map_tokens(record: RulingRecord) -> list[dict[str, Any]]:
    """The tokens the ruling read (its ``situation``), as the map draws them: name, top-left corner, size
    in grid squares (``w``, ``h``: left out when 1) and who they were (``role``: ``actor`` or ``target``;
    left out for any other)."""
    tokens = (record.situation or {}).get("tokens") or []
    target = record.target.id if record.target else None
    out = []
    for token in tokens:
        if not isinstance(token, Mapping):
            continue
        tid = token.get("id")
        role = "actor" if tid == record.actor.id else "target" if tid == target else "other"
        drawn = {"name": str(token.get("name") or tid or ""), "x": token.get("x", 0), "y": token.get("y", 0)}
        for short, size in (("w", token.get("width", 1)), ("h", token.get("height", 1))):
            if size != 1:  # one square, the usual size, is left out (log.js reads a missing size as 1)
                drawn[short] = size
        if role != "other":
            drawn["role"] = role
        out.append(drawn)
    return out


#: The page sizes the filter form offers (the API takes any from 1 to 1,000); 100 unless asked.
PAGE_SIZES: Final = (25, 100, 250, 1000)
DEFAULT_PAGE_SIZE: Final = 100

#: The columns a GM can sort the table by, each with its order's name (``ORDERS``; "-" before it reverses it).
_SORTABLE: Final = {"time": "time", "actor": "actor", "target": "target", "mod": "mod"}


def _header(t: Mapping[str, str], column: str, order: str, base: str, query: Mapping[str, str], lang: str) -> str:
    """A column's header; a sortable one is a link (keyboard-reachable) that sorts by it — the other way
    round when the table is already sorted by it — and says how the table is sorted (``aria-sort``)."""
    text = escape(t[column]) + (ZONE_LABEL if column == "time" else "")
    key = _SORTABLE.get(column)
    if key is None:
        return f'<th scope="col">{text}</th>'
    current = order.lstrip("-") == key
    sort = (' aria-sort="descending"' if order.startswith("-") else ' aria-sort="ascending"') if current else ""
    wanted = (key if order.startswith("-") else "-" + key) if current else key
    kept = {k: v for k, v in query.items() if k != "order"}
    href = base + "?" + urlencode({**kept, **({"order": wanted} if wanted != "time" else {}), "lang": lang})
    return f'<th scope="col"{sort}><a class="sort" data-order="{wanted}" href="{escape(href)}">{text}</a></th>'


def _datalist(name: str, values: Sequence[str]) -> str:
    options = "".join(f'<option value="{escape(v)}"></option>' for v in dict.fromkeys(values) if v)
    return f'<datalist id="{name}-choices">{options}</datalist>'


def session_page(
    lang: str,
    session: LoggedSession,
    records: Sequence[RulingRecord],
    *,
    filters: Mapping[str, str],
    next_cursor: str | None,
    previous_cursor: str | None = None,
    choices: SessionChoices | None = None,
    error: str | None = None,
    rejudge: str = "",
    rejudged: Mapping[str, Mapping[str, Any]] | None = None,
    snapshot_keys: Mapping[str, str] | None = None,
    root: str = "",
    idle_timeout: timedelta | None = None,
) -> str:
    """A session's rulings (one page), the filter form, paging, export links and the map.

    The filters take any part of a name or label, whatever its case, and offer the session's own actors,
    targets and actions as choices (``choices``, which also names the scenes). Paging goes to the first,
    the previous (``previous_cursor``) and the next (``next_cursor``) page.

    With ``rejudged`` (record id → :func:`~bridge.log.rejudge_output.outcome_wire`, for ``rejudge``,
    a ``ruleset:edition`` choice) each row shows its re-judged verdict beside the original, changed rows
    are highlighted, and the map draws the re-judged line beside the original.

    The page carries each row's snapshot *key* (``snapshot_keys``, record id → key, or the record's own
    snapshot), never the snapshot: the map script fetches one when it draws it, so a page's size is
    bounded by its rows however big and however many the scene versions are (issue 12). It carries the
    tokens each ruling read (from its ``situation``), which the map draws over the scene.
    """
    t = TEXTS[lang]
    choices = choices or SessionChoices([], [], [], {})
    base = f"{root}/log/{_path(session.world)}/{_path(session.id)}"
    api = f"{root}/api/worlds/{_path(session.world)}/sessions/{_path(session.id)}"

    def field(name: str, label_key: str, kind: str = "text", listed: bool = False) -> str:
        value = escape(filters.get(name, ""))
        extra = f' list="{name}-choices" autocomplete="off"' if listed else ""
        zone = ZONE_LABEL if kind == "datetime-local" else ""  # typed in the zone the table shows
        text = f"<span>{escape(t[label_key])}{zone}</span>" if zone else escape(t[label_key])
        return f'<label>{text}<input type="{kind}" name="{name}" value="{value}"{extra}></label>'

    allowed_value = filters.get("allowed", "")
    options = "".join(
        f'<option value="{v}"{" selected" if v == allowed_value else ""}>{escape(t[k])}</option>'
        for v, k in (("", "any"), ("true", "yes"), ("false", "no"))
    )
    action_labels = sorted({label(None, "action", a, lang) for a in choices.actions})
    size = filters.get("limit") or str(DEFAULT_PAGE_SIZE)
    sizes = [str(n) for n in PAGE_SIZES] + ([size] if size not in {str(n) for n in PAGE_SIZES} else [])
    size_options = "".join(f"<option{' selected' if v == size else ''}>{escape(v)}</option>" for v in sizes)
    order = filters.get("order") or "time"
    order_options = "".join(
        f'<option value="{v}"{" selected" if v == order else ""}>{escape(t["order_" + v])}</option>' for v in ORDERS
    )
    form = (
        f'<form class="filters" method="get" action="{escape(base)}" aria-label="{escape(t["filters"])}">'
        f'<input type="hidden" name="lang" value="{lang}">'
        + (f'<input type="hidden" name="rejudge" value="{escape(rejudge)}">' if rejudge else "")
        + f'<input type="hidden" name="tz" value="{escape(filters.get("tz", ""))}">'
        + field("actor", "actor", listed=True)
        + field("target", "target", listed=True)
        + field("action", "action", listed=True)
        + f'<label>{escape(t["allowed"])}<select name="allowed">{options}</select></label>'
        + f'<label>{escape(t["order"])}<select name="order">{order_options}</select></label>'
        + f'<label>{escape(t["page_size"])}<select name="limit">{size_options}</select></label>'
        + field("from", "from", "datetime-local")
        + field("to", "to", "datetime-local")
        + f'<button type="submit" id="apply">{escape(t["filter"])}</button>'
        f'<a href="{escape(base)}?lang={lang}">{escape(t["clear"])}</a>'
        + _datalist("actor", choices.actors)
        + _datalist("target", choices.targets)
        + _datalist("action", action_labels)
        + f'<p class="muted hint">{escape(t["filter_help"])}</p></form>'
    )
    with_difficulty = any(r.details.get("difficulty") for r in records)
    by_id = {r.id: r for r in records if r.id}
    rows: list[str] = []
    lines: dict[str, Any] = {}
    zone_labels: dict[str, str] = {}
    labelled: set[str] = set()
    whys: dict[str, int] = {}
    snapshot_numbers: dict[str, int] = {}
    for r in records:
        rid = r.id or ""
        key = (snapshot_keys or {}).get(rid) or (r.snapshot.key if r.snapshot else None)
        scene_name = _scene_name(r, choices.scenes)
        difficulty = _difficulty(r, lang)
        lines[rid] = {
            "line": r.line,
            # The snapshot by its number in ``snapshots`` (a key is sent once, however many rows share it).
            "snapshot": None if key is None else snapshot_numbers.setdefault(key, len(snapshot_numbers)),
            "allowed": r.allowed,
            "modifier": r.modifier,
            "actor": r.actor.name or r.actor.id,
            "action": label(r.ruleset, "action", r.action, lang),
            "scene": scene_name,
            "tokens": _map_tokens(r),
        }
        if r.target is not None:  # what the caption names; left out when empty
            lines[rid]["target"] = r.target.name or r.target.id
        if difficulty:
            lines[rid]["difficulty"] = difficulty
        if r.ruleset not in labelled:  # the snapshot is fetched later: label every zone type of its ruleset
            labelled.add(r.ruleset)
            row = vocabulary().rulesets.get(r.ruleset)
            for zone in row.zones if row is not None else ():
                zone_labels.setdefault(zone, label(r.ruleset, "zone", zone, lang))
        outcome = rejudged.get(rid) if rejudged is not None else None
        rejudged_cell, changed = _rejudged_cell(t, outcome)
        if outcome is not None and outcome["status"] == "changed":
            after = outcome["after"]
            lines[rid]["after"] = {"line": after["line"], "allowed": after["allowed"], "modifier": after["modifier"]}
        mod = _signed(r.modifier)
        allowed = escape(t["yes"]) if r.allowed else f'<span class="denied">{escape(t["no"])}</span>'
        notes = "<br>".join(escape(n) for n in r.notes)
        if r.kind == "override":
            # The overridden ruling by its time and names when it is on this page; never by its id.
            original = by_id.get(r.overrides or "")
            what = (
                f"{escape(t['override_of'])} {_time(original.time)} · {_party(original, 'actor')}"
                + (f" → {_party(original, 'target')}" if original.target else "")
                if original is not None
                else escape(t["override"][:1].upper() + t["override"][1:])
            )
            notes = f"<strong>{what}</strong>: " + escape(r.reason or "")
        else:
            # Folded under "Why" (closed): the text is sent once per distinct one on the page (a <template>),
            # and log.js puts it in the row's <details> when it opens — a page of 1,000 rulings that all
            # weighed the same few candidates carries them a few times, not 1,000.
            why = _why_body(r, lang)
            if why:
                number = whys.setdefault(why, len(whys))
                notes += f'<details class="why" data-why="{number}"><summary>{escape(t["why"])}</summary></details>'
        kind = " override" if r.kind == "override" else ""
        reaction = f' <span class="muted">({escape(t["reaction"])})</span>' if r.reaction else ""
        extra = f"<td>{rejudged_cell}</td>" if rejudged is not None else ""
        difficulty_cell = f'<td class="difficulty">{escape(difficulty)}</td>' if with_difficulty else ""
        rows.append(
            # One tab stop for the whole table (the first row; log.js moves it with the arrow keys), so the
            # paging links after it are one Tab away, not one per row.
            f'<tr class="ruling{kind}{changed}" data-record="{escape(rid)}" tabindex="{0 if not rows else -1}"'
            ' aria-selected="false">'
            f'<td class="time">{_time(r.time)}</td><td class="scene">{escape(scene_name)}</td>'
            f'<td class="actor">{_party(r, "actor")}</td><td class="target">{_party(r, "target")}</td>'
            f'<td class="action">{escape(label(r.ruleset, "action", r.action, lang))}{reaction}</td>'
            f'<td class="allowed">{allowed}</td><td class="mod">{escape(mod)}</td>{difficulty_cell}'
            f'<td class="crossings">{_crossings(r, lang, choices.regions.get(r.scene))}</td>'
            f'<td class="notes">{notes}</td>{extra}</tr>'
        )
    columns = ["time", "scene", "actor", "target", "action", "allowed", "mod"]
    if with_difficulty:
        columns.append("difficulty")
    columns += ["crossings", "notes"]
    if rejudged is not None:
        columns.append("rejudged")
    if not rows:
        rows.append(f'<tr><td colspan="{len(columns)}" class="muted">{escape(t["no_rulings"])}</td></tr>')
    summary = ""
    if rejudged is not None:
        counted = [o["status"] for o in rejudged.values()]
        summary = t["rejudge_summary"].format(
            changed=counted.count("changed"), total=len(counted), untranslatable=counted.count("untranslatable")
        )
    query = {k: v for k, v in filters.items() if v and k not in ("cursor", "before")}
    paging = []
    if filters.get("cursor") or filters.get("before"):
        paging.append(
            f'<a id="first-page" href="{escape(base + "?" + urlencode({**query, "lang": lang}))}">'
            f"{escape(t['first_page'])}</a>"
        )
    if previous_cursor:
        prev = {**query, "before": previous_cursor, "lang": lang}
        paging.append(
            f'<a id="previous-page" rel="prev" href="{escape(base + "?" + urlencode(prev))}">'
            f"{escape(t['previous_page'])}</a>"
        )
    if next_cursor:
        nxt = {**query, "cursor": next_cursor, "lang": lang}
        paging.append(
            f'<a id="next-page" rel="next" href="{escape(base + "?" + urlencode(nxt))}">{escape(t["next_page"])}</a>'
        )
        last = {**query, "before": LAST_PAGE, "lang": lang}  # the newest rulings, however long the session
        paging.append(f'<a id="last-page" href="{escape(base + "?" + urlencode(last))}">{escape(t["last_page"])}</a>')
    in_order = f"&order={quote(order)}" if order != "time" else ""  # an export lists them as the page does
    exports = " · ".join(
        f'<a class="export-{ext}" href="{escape(api)}/export.{ext}?lang={lang}{in_order}" download>{name}</a>'
        for ext, name in (("md", "Markdown"), ("csv", "CSV"), ("jsonl", "JSONL"))
    )
    title = session.name or _short_time(session.started) + " UTC"
    error_html = f'<p class="error" role="alert">{escape(t["bad_filter"])}: {escape(error)}</p>' if error else ""
    texts = {
        "from": t["line_from"],
        "to": t["line_to"],
        "rejudged": t["rejudged"],
        "mod": t["mod"],
        "noLine": t["no_line"],
        "help": t["map_help"],
    }
    data = {
        "rulings": lines,
        "snapshots": list(snapshot_numbers),
        "snapshotUrl": f"{root}/api/worlds/{_path(session.world)}/snapshots/",
        "texts": texts,
        "zones": zone_labels,
        "palette": dict(PALETTE),
    }
    body = (
        f'<p><a href="{escape(root)}/log/?lang={lang}">← {escape(t["back"])}</a></p>'
        f"<h2>{escape(session.name) if session.name else _time(session.started)} "
        f'<span class="muted">{world_html(session.world, session.world_name)}</span></h2>'
        f'<p class="session-facts">{escape(t["started"])}: {_time(session.started)} · {escape(t["ended"])}: '
        f"{_ended(t, session, idle_timeout)} · {escape(t['rulings'])}: {session.rulings} · "
        f"{escape(t['export'])}: {exports}</p>{error_html}{form}"
        + _rejudge_form(t, lang, base, filters, rejudge, summary)
        # A grid (WAI-ARIA): the keyboard moves between its rows, and a row's aria-selected — which a plain
        # table's row does not have, so screen readers never said it — is announced as "selected".
        + '<div class="layout"><div class="rows"><table id="rulings" role="grid" aria-readonly="true">'
        + f'<caption class="visually-hidden">{escape(t["table_help"])}</caption><thead><tr>'
        + "".join(_header(t, k, order, base, query, lang) for k in columns)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + "".join(f'<template class="why" id="why-{n}">{text}</template>' for text, n in whys.items())
        + "</div>"
        f'<section class="map-pane" aria-label="{escape(t["map"])}"><svg id="map" '
        'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1000 1000" preserveAspectRatio="xMidYMid meet" '
        'role="img" aria-labelledby="map-caption"></svg>'
        f'<p id="map-caption" class="muted" aria-live="polite">{escape(t["map_help"])}</p></section></div>'
        f'<nav class="paging" aria-label="{escape(t["paging"])}">{" · ".join(paging)}</nav>'
        f'<script type="application/json" id="log-data">{_json_for_script(data)}</script>'
        f'<script src="{escape(root)}/log/static/log.js" defer></script>'
        f"{_local_times(root)}"
    )
    return _document(lang, title, body, header=_logout(lang, root))
