"""The GM pages' words, in English and Spanish, and how a request picks its language."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = ["LANGUAGES", "TEXTS", "pick_language"]

_EN: Final = {
    "title": "Sightline log",
    "sessions": "Game sessions",
    "world": "World",
    "session": "Session",
    "name": "Name",
    "started": "Started",
    "ended": "Ended",
    "open": "open",
    "idle": "idle: ended at its last ruling",
    "rulings": "Rulings",
    "no_sessions": "No game session has been logged yet.",
    "no_rulings": "No ruling matches.",
    "login": "Sign in",
    "login_help": "Enter the bridge's secret or your world's secret.",
    "secret": "Secret",
    "wrong_secret": "That secret opens no log.",
    "expired": "Your sign-in has ended (you signed out, or the bridge restarted): sign in again.",
    "logout": "Sign out",
    "filters": "Filters",
    "actor": "Actor",
    "target": "Target",
    "action": "Action",
    "allowed": "Allowed",
    "any": "any",
    "yes": "yes",
    "no": "no",
    "from": "From",
    "to": "To",
    "filter": "Filter",
    "clear": "Clear",
    "time": "Time",
    "reaction": "reaction",
    "mod": "MOD",
    "crossings": "Crossings",
    "notes": "Notes",
    "table_help": "Rulings of this page. Arrow keys move between rows; Enter draws the row's line on the map.",
    "why": "Why",
    "applied": "applied",
    "not_applied": "not applied",
    "sources": "Sources",
    "override": "override",
    "override_of": "GM override of",
    "next_page": "Next page",
    "previous_page": "Previous page",
    "first_page": "First page",
    "last_page": "Last page",
    "paging": "Pages",
    "order": "Order",
    "page_size": "Rows per page",
    "order_time": "oldest first",
    "order_-time": "newest first",
    "order_actor": "actor, A to Z",
    "order_-actor": "actor, Z to A",
    "order_target": "target, A to Z",
    "order_-target": "target, Z to A",
    "order_mod": "MOD, lowest first",
    "order_-mod": "MOD, highest first",
    "scene": "Scene",
    "difficulty": "Difficulty",
    "no_line": "no sight line (the action needs none)",
    "filter_help": "Type any part of a name or action, in any case; the lists offer this session's.",
    "export": "Export",
    "map": "Map",
    "map_help": "Click a ruling to draw its line of sight over the scene's zones.",
    "line_from": "Line from",
    "line_to": "to",
    "back": "All sessions",
    "bad_filter": "A filter could not be read",
    "not_found": "No such session in the worlds you are signed in to.",
    "rejudge": "What if",
    "rejudge_help": "Judge this page's rulings again under",
    "rejudge_none": "— as logged —",
    "rejudge_go": "Re-judge",
    "rejudged": "Re-judged",
    "unchanged": "unchanged",
    "cannot_carry": "cannot carry over",
    "now-allowed": "now allowed",
    "now-blocked": "now blocked",
    "easier": "easier",
    "harder": "harder",
    "other-scale": "another scale",
    # Counts after a colon, so that the words read right for any number (1 as for 12).
    "rejudge_summary": (
        "Rulings on this page that change: {changed} of {total}; that cannot carry over: {untranslatable}."
    ),
}

_ES: Final = {
    "title": "Registro de Sightline",
    "sessions": "Sesiones de juego",
    "world": "Mundo",
    "session": "Sesión",
    "name": "Nombre",
    "started": "Inicio",
    "ended": "Fin",
    "open": "abierta",
    "idle": "inactiva: terminó en su última resolución",
    "rulings": "Resoluciones",
    "no_sessions": "Todavía no se ha registrado ninguna sesión de juego.",
    "no_rulings": "Ninguna resolución coincide.",
    "login": "Entrar",
    "login_help": "Escribe el secreto del puente o el de tu mundo.",
    "secret": "Secreto",
    "wrong_secret": "Ese secreto no abre ningún registro.",
    "expired": "Tu sesión de acceso ha terminado (saliste o el puente se reinició): vuelve a entrar.",
    "logout": "Salir",
    "filters": "Filtros",
    "actor": "Actor",
    "target": "Objetivo",
    "action": "Acción",
    "allowed": "Permitida",
    "any": "cualquiera",
    "yes": "sí",
    "no": "no",
    "from": "Desde",
    "to": "Hasta",
    "filter": "Filtrar",
    "clear": "Limpiar",
    "time": "Hora",
    "reaction": "reacción",
    "mod": "MOD",
    "crossings": "Zonas cruzadas",
    "notes": "Notas",
    "table_help": (
        "Resoluciones de esta página. Las flechas pasan de una fila a otra; Intro dibuja su línea en el mapa."
    ),
    "why": "Por qué",
    "applied": "aplicado",
    "not_applied": "no aplicado",
    "sources": "Fuentes",
    "override": "corrección",
    "override_of": "Corrección del DJ sobre",
    "next_page": "Página siguiente",
    "previous_page": "Página anterior",
    "first_page": "Primera página",
    "last_page": "Última página",
    "paging": "Páginas",
    "order": "Orden",
    "page_size": "Filas por página",
    "order_time": "las más antiguas primero",
    "order_-time": "las más recientes primero",
    "order_actor": "actor, de la A a la Z",
    "order_-actor": "actor, de la Z a la A",
    "order_target": "objetivo, de la A a la Z",
    "order_-target": "objetivo, de la Z a la A",
    "order_mod": "MOD, de menor a mayor",
    "order_-mod": "MOD, de mayor a menor",
    "scene": "Escena",
    "difficulty": "Dificultad",
    "no_line": "sin línea de visión (la acción no la necesita)",
    "filter_help": (
        "Escribe cualquier parte de un nombre o acción, en mayúsculas o minúsculas; "
        "las listas ofrecen los de esta sesión."
    ),
    "export": "Exportar",
    "map": "Mapa",
    "map_help": "Pulsa una resolución para dibujar su línea de visión sobre las zonas de la escena.",
    "line_from": "Línea desde",
    "line_to": "hasta",
    "back": "Todas las sesiones",
    "bad_filter": "No se pudo leer un filtro",
    "not_found": "Esa sesión no existe en los mundos a los que has entrado.",
    "rejudge": "Y si…",
    "rejudge_help": "Volver a resolver las resoluciones de esta página con",
    "rejudge_none": "— como se registraron —",
    "rejudge_go": "Volver a resolver",
    "rejudged": "Nueva resolución",
    "unchanged": "sin cambios",
    "cannot_carry": "no se puede trasladar",
    "now-allowed": "ahora permitida",
    "now-blocked": "ahora bloqueada",
    "easier": "más fácil",
    "harder": "más difícil",
    "other-scale": "otra escala",
    "rejudge_summary": (
        "Resoluciones de esta página que cambian: {changed} de {total}; que no se pueden trasladar: {untranslatable}."
    ),
}

#: Every language the pages speak; English first (the fallback).
LANGUAGES: Final = ("en", "es")
TEXTS: Final = MappingProxyType({"en": MappingProxyType(_EN), "es": MappingProxyType(_ES)})
assert _EN.keys() == _ES.keys()


def pick_language(query: str | None, accept_language: str | None) -> str:
    """``?lang=`` when it names a language we speak, else the best of ``Accept-Language``, else English."""
    if query in LANGUAGES:
        return str(query)
    best, best_q = "en", -1.0
    for position, item in enumerate((accept_language or "").split(",")):
        tag, _, params = item.strip().partition(";")
        language = tag.strip().lower().split("-")[0]
        if language not in LANGUAGES:
            continue
        weight = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                weight = float(params[2:])
            except ValueError:
                weight = 0.0
        weight -= position * 1e-6  # earlier wins ties
        if weight > best_q and weight > 0:
            best, best_q = language, weight
    return best
