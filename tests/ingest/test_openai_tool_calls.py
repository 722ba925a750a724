"""``openai_tool_calls``: the one reading of an OpenAI-style ``tool_calls`` list the adapters share."""

from __future__ import annotations

from voyager_sessions.ingest.adapters._common import ToolCall, UnknownRecords, openai_tool_calls


def test_the_chat_completions_shape_gives_name_arguments_as_written_and_id() -> None:
    raw = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    assert list(openai_tool_calls([raw])) == [ToolCall("bash", '{"command": "ls"}', "call_1", raw)]


def test_the_flat_shape_and_an_object_of_arguments() -> None:
    raw = {"id": "c2", "name": "read_file", "arguments": {"path": "/tmp/数据.txt"}}
    (call,) = openai_tool_calls([raw])
    assert (call.name, call.arguments, call.id) == ("read_file", {"path": "/tmp/数据.txt"}, "c2")


def test_the_calls_own_name_and_arguments_come_before_the_functions() -> None:
    raw = {"name": "outer", "arguments": None, "function": {"name": "inner", "arguments": "{}"}}
    (call,) = openai_tool_calls([raw])
    assert (call.name, call.arguments) == ("outer", None)  # the key is there: its value, even null
    (call,) = openai_tool_calls([{"name": "", "function": {"name": "inner", "arguments": "{}"}}])
    assert (call.name, call.arguments) == ("inner", "{}")  # an empty name names nothing


def test_calls_in_order_and_the_raw_object_for_what_an_agent_adds() -> None:
    calls = [{"call_id": "x9", "function": {"name": "a"}}, {"id": "y", "function": {"name": "b"}}]
    got = list(openai_tool_calls(calls))
    assert [c.name for c in got] == ["a", "b"]
    assert got[0].id is None and got[0].raw.get("call_id") == "x9" and got[1].id == "y"


def test_hostile_values_read_as_absent_and_entries_that_are_not_objects_are_counted() -> None:
    for value in (None, "tool_calls", 3, {"function": {"name": "x"}}, True):
        assert list(openai_tool_calls(value)) == []
    unknown = UnknownRecords("Test")
    got = list(
        openai_tool_calls(
            [None, "bash", 7, [], {"id": 5, "name": ["x"], "function": "not an object"}, {"function": []}],
            unknown,
        )
    )
    assert [(c.name, c.arguments, c.id) for c in got] == [(None, None, None), (None, None, None)]
    assert unknown.counts == {"tool_call:not-object": 4}
    assert len(list(openai_tool_calls([1, 2]))) == 0  # without ``unknown``: skipped all the same
