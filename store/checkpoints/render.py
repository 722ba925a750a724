"""The three ways a checkpoint is shown, from one label table: search text, Markdown hand-off, CLI text.

``LABELS`` names every payload field once (what it is called, whether it is one short
line, prose or a list, and the checkbox its items carry), so a field added to the
payload is added here once and appears the same way in ``voyager search``, in a
hand-off file and in ``voyager checkpoint status``. Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

from voyager_sessions.core.errors import one_line
from voyager_sessions.store.checkpoints.model import Checkpoint, CheckpointPayload, require_id


class Label(NamedTuple):
    """How one payload field is named and laid out in every rendering."""

    field: str
    label: str
    #: ``line``: a short value shown in the header; ``text``: prose, a section of its own;
    #: ``list``: a section with one item per line.
    shape: Literal["line", "text", "list"]
    #: For lists: what one item is called where each item stands alone (the search text).
    item: str = ""
    #: For lists: the checkbox in front of each item (steps are done or not; other lists have none).
    mark: str = ""


#: Every payload field, in payload order (the order each rendering follows; a test holds it to the payload).
LABELS: tuple[Label, ...] = (
    Label("title", "Title", "line"),
    Label("objective", "Objective", "text"),
    Label("status", "Status", "line"),
    Label("summary", "Summary", "text"),
    Label("current_plan", "Plan", "text"),
    Label("completed_steps", "Done", "list", item="Done", mark="[x] "),
    Label("next_steps", "Next", "list", item="Next", mark="[ ] "),
    Label("blockers", "Blockers", "list", item="Blocker"),
    Label("files_touched", "Files", "list", item="File"),
    Label("notes", "Notes", "text"),
)
UPDATED, SESSION, PROJECT = "Updated", "Session", "Project"


def checkpoint_text(cp: Checkpoint | CheckpointPayload) -> str:
    """The checkpoint as plain searchable text: one ``Label: value`` line per field and per list item.

    Pure and deterministic, so the search index can store it as one document and a
    changed checkpoint simply replaces it.
    """
    parts: list[str] = []
    for lb in LABELS:
        value = getattr(cp, lb.field)
        if lb.shape == "list":
            parts.extend(f"{lb.item}: {item}" for item in value)
        elif value:
            parts.append(f"{lb.label}: {value}")
    return "\n".join(parts)


def render_handoff(cp: Checkpoint) -> str:
    """A Markdown hand-off for the next person or agent picking up the session."""
    # A newline in a heading or a list item would end it and spill into the body.
    lines = [f"# Hand-off: {one_line(cp.title or cp.session_id)}", ""]
    lines.append(f"- {SESSION}: `{cp.session_id}`")
    lines.append(f"- {PROJECT}: `{cp.project_id}`")
    for lb, value in _set_fields(cp, header=True):
        if lb.field != "title":  # the title is the heading
            lines.append(f"- {lb.label}: {one_line(value)}")
    lines.append(f"- {UPDATED}: {time.strftime('%Y-%m-%d %H:%M:%S %z', time.localtime(cp.updated_at))}")
    for lb, value in _set_fields(cp, header=False):
        body = [value] if lb.shape == "text" else [f"- {lb.mark}{one_line(item)}" for item in value]
        lines += ["", f"## {lb.label}", "", *body]
    lines += [
        "",
        "---",
        "",
        "_Written by `voyager checkpoint handoff` from the saved checkpoint. "
        "Edits here are not read back; use `voyager checkpoint save` to change the checkpoint._",
        "",
    ]
    return "\n".join(lines)


def render_status(cp: Checkpoint, snapshots: int) -> str:
    """``voyager checkpoint status``'s text: a header of the short fields, then a section per field that is set."""
    lines = [f"{cp.session_id}  ({PROJECT.lower()} {cp.project_id})"]
    for lb, value in _set_fields(cp, header=True):
        lines.append(f"{lb.label + ':':<11}{value}")
    lines.append(f"{UPDATED + ':':<11}{when(cp.updated_at)}  ({snapshots} snapshot{'s' if snapshots != 1 else ''})")
    for lb, value in _set_fields(cp, header=False):
        body = value.splitlines() if lb.shape == "text" else [lb.mark + item for item in value]
        lines += ["", f"{lb.label}:"] + [f"  {line}" for line in body]
    return "\n".join(lines)


def when(ts: float | None) -> str:
    """A local time as the CLI's text shows it (``-`` for none)."""
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def handoff_filename(session_id: str) -> str:
    """``handoff-<slug>-<hash>.md``: safe on any filesystem, and injective.

    The slug keeps ASCII letters, digits, ``_`` and ``-`` only, so no separator, ``..``
    or odd Unicode can reach the path; the hash of the full id keeps ``a/b`` and ``a_b``
    (or two long ids sharing a prefix) from sharing a file.
    """
    sid = require_id(session_id)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", sid).strip("_-")[:64] or "session"
    digest = hashlib.sha256(sid.encode("utf-8")).hexdigest()[:12]
    return f"handoff-{slug}-{digest}.md"


def _set_fields(cp: Checkpoint, *, header: bool) -> Iterator[tuple[Label, Any]]:
    """The fields of ``cp`` that are set, in ``LABELS`` order, with their values: the short ``line`` ones that
    make a rendering's header, or (``header=False``) the others, each a section of its own."""
    for lb in LABELS:
        value = getattr(cp, lb.field)
        if value and (lb.shape == "line") == header:
            yield lb, value
