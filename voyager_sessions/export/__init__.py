"""``voyager export``: a whole session as one file to keep or hand on (Markdown, JSON or HTML).

The API gathers what an export holds (``api.sessions.export``: the ``show`` document — the JSON
contract's ``Timeline``, full texts read back from the source where the index capped them —, the
agent's name and the session's checkpoint, as an :class:`~voyager_sessions.export.blocks.ExportDoc`);
with ``redact`` every session-derived string passes :func:`redact_doc`. :func:`render` turns it into
bytes: JSON is exactly ``voyager show --json``'s document (indented), Markdown and HTML are
made by :mod:`.markdown` and :mod:`.html`. :func:`write_private` writes a file the way
Voyager writes everything: private, atomic, and never over an existing file unless asked.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path
import msgspec

from voyager_sessions.core.errors import DiskFull, UserError, no_space
from voyager_sessions.core.model import Timeline
from voyager_sessions.export.blocks import ExportDoc

FORMATS: tuple[str, ...] = ("md", "json", "html")
#: What ``-o FILE``'s extension says when ``--format`` is not given.
FORMAT_OF_SUFFIX = {".md": "md", ".markdown": "md", ".json": "json", ".html": "html", ".htm": "html"}


def redact_doc(doc: ExportDoc, counts: Counter[str]) -> ExportDoc:
    """``doc`` with every session-derived text redacted: event texts, the title, paths and repo, the checkpoint."""
    from voyager_sessions.export.redact import redact

    tl = doc.timeline
    row = msgspec.structs.replace(
        tl.session,
        **{f: redact(v, counts) for f in ("title", "cwd", "git_repo", "git_branch") if (v := getattr(tl.session, f))},
    )
    events = [msgspec.structs.replace(e, text=redact(e.text, counts)) for e in tl.events]
    checkpoint = doc.checkpoint
    if checkpoint is not None:
        checkpoint = msgspec.structs.replace(
            checkpoint,
            fields=[
                (label, shape, [redact(v, counts) for v in value] if isinstance(value, list) else redact(value, counts))
                for label, shape, value in checkpoint.fields
            ],
        )
    return msgspec.structs.replace(
        doc, timeline=Timeline(schema_version=tl.schema_version, session=row, events=events), checkpoint=checkpoint
    )


def render(doc: ExportDoc, fmt: str) -> bytes:
    """``doc`` as a file of format ``fmt`` (``md``, ``json`` or ``html``), UTF-8."""
    if fmt == "json":
        from voyager_sessions.core.textsafe import escape_json_controls

        return escape_json_controls(msgspec.json.format(msgspec.json.encode(doc.timeline), indent=2)) + b"\n"
    if fmt == "md":
        from voyager_sessions.export.markdown import render as render_md

        text = render_md(doc)
    elif fmt == "html":
        from voyager_sessions.export.html import render as render_html

        text = render_html(doc)
    else:
        raise UserError(f"unknown export format '{fmt}': use one of {', '.join(FORMATS)}")
    return text.encode("utf-8", "replace")


def write_private(path: Path, data: bytes, *, force: bool = False) -> None:
    """Write ``data`` to ``path``: created 0600, complete or not at all, never over a file unless ``force``.

    The bytes go to a temporary file beside ``path``, which is then linked into place
    (fails if ``path`` exists: no window between a check and the write) or, with
    ``force``, renamed over it.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UserError(f"{path} is a directory: give a file name")
    if not force and (path.exists() or path.is_symlink()):
        raise UserError(f"{path} exists: use --force to replace it")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:64]}.", suffix=".tmp", dir=parent)  # 0600
    except FileNotFoundError:
        raise UserError(f"cannot write {path}: {parent} does not exist") from None
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise UserError(f"{path} exists: use --force to replace it") from None
            except OSError:  # a file system without hard links: the check above is the guard
                if path.exists():
                    raise UserError(f"{path} exists: use --force to replace it") from None
                os.replace(tmp, path)
    except OSError as exc:
        if no_space(exc):
            raise DiskFull.at(path) from None
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
