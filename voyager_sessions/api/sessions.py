"""One session as the front ends act on it: named by a reference, exported whole, or handed back to its agent.

Three operations, each a request Struct and one function, for every front end alike (the CLI's ``resume``
and ``export``, the picker's Enter and export keys, the web page's resume line and downloads):

- :func:`session` resolves a reference (an id, a native id, an unambiguous prefix, or ``-``: the first
  hit of the last ``voyager search``) to the session's row;
- :func:`export` gathers what an export holds (:class:`~voyager_sessions.export.blocks.ExportDoc`: the
  timeline with full texts, the agent's name, the checkpoint), redacted on request; the renderers in
  :mod:`voyager_sessions.export` turn it into Markdown, JSON or HTML;
- :func:`resume` is the resume plan: the recipe (:mod:`voyager_sessions.api.resume`), the quoted
  command, and what is missing to run it; the front end prints it, or hands the terminal over.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import msgspec

from voyager_sessions.api import Backend, LocalBackend, Reader, _where
from voyager_sessions.api.requests import ExportRequest, SessionRequest
from voyager_sessions.api.resume import ResumeRecipe, missing, recipe, why_none
from voyager_sessions.core.errors import UserError, VoyagerError
from voyager_sessions.core.model import SessionRecord, SessionRow, session_row
from voyager_sessions.core.paths import DataDir
from voyager_sessions.export.blocks import Checkpoint, ExportDoc, export_time

#: How a front end names a session: what ``voyager resume SESSION`` and ``voyager export SESSION`` take.
SESSION_HELP = "SESSION: id, native id, unambiguous prefix, or - (the first hit of the last `voyager search`)."


class Resolved(msgspec.Struct, kw_only=True):
    """The session a reference named; ``via_last_search``: the query whose first hit ``-`` named, else None."""

    session: SessionRow
    via_last_search: str | None = None


class Exported(msgspec.Struct, kw_only=True):
    """What an export holds, and what redaction replaced (pattern name -> count; empty without ``redact``)."""

    doc: ExportDoc
    redacted: dict[str, int] = {}
    #: The query whose first hit ``-`` named, else None.
    via_last_search: str | None = None


class ResumePlan(msgspec.Struct, kw_only=True):
    """How to reopen a session: the recipe (None: its agent has no command for that, or none that is safe to run:
    ``reason`` says which), the
    command as one quoted shell line, and what the recipe needs and this machine lacks (empty: ready)."""

    session: SessionRow
    agent: str
    recipe: ResumeRecipe | None
    command: str | None
    missing: list[str] = []
    reason: str | None = None
    via_last_search: str | None = None


def agent_label(provider: str) -> str:
    """The agent's name as people know it (``Claude Code``), else the provider's id."""
    from voyager_sessions.ingest import manifest

    agent = manifest.ROWS.get(provider)
    return agent.label if agent is not None else provider


def resolve(reader: Reader, ref: str) -> tuple[SessionRecord, str | None]:
    """The session ``ref`` names, and the query whose first hit it was when ``ref`` is ``-`` (else None)."""
    if ref != "-":
        return reader.resolve(ref), None
    from voyager_sessions.core.lastsearch import recall

    last = recall(reader.ddir)
    assert last.session_id is not None  # recall refuses a search that found nothing
    return reader.resolve(last.session_id), last.query


def session(req: SessionRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None) -> Resolved:
    """The session ``req.session`` names (a one-line UserError when it names none, or several)."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        rec, query = resolve(r, req.session)
    return Resolved(session=session_row(rec), via_last_search=query)


def load_checkpoint(ddir: DataDir, session_id: str) -> Checkpoint | None:
    """The session's saved checkpoint as an export shows it, or None (no store, none saved, unreadable)."""
    if not ddir.checkpoints_db.exists():
        return None
    from voyager_sessions.core.isotime import iso
    from voyager_sessions.store.checkpoints import CheckpointStore
    from voyager_sessions.store.checkpoints.render import LABELS

    try:
        with CheckpointStore.open(ddir.checkpoints_db, readonly=True) as store:
            cp = store.load(session_id)
    except VoyagerError:  # an id the checkpoint store refuses, or a store it cannot read: export the rest
        return None
    if cp is None:
        return None
    fields: list[tuple[str, str, str | list[str]]] = []
    for lb in LABELS:
        value = getattr(cp, lb.field)
        if value:
            fields.append((lb.label, lb.shape, [lb.mark + item for item in value] if lb.shape == "list" else value))
    return Checkpoint(fields=fields, updated=iso(cp.updated_at))


def checkpoint(req: SessionRequest, *, data_dir: DataDir | Path | None = None) -> Checkpoint | None:
    """The saved checkpoint of the session ``req.session`` names exactly (an id), as an export shows it."""
    return load_checkpoint(_where(data_dir), req.session)


def export(req: ExportRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None) -> Exported:
    """The export of the session ``req.session`` names, redacted when asked (see :mod:`voyager_sessions.export`)."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        rec, query = resolve(r, req.session)
        timeline = r.show(rec.session.id)
    doc = ExportDoc(
        timeline=timeline,
        agent=agent_label(timeline.session.provider),
        checkpoint=load_checkpoint(ddir, timeline.session.session_id),
        exported=export_time(),
    )
    counts: Counter[str] = Counter()
    if req.redact:
        from voyager_sessions.export import redact_doc

        doc = redact_doc(doc, counts)
    return Exported(doc=doc, redacted=dict(counts), via_last_search=query)


def resume(
    req: SessionRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None
) -> ResumePlan:
    """How to reopen the session ``req.session`` names, and whether this machine can (see :class:`ResumePlan`)."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        rec, query = resolve(r, req.session)
    row = session_row(rec)
    agent = agent_label(row.provider)
    how = recipe(rec.session)
    if how is None:
        return ResumePlan(
            session=row,
            agent=agent,
            recipe=None,
            command=None,
            reason=f"cannot resume {row.session_id} in {agent}: {why_none(rec.session)}",
            via_last_search=query,
        )
    return ResumePlan(
        session=row, agent=agent, recipe=how, command=how.command(), missing=missing(how), via_last_search=query
    )


def require_resumable(plan: ResumePlan) -> ResumeRecipe:
    """The plan's recipe when it can run here; else the one-line UserError a front end shows."""
    import shlex

    if plan.recipe is None:
        raise UserError(
            f"{plan.reason}; hand it on instead: "
            f"voyager export {shlex.quote(plan.session.session_id)} --format md -o session.md"
        )
    if plan.missing:
        raise UserError(
            f"cannot resume {plan.session.session_id} in {plan.agent}: {'; '.join(plan.missing)} "
            f"(`voyager resume {shlex.quote(plan.session.session_id)} --print` shows the command)"
        )
    return plan.recipe
