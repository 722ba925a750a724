"""The three renderings (``store/checkpoints/render.py``): search text, Markdown hand-off, CLI text, one label table."""

from __future__ import annotations

from voyager_sessions.store.checkpoints import (
    LABELS,
    PAYLOAD_FIELDS,
    Checkpoint,
    CheckpointPayload,
    checkpoint_text,
    handoff_filename,
    render_handoff,
    render_status,
)

SID = "claude:0001"


def test_checkpoint_text_is_searchable_plain_text() -> None:
    cp = Checkpoint(
        session_id=SID,
        project_id="p",
        title="T",
        objective="O",
        status="S",
        current_plan="Plan",
        completed_steps=("d1",),
        next_steps=("n1",),
        blockers=("b1",),
        files_touched=("f.py",),
        notes="N",
        created_at=1.0,
        updated_at=2.0,
    )
    text = checkpoint_text(cp)
    for piece in ("O", "S", "Plan", "Done: d1", "Next: n1", "Blocker: b1", "File: f.py", "Notes: N"):
        assert piece in text
    assert checkpoint_text(cp) == text  # deterministic
    assert checkpoint_text(CheckpointPayload()) == ""


def test_handoff_names_do_not_collide() -> None:
    ids = ["a/b", "a_b", "a:b", "a b", "a.b", "A/B", "x" * 100 + "1", "x" * 100 + "2"]
    assert len({handoff_filename(i) for i in ids}) == len(ids)


FULL = Checkpoint(
    session_id=SID,
    project_id="/repo",
    title="Fix login",
    objective="users log in",
    status="in progress",
    summary="half done",
    current_plan="1. test\n2. fix",
    completed_steps=("write test",),
    next_steps=("fix bug",),
    blockers=("flaky CI",),
    files_touched=("src/login.py",),
    notes="ask Ana",
    created_at=1.0,
    updated_at=2.0,
)


def test_the_label_table_names_every_payload_field_in_order() -> None:
    assert tuple(lb.field for lb in LABELS) == PAYLOAD_FIELDS
    assert all(bool(lb.item) == (lb.shape == "list") for lb in LABELS)


def test_the_three_renderings_use_the_same_labels() -> None:
    text, handoff, status = checkpoint_text(FULL), render_handoff(FULL), render_status(FULL, 2)
    for lb in LABELS:
        value = getattr(FULL, lb.field)
        first = value[0] if lb.shape == "list" else value.splitlines()[0]
        # The search text: one "Label: value" line per field or per item.
        assert f"{lb.item or lb.label}: {first}" in text.splitlines() or f"{lb.label}: {value}" in text
        if lb.shape == "line":
            assert f"{lb.label + ':':<11}{value}" in status.splitlines()
            if lb.field != "title":  # the title is the hand-off's heading
                assert f"- {lb.label}: {value}" in handoff.splitlines()
        else:
            assert f"## {lb.label}" in handoff.splitlines()
            assert f"{lb.label}:" in status.splitlines()
            assert f"  {lb.mark}{first}" in status.splitlines()
            if lb.shape == "list":
                assert f"- {lb.mark}{first}" in handoff.splitlines()
    assert handoff.startswith("# Hand-off: Fix login\n")
    assert "(2 snapshots)" in status and "  2. fix" in status


def test_renderings_leave_out_unset_fields() -> None:
    bare = Checkpoint(session_id=SID, project_id="default", created_at=1.0, updated_at=1.0)
    assert checkpoint_text(bare) == ""
    header, updated = render_status(bare, 1).splitlines()  # nothing but the header and "Updated"
    assert header == f"{SID}  (project default)" and updated.startswith("Updated:") and updated.endswith("(1 snapshot)")
    handoff = render_handoff(bare)
    assert handoff.startswith(f"# Hand-off: {SID}\n") and "## " not in handoff


def test_newlines_cannot_break_the_hand_off_structure() -> None:
    cp = Checkpoint(
        session_id=SID,
        project_id="p",
        title="t\n## injected",
        status="a\nb",
        next_steps=("one\n# two",),
        created_at=1.0,
        updated_at=1.0,
    )
    lines = render_handoff(cp).splitlines()
    assert lines[0] == "# Hand-off: t ## injected"
    assert "- Status: a b" in lines and "- [ ] one # two" in lines
