"""The checkpoint's rules (``store/checkpoints/model.py``): merge and document validation, no database."""

from __future__ import annotations

import msgspec
import pytest

from voyager_sessions.store.checkpoints import (
    Checkpoint,
    CheckpointError,
    CheckpointPatch,
    CheckpointPayload,
    decode_payload,
    merge,
)

SID = "claude:0001"


def P(**kw) -> CheckpointPatch:
    return CheckpointPatch(**kw)


def test_merge_rules() -> None:
    base = CheckpointPayload(title="t", status="s", next_steps=("a", "b"), completed_steps=("z",))
    out = merge(base, P(status="", add_done=("a", "z"), add_next=("c", "b"), add_files=(" f ", "f")))
    assert out.status is None  # blank clears
    assert out.title == "t"  # untouched fields stay
    assert out.completed_steps == ("z", "a")  # no duplicates
    assert out.next_steps == ("b", "c")  # finishing a step moves it out of next
    assert out.files_touched == ("f",)  # stripped, deduplicated
    replaced = merge(base, P(replace=CheckpointPayload(title="new"), add_next=("x",)))
    assert replaced == CheckpointPayload(title="new", next_steps=("x",))
    with pytest.raises(CheckpointError, match=r"next\[0\] is empty"):
        merge(base, P(add_next=("  ",)))


def test_decode_payload_validates_and_accepts_status_output() -> None:
    assert decode_payload(b'{"title": "t", "next_steps": ["a"]}') == CheckpointPayload(title="t", next_steps=("a",))
    cp = Checkpoint(session_id=SID, project_id="p", title="t", completed_steps=("d",), created_at=1.0, updated_at=1.0)
    assert decode_payload(msgspec.json.encode(cp)) == cp.payload()  # status --json's checkpoint feeds back
    for bad, why in [
        (b"not json", "malformed"),
        (b'{"title": 3}', "Expected `str | null`, got `int` - at `$.title`"),
        (b'{"next_steps": "a"}', "next_steps"),
        (b'{"tittle": "t"}', "unknown field `tittle`"),
        (b'{"schema_version": 2}', "schema_version 2"),
        (b'{"blockers": [""]}', r"blockers\[0\] is empty"),
        (b"[]", "Expected `object`"),
    ]:
        with pytest.raises(CheckpointError, match=why) as info:
            decode_payload(bad)
        assert "\n" not in str(info.value)
