"""The GM's controls on the log pages: start (with a name) and end a world's game session, and override a
ruling with a reason — the same operations as the WebSocket's ``session.start``, ``session.end`` and
``ruling.override``, done on the log store by a signed-in GM.

Pure: markup builders (every value escaped) and the form reader; :mod:`.http` serves the forms and their
``POST`` routes (cross-site posts refused, like the sign-in form). The controls are added to the pages
built by :mod:`.pages` (:func:`with_controls`), so the pages' own layout stays theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Final
from urllib.parse import quote, urlencode

from ..core.rules.labels import label
from .pages import world_html
from .records import RulingRecord
from .store import LoggedSession

__all__ = [
    "MAX_NAME",
    "MAX_REASON",
    "WORDS",
    "OverrideForm",
    "override_controls",
    "parse_override_form",
    "parse_session_name",
    "session_controls",
    "with_controls",
]

#: The limits of the WebSocket messages (``SessionStart.name``, ``RulingOverride.reason``).
MAX_NAME: Final = 200
MAX_REASON: Final = 2000
_MAX_MODIFIER: Final = 99

WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "controls": "Game session",
        "start": "Start a new session",
        "start_help": "Closes the open session of this world and opens a new one with this name.",
        "name": "Name",
        "end": "End the open session",
        "no_open": "No session is open.",
        "open_now": "Open now",
        "override": "Override a ruling",
        "override_help": "The override is kept beside the ruling, which stays as the bridge gave it.",
        "ruling": "Ruling",
        "allowed": "The action is allowed (line of fire)",
        "modifier": "Modifier",
        "reason": "Reason",
        "save": "Override",
        "no_rulings": "No ruling on this page to override.",
        "choose_row": "Choose the ruling to override in the table: a click, or Enter on its row.",
        "from_list": "Choose it from a list of this page's rulings",
        "no_lof": "no line of fire",
        "by": "GM (log page)",
        "bad_name": f"name: at most {MAX_NAME} characters",
        "bad_reason": f"reason: give a reason (at most {MAX_REASON} characters)",
        "bad_modifier": f"modifier: a whole number from -{_MAX_MODIFIER} to {_MAX_MODIFIER}",
        "bad_record": "record: no such ruling in this world",
        "failed": "Not done",
        "back": "Back",
    },
    "es": {
        "controls": "Sesión de juego",
        "start": "Empezar una sesión nueva",
        "start_help": "Cierra la sesión abierta de este mundo y abre una nueva con este nombre.",
        "name": "Nombre",
        "end": "Terminar la sesión abierta",
        "no_open": "No hay ninguna sesión abierta.",
        "open_now": "Abierta ahora",
        "override": "Corregir un dictamen",
        "override_help": "La corrección se guarda junto al dictamen, que queda tal como lo dio el puente.",
        "ruling": "Dictamen",
        "allowed": "La acción está permitida (hay línea de tiro)",
        "modifier": "Modificador",
        "reason": "Motivo",
        "save": "Corregir",
        "no_rulings": "No hay dictámenes en esta página que corregir.",
        "choose_row": "Elige en la tabla el dictamen que corregir: un clic, o Intro en su fila.",
        "from_list": "Elegirlo de una lista de los dictámenes de esta página",
        "no_lof": "sin línea de tiro",
        "by": "DJ (página del registro)",
        "bad_name": f"nombre: como mucho {MAX_NAME} caracteres",
        "bad_reason": f"motivo: escribe un motivo (como mucho {MAX_REASON} caracteres)",
        "bad_modifier": f"modificador: un número entero de -{_MAX_MODIFIER} a {_MAX_MODIFIER}",
        "bad_record": "dictamen: no existe en este mundo",
        "failed": "No se hizo",
        "back": "Volver",
    },
}

_STYLE: Final = (
    "<style>.gm-controls{background:#fff;border:1px solid #dde1e6;border-radius:4px;padding:.3rem .6rem;"
    "margin:0 0 1rem}.gm-controls summary{cursor:pointer;font-weight:600}"
    ".gm-controls form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.4rem 0}"
    ".gm-controls label{display:flex;flex-direction:column;font-size:.85rem;min-width:0;max-width:100%}"
    ".gm-controls label.check{flex-direction:row;gap:.3rem;align-items:center}"
    ".gm-controls textarea{min-width:min(16rem,100%);max-width:100%;box-sizing:border-box}"
    ".gm-controls select{max-width:100%}"
    ".gm-controls fieldset{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;border:0;padding:0;margin:0}"
    "#override-ruling{flex-basis:100%;margin:0}</style>"
)


def _path(segment: str) -> str:
    return quote(segment, safe="")


def with_controls(page: str, controls: str, *, before: str | None = None) -> str:
    """``page`` with ``controls`` just before the first ``before`` (markup the page has, e.g. its filter
    form), else first in its ``<main>``, else before ``</body>``."""
    if not controls:
        return page
    block = _STYLE + controls
    if before and before in page:
        return page.replace(before, block + before, 1)
    if "<main>" in page:
        return page.replace("<main>", "<main>" + block, 1)
    return page.replace("</body>", block + "</body>", 1)


def session_controls(
    lang: str,
    worlds: Sequence[str],
    open_sessions: Mapping[str, LoggedSession | None],
    names: Mapping[str, str] | None = None,
    *,
    root: str = "",
) -> str:
    """For each world the reader may act on: start a named session; end the open one (when one is open).
    A world shows by its name (``names``, :meth:`~bridge.log.store.LogStore.world_names`), else its id."""
    w = WORDS[lang]
    parts = []
    for world in worlds:
        base = f"{root}/log/{_path(world)}/session"
        current = open_sessions.get(world)
        if current is None:
            now = f'<span class="muted">{escape(w["no_open"])}</span>'
        else:  # by its name, else its start (as the session list shows it)
            started = escape(current.started.replace("T", " ")[:19] + " UTC")
            shown = escape(current.name) or f'<time datetime="{escape(current.started)}">{started}</time>'
            now = f'<span class="muted">{escape(w["open_now"])}: {shown}</span>'
        end = (
            f'<form method="post" action="{escape(base)}/end?lang={lang}">'
            f'<button type="submit" class="session-end">{escape(w["end"])}</button></form>'
            if current
            else ""
        )
        shown_world = world_html(world, (names or {}).get(world, ""))
        parts.append(
            f'<div class="world-controls" data-world="{escape(world)}"><p><strong>{shown_world}</strong> · {now}</p>'
            f'<form method="post" action="{escape(base)}/start?lang={lang}" title="{escape(w["start_help"])}">'
            f'<label>{escape(w["name"])}<input type="text" name="name" maxlength="{MAX_NAME}"></label>'
            f'<button type="submit" class="session-start">{escape(w["start"])}</button></form>{end}</div>'
        )
    if not parts:
        return ""
    return (
        f'<details class="gm-controls" id="session-controls"><summary>{escape(w["controls"])}</summary>'
        + "".join(parts)
        + "</details>"
    )


def _ruling_choice(record: RulingRecord, lang: str) -> str:
    actor = record.actor.name or record.actor.id
    target = (record.target.name or record.target.id) if record.target else "—"
    verdict = WORDS[lang]["no_lof"] if not record.allowed else ("0" if not record.modifier else f"{record.modifier:+d}")
    action = label(record.ruleset, "action", record.action, lang)
    return f"{record.time.replace('T', ' ')[:19]} UTC · {actor} → {target} · {action} · {verdict}"


def override_controls(
    lang: str,
    session: LoggedSession,
    records: Sequence[RulingRecord],
    *,
    root: str = "",
    listed: bool = False,
    query: Mapping[str, str] | None = None,
) -> str:
    """The override form of a session page; overrides themselves are not offered again.

    It carries no row of the page: choosing a row of the table (``static/controls.js``: a click, or Enter)
    puts that ruling in the form — its id in the hidden ``record`` and its description above the fields,
    which stay disabled until then. Without script, a link (``query``: the page's own, plus
    ``override=list``) reloads the page with ``listed``: the form then lists the page's rulings to choose
    from, as every page's form did before (a page of 1,000 rows carried 124 KB of them).
    """
    w = WORDS[lang]
    choices = [r for r in records if r.kind == "ruling" and r.id]
    if not choices:
        body = f'<p class="muted">{escape(w["no_rulings"])}</p>'
        return (
            f'<details class="gm-controls" id="override-controls"><summary>{escape(w["override"])}</summary>'
            f"{body}</details>"
        )
    base = f"{root}/log/{_path(session.world)}/{_path(session.id)}"
    action = f"{base}/override?lang={lang}"
    if listed:
        options = "".join(
            f'<option value="{escape(r.id or "")}">{escape(_ruling_choice(r, lang))}</option>' for r in choices
        )
        chooser = f'<label>{escape(w["ruling"])}<select name="record" required>{options}</select></label>'
        fields, later = "<fieldset>", ""
    else:
        chooser = (
            '<input type="hidden" name="record" value="">'
            # Said by controls.js (``data-choose``): without script a click on a row chooses nothing.
            f'<p id="override-ruling" aria-live="polite" data-choose="{escape(w["choose_row"])}"></p>'
        )
        fields = "<fieldset disabled>"  # controls.js enables it once a row is chosen
        listing = {k: v for k, v in (query or {}).items() if k != "override"} | {"lang": lang, "override": "list"}
        later = (
            f'<noscript><p><a id="override-list" href="{escape(base + "?" + urlencode(listing))}#override-controls">'
            f"{escape(w['from_list'])}</a></p></noscript>"
        )
    body = (
        f'<p class="muted">{escape(w["override_help"])}</p>'
        f'<form method="post" action="{escape(action)}" id="override-form" data-no-lof="{escape(w["no_lof"])}">'
        f"{chooser}{fields}"
        f'<label class="check"><input type="checkbox" name="allowed" value="true" checked> '
        f"{escape(w['allowed'])}</label>"
        f'<label>{escape(w["modifier"])}<input type="number" name="modifier" step="1" min="-{_MAX_MODIFIER}" '
        f'max="{_MAX_MODIFIER}" value="0"></label>'
        f'<label>{escape(w["reason"])}<textarea name="reason" required maxlength="{MAX_REASON}" rows="2">'
        "</textarea></label>"
        f'<button type="submit" id="override-save">{escape(w["save"])}</button></fieldset></form>{later}'
        f'<script src="{escape(root)}/log/static/controls.js" defer></script>'  # a chosen row fills the form
    )
    opened = " open" if listed else ""  # reached from its link: the list is what the GM came for
    return (
        f'<details class="gm-controls" id="override-controls"{opened}><summary>{escape(w["override"])}</summary>'
        f"{body}</details>"
    )


class OverrideForm:
    """A posted override, read and checked: ``record``, ``allowed``, ``modifier`` (``None`` when not allowed)
    and ``reason``."""

    __slots__ = ("allowed", "modifier", "reason", "record")

    def __init__(self, record: str, allowed: bool, modifier: int | None, reason: str) -> None:
        self.record = record
        self.allowed = allowed
        self.modifier = modifier
        self.reason = reason


def parse_session_name(value: str, lang: str) -> str:
    """The posted session name, trimmed; :class:`ValueError` (in the reader's language) when too long."""
    name = value.strip()
    if len(name) > MAX_NAME:
        raise ValueError(WORDS[lang]["bad_name"])
    return name


def parse_override_form(form: Mapping[str, str], lang: str) -> OverrideForm:
    """The override form's fields; :class:`ValueError` naming the field at fault, in the reader's language."""
    w = WORDS[lang]
    record = form.get("record", "").strip()
    if not record:
        raise ValueError(w["bad_record"])
    reason = form.get("reason", "").strip()
    if not reason or len(reason) > MAX_REASON:
        raise ValueError(w["bad_reason"])
    allowed = form.get("allowed", "").strip().lower() in ("true", "on", "1", "yes")
    if not allowed:
        return OverrideForm(record, False, None, reason)
    text = form.get("modifier", "").strip() or "0"
    try:
        modifier = int(text)
    except ValueError:
        raise ValueError(w["bad_modifier"]) from None
    if abs(modifier) > _MAX_MODIFIER:
        raise ValueError(w["bad_modifier"])
    return OverrideForm(record, True, modifier, reason)
