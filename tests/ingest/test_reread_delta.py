"""``reread_delta``: a session read whole again yields only what it added since the last read."""

from __future__ import annotations

from voyager_sessions.core.model import Event
from voyager_sessions.ingest.adapters._common import DeltaStream, EventCounter, reread_delta
from voyager_sessions.ingest.adapters.base import Partial, Unchanged


def numbered(*texts: str) -> list[Event]:
    counter = EventCounter("gemini:s", 0)
    return [e for t in texts if (e := counter.make("assistant", "agent", t)) is not None]


def test_a_first_read_yields_every_event() -> None:
    evs = numbered("a", "b")
    items, kept = reread_delta("gemini:s", evs, None)
    assert items == evs and kept[0] == 2


def test_the_same_events_again_are_unchanged() -> None:
    _, kept = reread_delta("gemini:s", numbered("a", "b"), None)
    items, again = reread_delta("gemini:s", numbered("a", "b"), kept)
    assert items == [Unchanged(session="gemini:s")] and again == kept


def test_events_added_at_the_end_come_after_a_partial() -> None:
    _, kept = reread_delta("gemini:s", numbered("a", "b"), None)
    evs = numbered("a", "b", "c")
    items, now = reread_delta("gemini:s", evs, kept)
    assert items == [Partial(session="gemini:s", from_seq=2), evs[2]] and now[0] == 3


def test_a_change_before_the_end_or_fewer_events_replace_everything() -> None:
    _, kept = reread_delta("gemini:s", numbered("a", "b"), None)
    changed = numbered("a", "B", "c")
    assert reread_delta("gemini:s", changed, kept)[0] == changed
    shorter = numbered("a")
    assert reread_delta("gemini:s", shorter, kept)[0] == shorter


def test_a_state_of_another_shape_is_ignored() -> None:
    evs = numbered("a")
    for junk in ({}, [1], ["x", "y"], [1, 2], "nope"):
        assert reread_delta("gemini:s", evs, junk)[0] == evs


def _streamed(evs: list[Event], before: object, hold: int | None = None) -> tuple[list[object], list[object]]:
    delta = DeltaStream("gemini:s", before)
    if hold is not None:
        delta.HOLD_EVENTS = hold
    out: list[object] = []
    for ev in evs:
        out.extend(delta.add(ev))
    rest, kept = delta.finish()
    return out + rest, kept


def test_the_streamed_delta_yields_what_the_whole_one_does() -> None:
    _, two = reread_delta("gemini:s", numbered("a", "b"), None)
    _, none = reread_delta("gemini:s", [], None)
    cases = [
        (numbered("a", "b"), None),
        (numbered("a", "b"), two),
        (numbered("a", "b", "c"), two),
        (numbered("a", "B", "c"), two),
        (numbered("a"), two),
        ([], two),
        (numbered("a"), none),
        ([], none),
        (numbered("a"), ["x", "y"]),
        (numbered("a"), [5]),
    ]
    for evs, before in cases:
        assert _streamed(evs, before) == reread_delta("gemini:s", evs, before), (evs, before)


def test_the_streamed_delta_holds_a_bounded_prefix_then_replaces_the_session() -> None:
    """A previous read of many events is not held whole to be compared: past the hold, all is yielded again."""
    before = reread_delta("gemini:s", numbered(*"abcdefgh"), None)[1]
    evs = numbered(*"abcdefghi")
    items, kept = _streamed(evs, before, hold=3)
    assert items == evs and kept == reread_delta("gemini:s", evs, before)[1]
