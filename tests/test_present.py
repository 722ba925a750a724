"""``voyager_sessions.cli.present``: the CLI's renderer reads the result documents' bytes as the model's Structs would read.

A client of ``voyager serve`` renders what the server sent with these functions and the
standard library only, so they must take exactly the bytes msgspec wrote: ``--jsonl``
cuts each hit out of the document without re-encoding it (Python's ``json`` spells
floats such as ``1e-05`` otherwise than msgspec), whatever the hits' text holds.
"""

from __future__ import annotations

import msgspec

from voyager_sessions.cli import present
from voyager_sessions.cli.render import render_hit
from voyager_sessions.core.model import Event, Hit, SearchResult

TRICKY = ['"hits":[', "]}", '{"a": [1, 2]}', "数据库 データ", "\\", "\x7f\x85 \u2028", "\n\t", ""]


def _hit(i: int, text: str) -> Hit:
    ctx = [Event(session="claude:x", seq=i, kind="user", origin="human", text=text, ts=1e-5 * i, exit_code=0)]
    return Hit(
        session_id=f"claude:{i}{text}",
        provider="claude",
        seq=i,
        kind="tool_result",
        origin="tool",
        timestamp=None,
        cwd=text or None,
        title=text,
        snippet=text,
        highlights=[(0, min(1, len(text)))],
        score=1e-5 * (i + 1) if i % 2 else 1e16 + i,
        resume=None,
        tool="bash",
        exit_code=None,
        hit_count=i,
        context=ctx if i % 3 else None,
    )


def test_hits_are_cut_from_the_document_byte_for_byte():
    hits = [_hit(i, t) for i, t in enumerate(TRICKY)]
    doc = SearchResult(schema_version=1, query='"hits":[ ]', total=len(hits), offset=0, hits=hits)
    body = msgspec.json.encode(doc)
    assert list(present.hit_spans(body)) == [msgspec.json.encode(h) for h in hits]
    # Fields after the hits (an additive field of a later version) and whitespace change nothing.
    later = body[:-1] + b', "sessions_matched": {"hits": [1]}, "more": [[]]}'
    assert list(present.hit_spans(later)) == [msgspec.json.encode(h) for h in hits]
    assert list(present.hit_spans(b'{"hits": [ ]}')) == []


def test_a_decoded_hit_renders_as_the_struct_does():
    for i, text in enumerate(TRICKY):
        h = _hit(i, text)
        decoded = present.decode(msgspec.json.encode(h))
        for color in (False, True):
            for by_session in (False, True):
                assert render_hit(decoded, color=color, by_session=by_session) == render_hit(
                    h, color=color, by_session=by_session
                )
    # Defaults a Struct omits from its JSON read as None, as absent attributes of a Doc.
    assert present.decode(b'{"seq": 1}').tool is None
