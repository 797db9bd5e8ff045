"""The GM pages as HTML text: the login form, the session list and a session's rulings with its map.

Pure functions from data to markup (every value escaped); :mod:`.http` serves them. The session page
carries the rows' sight lines and the scene snapshots as JSON in a ``<script type="application/json">``
block, which ``static/log.js`` reads to draw the map when a row is selected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..core.rules import RULESETS
from ..core.rules.data_files import vocabulary
from ..core.rules.labels import label
from .i18n import TEXTS
from .records import RulingRecord
from .store import LoggedSession

__all__ = ["login_page", "session_page", "sessions_page"]

_STYLE = """
body{font:15px/1.4 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d2d3a;color:#fff;padding:.6rem 1rem;display:flex;gap:1rem;align-items:center}
header h1{font-size:1.1rem;margin:0;flex:1}header form{margin:0}
header button{background:none;color:#fff;border:1px solid #9fb3c8;border-radius:4px;
padding:.2rem .6rem;cursor:pointer}
main{padding:1rem;max-width:1400px;margin:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #dde1e6;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
tbody tr.ruling{cursor:pointer}tbody tr.ruling:hover{background:#f0f6ff}
tbody tr.ruling.changed{background:#fff1c2;box-shadow:inset 4px 0 #d68910}
tbody tr.ruling.untranslatable{box-shadow:inset 4px 0 #922b21}
form.rejudge{margin:.5rem 0}
tbody tr.ruling[aria-selected=true],tbody tr.ruling[aria-selected=true]:hover{background:#cfe3ff}
tr.override td:first-child{border-left:4px solid #c0392b}
.denied{color:#b03a2e;font-weight:600}.muted{color:#68737d}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.5rem 0 1rem}
form.filters label{display:flex;flex-direction:column;font-size:.85rem}
.layout{display:grid;grid-template-columns:minmax(0,3fr) minmax(280px,2fr);gap:1rem;align-items:start}
#map{width:100%;height:auto;background:#fff;border:1px solid #dde1e6}
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


def _logout(lang: str) -> str:
    t = TEXTS[lang]
    return (
        f'<form method="post" action="/log/logout?lang={lang}">'
        f'<button type="submit" class="link">{escape(t["logout"])}</button></form>'
    )


def login_page(lang: str, *, next_url: str, failed: bool) -> str:
    """The sign-in form; posting it sets the HttpOnly cookie that the other pages read."""
    t = TEXTS[lang]
    error = f'<p class="error" role="alert">{escape(t["wrong_secret"])}</p>' if failed else ""
    body = (
        f'<form class="login" method="post" action="/log/login?lang={lang}">'
        f"<h2>{escape(t['login'])}</h2><p>{escape(t['login_help'])}</p>{error}"
        f'<label>{escape(t["secret"])}<input type="password" name="secret" autocomplete="current-password"'
        " required autofocus></label>"
        f'<input type="hidden" name="next" value="{escape(next_url)}">'
        f'<button type="submit">{escape(t["login"])}</button></form>'
    )
    return _document(lang, t["login"], body)


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


def sessions_page(lang: str, sessions: Sequence[LoggedSession]) -> str:
    """Every session the secret can see, newest first, each linking to its page."""
    t = TEXTS[lang]
    if not sessions:
        body = f"<h2>{escape(t['sessions'])}</h2><p>{escape(t['no_sessions'])}</p>"
        return _document(lang, t["sessions"], body, header=_logout(lang))
    rows = []
    for s in sessions:
        href = f"/log/{_path(s.world)}/{_path(s.id)}?lang={lang}"
        name = escape(s.name) if s.name else _time(s.started)
        ended = _time(s.ended) if s.ended else f'<span class="muted">{escape(t["open"])}</span>'
        rows.append(
            f'<tr><td>{escape(s.world)}</td><td><a href="{escape(href)}">{name}</a></td>'
            f"<td>{_time(s.started)}</td><td>{ended}</td><td>{s.rulings}</td></tr>"
        )
    body = (
        f'<h2>{escape(t["sessions"])}</h2><table id="sessions"><thead><tr>'
        f"<th>{escape(t['world'])}</th><th>{escape(t['session'])}</th><th>{escape(t['started'])}</th>"
        f"<th>{escape(t['ended'])}</th><th>{escape(t['rulings'])}</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    return _document(lang, t["sessions"], body, header=_logout(lang)) + _LOCAL_TIMES


#: Every ``time[datetime]`` shown in the reader's own time zone and language (the session page's log.js
#: does the same); without script the UTC text stays, marked "UTC".
_LOCAL_TIMES = (
    "<script>for(const n of document.querySelectorAll('time[datetime]')){const d=new Date(n.dateTime);"
    "if(!isNaN(d))n.textContent=d.toLocaleString(document.documentElement.lang||undefined,"
    "{dateStyle:'medium',timeStyle:'medium'})}</script>"
)


def _path(segment: str) -> str:
    return quote(segment, safe="")


def _party(record: RulingRecord, which: str) -> str:
    party = record.actor if which == "actor" else record.target
    if party is None:
        return ""
    return escape(party.name or party.id)  # tokens by name; a token without one keeps its id


def crossing_text(record: RulingRecord, crossing: Mapping[str, Any], lang: str) -> str:
    """How the line met a zone, in words: "through Low Visibility Zone (Harbour haze)" — the kind and the
    zone type by their labels, the region by the name the GM gave it (from the ruling's snapshot)."""
    kind = label(record.ruleset, "kind", str(crossing.get("kind", "")), lang)
    zone = label(record.ruleset, "zone", str(crossing.get("zone", "")), lang)
    region_id = crossing.get("region")
    names = {r.get("id"): r.get("name") for r in (record.snapshot.regions if record.snapshot else [])}
    name = names.get(region_id) or ""
    return f"{kind} {zone}" + (f" ({name})" if name and name != zone else "")


def _crossings(record: RulingRecord, lang: str) -> str:
    return "<br>".join(escape(crossing_text(record, c, lang)) for c in record.crossings)


def _json_for_script(data: Any) -> str:
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e")


def rejudge_choices() -> list[tuple[str, str]]:
    """Every ``ruleset:edition`` a page can re-judge under, with its label (ruleset title — edition)."""
    rows = vocabulary().rulesets
    return [
        (f"{rid}:{edition}", f"{rows[rid].title} — {edition}")
        for rid, ruleset in RULESETS.items()
        for edition in ruleset.editions
    ]


def _rejudged_cell(t: Mapping[str, str], outcome: Mapping[str, Any] | None) -> tuple[str, str]:
    """The "Re-judged" cell of a row and the row's extra class."""
    if outcome is None:
        return "", ""
    if outcome["status"] == "untranslatable":
        return (
            f'<span class="denied">{escape(t["cannot_carry"])}</span>: {escape(outcome["why"] or "")}',
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
    options = [("", t["rejudge_none"]), *rejudge_choices()]
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


def session_page(
    lang: str,
    session: LoggedSession,
    records: Sequence[RulingRecord],
    *,
    filters: Mapping[str, str],
    next_cursor: str | None,
    error: str | None = None,
    rejudge: str = "",
    rejudged: Mapping[str, Mapping[str, Any]] | None = None,
    snapshot_keys: Mapping[str, str] | None = None,
) -> str:
    """A session's rulings (one page), the filter form, export links and the map.

    With ``rejudged`` (record id → :func:`~bridge.log.rejudge_output.outcome_wire`, for ``rejudge``,
    a ``ruleset:edition`` choice) each row shows its re-judged verdict beside the original, changed rows
    are highlighted, and the map draws the re-judged line beside the original.

    The page carries each row's snapshot *key* (``snapshot_keys``, record id → key, or the record's own
    snapshot), never the snapshot: the map script fetches one when it draws it, so a page's size is
    bounded by its rows however big and however many the scene versions are (issue 12).
    """
    t = TEXTS[lang]
    base = f"/log/{_path(session.world)}/{_path(session.id)}"
    api = f"/api/worlds/{_path(session.world)}/sessions/{_path(session.id)}"

    def field(name: str, label: str, kind: str = "text") -> str:
        value = escape(filters.get(name, ""))
        return f'<label>{escape(t[label])}<input type="{kind}" name="{name}" value="{value}"></label>'

    allowed_value = filters.get("allowed", "")
    options = "".join(
        f'<option value="{v}"{" selected" if v == allowed_value else ""}>{escape(t[k])}</option>'
        for v, k in (("", "any"), ("true", "yes"), ("false", "no"))
    )
    form = (
        f'<form class="filters" method="get" action="{escape(base)}" aria-label="{escape(t["filters"])}">'
        f'<input type="hidden" name="lang" value="{lang}">'
        + (f'<input type="hidden" name="rejudge" value="{escape(rejudge)}">' if rejudge else "")
        + field("actor", "actor")
        + field("target", "target")
        + field("action", "action")
        + f'<label>{escape(t["allowed"])}<select name="allowed">{options}</select></label>'
        + field("from", "from", "datetime-local")
        + field("to", "to", "datetime-local")
        + f'<button type="submit" id="apply">{escape(t["filter"])}</button>'
        f'<a href="{escape(base)}?lang={lang}">{escape(t["clear"])}</a></form>'
    )
    rows = []
    lines: dict[str, Any] = {}
    zone_labels: dict[str, str] = {}
    labelled: set[str] = set()
    for r in records:
        rid = r.id or ""
        key = (snapshot_keys or {}).get(rid) or (r.snapshot.key if r.snapshot else None)
        lines[rid] = {
            "line": r.line,
            "snapshot": key,
            "allowed": r.allowed,
            "modifier": r.modifier,
            "actor": r.actor.name or r.actor.id,
            "target": (r.target.name or r.target.id) if r.target else "",
            "action": label(r.ruleset, "action", r.action, lang),
        }
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
        mod = "" if r.modifier is None else f"{r.modifier:+d}"
        allowed = escape(t["yes"]) if r.allowed else f'<span class="denied">{escape(t["no"])}</span>'
        notes = "<br>".join(escape(n) for n in r.notes)
        if r.kind == "override":
            notes = f"<strong>{escape(t['override_of'])} {escape(r.overrides or '')}</strong>: " + escape(
                r.reason or ""
            )
        kind = " override" if r.kind == "override" else ""
        reaction = f' <span class="muted">({escape(t["reaction"])})</span>' if r.reaction else ""
        extra = f"<td>{rejudged_cell}</td>" if rejudged is not None else ""
        rows.append(
            f'<tr class="ruling{kind}{changed}" data-record="{escape(rid)}" tabindex="0" aria-selected="false">'
            f"<td>{_time(r.time)}</td>"
            f"<td>{_party(r, 'actor')}</td><td>{_party(r, 'target')}</td>"
            f"<td>{escape(label(r.ruleset, 'action', r.action, lang))}{reaction}</td><td>{allowed}</td>"
            f"<td>{escape(mod)}</td><td>{_crossings(r, lang)}</td>"
            f"<td>{notes}</td>{extra}</tr>"
        )
    columns = ["time", "actor", "target", "action", "allowed", "mod", "crossings", "notes"]
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
    query = {k: v for k, v in filters.items() if v}
    paging = []
    if filters.get("cursor"):
        first = {k: v for k, v in query.items() if k != "cursor"}
        paging.append(
            f'<a href="{escape(base + "?" + urlencode({**first, "lang": lang}))}">{escape(t["first_page"])}</a>'
        )
    if next_cursor:
        nxt = {**query, "cursor": next_cursor, "lang": lang}
        paging.append(f'<a rel="next" href="{escape(base + "?" + urlencode(nxt))}">{escape(t["next_page"])}</a>')
    exports = " · ".join(
        f'<a href="{escape(api)}/export.{ext}?lang={lang}" download>{name}</a>'
        for ext, name in (("md", "Markdown"), ("csv", "CSV"), ("jsonl", "JSONL"))
    )
    title = session.name or _short_time(session.started)
    error_html = f'<p class="error" role="alert">{escape(t["bad_filter"])}: {escape(error)}</p>' if error else ""
    texts = {"from": t["line_from"], "to": t["line_to"], "rejudged": t["rejudged"]}
    data = {
        "rulings": lines,
        "snapshotUrl": f"/api/worlds/{_path(session.world)}/snapshots/",
        "texts": texts,
        "zones": zone_labels,
    }
    body = (
        f'<p><a href="/log/?lang={lang}">← {escape(t["back"])}</a></p>'
        f'<h2>{escape(title)} <span class="muted">{escape(session.world)}</span></h2>'
        f"<p>{escape(t['started'])}: {_time(session.started)} · {escape(t['ended'])}: "
        f"{_time(session.ended) or escape(t['open'])} · {escape(t['rulings'])}: {session.rulings} · "
        f"{escape(t['export'])}: {exports}</p>{error_html}{form}"
        + _rejudge_form(t, lang, base, filters, rejudge, summary)
        + '<div class="layout"><div><table id="rulings"><thead><tr>'
        + "".join(f"<th>{escape(t[k])}</th>" for k in columns)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f'<p class="paging">{" · ".join(paging)}</p></div>'
        f'<section aria-label="{escape(t["map"])}"><svg id="map" xmlns="http://www.w3.org/2000/svg" '
        'viewBox="0 0 1000 1000" role="img"></svg>'
        f'<p id="map-caption" class="muted">{escape(t["map_help"])}</p></section></div>'
        f'<script type="application/json" id="log-data">{_json_for_script(data)}</script>'
        '<script src="/log/static/log.js" defer></script>'
    )
    return _document(lang, title, body, header=_logout(lang))
