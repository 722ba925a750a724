"""The Gemini API part shapes both Gemini CLI and Qwen Code store, read the same way for both."""

from __future__ import annotations

from voyager_sessions.ingest.adapters import _genai
from voyager_sessions.ingest.adapters._common import EventCounter


def test_every_stored_content_shape_gives_its_parts() -> None:
    assert _genai.as_parts("hi") == [{"text": "hi"}]
    assert _genai.as_parts({"text": "one part"}) == [{"text": "one part"}]
    assert _genai.as_parts({"role": "user", "parts": ["a", {"text": "b"}, 3]}) == [{"text": "a"}, {"text": "b"}]
    assert _genai.as_parts(None) == [] and _genai.as_parts(42) == []


def test_a_tool_answer_keeps_everything_it_said() -> None:
    ok = {"id": "c", "response": {"output": "done 完成"}}
    failed = {"id": "c", "response": {"error": "Permission denied"}}
    other = {"id": "c", "response": {"files": ["a.py"], "count": 1}}
    assert _genai.response_text(ok) == ("done 完成", False)
    assert _genai.response_text(failed) == ("Permission denied", True)
    assert _genai.response_text(other) == ('{"files":["a.py"],"count":1}', False)
    assert _genai.response_text({"response": "plain"}) == ("plain", False)
    ev = _genai.tool_result_event(EventCounter("qwen:s", 0), failed, None)
    assert ev is not None and ev.is_error and ev.exit_code is None


def test_model_parts_in_order_with_calls_recorded_elsewhere_skipped() -> None:
    parts = [
        {"text": "think", "thought": True},
        {"text": "answer"},
        {"inlineData": {"data": "AAAA"}},
        {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "ls -la"}}},
        {"functionCall": {"id": "c2", "name": "read_file", "args": {"path": "配置.py"}}},
    ]
    evs = list(_genai.model_events(EventCounter("gemini:s", 0), parts, 1.0, skip_calls={"c2"}))
    assert [(e.kind, e.text, e.tool) for e in evs] == [
        ("reasoning", "think", None),
        ("assistant", "answer", None),
        ("tool_call", "ls -la", "run_shell_command"),
    ]
    evs = list(_genai.model_events(EventCounter("gemini:s", 0), parts, 1.0, thoughts=False))
    assert [e.kind for e in evs] == ["assistant", "tool_call", "tool_call"]
    assert evs[2].text == '{"path":"配置.py"}'
