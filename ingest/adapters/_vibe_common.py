"""What both of Mistral Vibe's session layouts share: the provider's name, its resume command, titles, the model.

Vibe keeps sessions in two layouts side by side under ``<VIBE_HOME>/logs/session/``: the
unified store (3.x, and 2.x by default; ``_vibe_unified``) and the legacy logs (2.x, or any
version run with ``--legacy-harness``; ``_vibe_legacy``). Both describe a session in a
``meta.json`` of the same shape, so the facts drawn from it are read here once.
"""

from __future__ import annotations

from typing import Any

from voyager_sessions.ingest.adapters._common import opt, resume_in, str_or_none

PROVIDER = "vibe"
LABEL = "Mistral Vibe"
#: The file, in both layouts, that describes a session (id, cwd, title, times, config).
META = "meta.json"

#: ``meta.json``'s ``title_source`` for a title a person set (``/rename``); ``auto`` is Vibe's own.
_PERSON_TITLE_SOURCES = frozenset({"manual", "user"})


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``vibe --resume <id>``, run in the session's directory when it is known (its tools work there)."""
    return resume_in(cwd, "vibe", opt("--resume", native_id))


def copies_prompt(title: str, prompt: str | None) -> bool:
    """True when ``title`` is the first prompt cut short (Vibe's fallback title when no title was generated)."""
    if not prompt:
        return False
    t = " ".join(title.split()).rstrip("…").rstrip(".").strip()
    return bool(t) and " ".join(prompt.split()).startswith(t)


def title_of(title: Any, source: Any, first_prompt: str | None) -> tuple[str | None, str | None]:
    """The session's title and who gave it: ``user`` for a rename, ``prompt`` for a cut of the first
    prompt, else ``agent`` (Vibe's title call)."""
    text = str_or_none(title)
    if text is None or not text.strip():
        return None, None
    text = text.strip()
    if source in _PERSON_TITLE_SOURCES:
        return text, "user"
    return text, "prompt" if copies_prompt(text, first_prompt) else "agent"


def model_of(config: Any) -> str | None:
    """The model a session ran: ``config.model_name``, else the active alias resolved through ``config.models``."""
    if not isinstance(config, dict):
        return None
    name = str_or_none(config.get("model_name"))
    if name:
        return name
    alias = str_or_none(config.get("active_model"))
    models = config.get("models")
    entry: Any = None
    if isinstance(models, dict):
        entry = models.get(alias) if alias else None
    elif isinstance(models, list):  # older configs list the models
        entry = next((m for m in models if isinstance(m, dict) and m.get("alias") == alias), None)
    if isinstance(entry, dict) and str_or_none(entry.get("name")):
        return entry["name"]
    return alias
