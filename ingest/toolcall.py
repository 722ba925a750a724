"""The one rule for a tool call's searchable text, and the one kind/origin of a subagent's report.

Every adapter meets the same two things in its agent's files, written forty ways: a call the model
made to a tool (a name and arguments, as a value or as JSON text), and the report a subagent it
delegated to sends back. Before this module each adapter rendered a call by its own rule (``{}`` as
``""`` or as ``"{}"``, an empty command, the literal ``None``, shell tools told by a name in one case
but not another) and filed the report as ``meta``, ``tool_result`` or whatever its agent suggested,
so one search found one agent's calls and reports and missed another's. Both rules are written down in
docs/json.md ("Tool calls and subagent reports"). Every adapter calls :func:`tool_call_text` for every
call; the report's pair reaches every adapter through ``EventCounter.make`` (``adapters/_common.py``),
which files the result of a call to one of :data:`SUBAGENT_TOOLS` as :data:`SUBAGENT_REPORT` (OpenCode,
which numbers its own events, calls :func:`report_pair`); a report that comes as a notification is
filed so by the adapter that reads it (:func:`notification_report`).

The tool names (which tools run a shell command, which start a subagent) are what agents call their
tools, kept in :mod:`~voyager_sessions.core.toolnames` (read by the display of calls too), so this
module lives in ``ingest``; it knows no agent's file format.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from typing import Any, Final

import msgspec

from voyager_sessions.core.model import Kind, Origin
from voyager_sessions.ingest.jsonl import decode_json, scrub_surrogates
from voyager_sessions.core.toolnames import SHELL_TOOLS, SUBAGENT_TOOLS, is_shell_tool, is_subagent_tool

__all__ = [
    "SHELL_TOOLS",
    "SUBAGENT_REPORT",
    "SUBAGENT_TOOLS",
    "TOOL_OUTPUT",
    "arguments_text",
    "is_shell_tool",
    "is_subagent_tool",
    "is_task_notification",
    "notification_report",
    "report_pair",
    "tool_call_text",
]

#: The argument that holds a shell tool's command line, in the order they are looked for (any case:
#: ``CommandLine`` is ``commandline``).
_COMMAND_KEYS: Final = ("command", "cmd", "commandline", "script", "code")

#: Text an agent writes where a call has no arguments: JSON's and Python's spellings of "nothing".
_NOTHING: Final = frozenset({"", "null", "None", "{}", "[]", '""', "undefined"})

#: A subagent's report as its parent session holds it: the answer to the call that started the
#: subagent (``tool_result``: it pairs with that call's ``call_id``, ``kind:tool`` finds it, and it
#: ranks as tool output, below the same words as the subagent's own reply in the subagent's session),
#: written by an agent (``agent``: a model wrote it; it is neither a program's output, nor context the
#: agent's harness injected, nor a person's words). Every adapter files every report so, whether the
#: report came back as the tool's result or later as a notification.
SUBAGENT_REPORT: Final[tuple[Kind, Origin]] = ("tool_result", "agent")

#: Any other tool's result: output of a program, origin ``tool``.
TOOL_OUTPUT: Final[tuple[Kind, Origin]] = ("tool_result", "tool")

_encode = msgspec.json.encode
#: The argument in which a shell call says why it runs its command (Claude's ``Bash``, Cursor's
#: ``run_terminal_cmd``): the agent's one line of reason, searched after the command as a comment.
_REASON_KEYS: Final = ("description", "explanation")


def report_pair(tool: str | None, *, background: bool = False) -> tuple[Kind, Origin]:
    """The kind and origin of what the tool ``tool`` returned: :data:`SUBAGENT_REPORT` for a tool that
    starts a subagent (its result is the subagent's words), else :data:`TOOL_OUTPUT`. With ``background``
    (the agent recorded that the subagent was started in the background) the result is only the agent's
    acknowledgement of the launch, tool output; the report comes later as a notification
    (:func:`notification_report`)."""
    return SUBAGENT_REPORT if is_subagent_tool(tool) and not background else TOOL_OUTPUT


#: How Claude Code (and Qwen Code, which took the format) hands a background task's end to the model: a
#: user-role message the harness writes, not a person. A subagent's says ``<summary>Agent "…" …``
#: and carries its ``<result>``; a background shell command's says ``Background command "…"``.
_NOTIFICATION: Final = "<task-notification>"
_CALL_ID = re.compile(r"<tool-use-id>\s*([^<\s][^<]{0,200}?)\s*</tool-use-id>")
_AGENT_SUMMARY = re.compile(r"<summary>\s*(?:Background\s+)?Agent\b", re.IGNORECASE)


def is_task_notification(text: str) -> bool:
    """True for the text of a ``<task-notification>`` (a background task's end, written by the harness)."""
    # Only the head is looked at: stripping a whole long prompt to test its first tag would copy it.
    return text.startswith(_NOTIFICATION) or text[:256].lstrip().startswith(_NOTIFICATION)


def notification_report(text: str) -> tuple[bool, str | None]:
    """Whether a ``<task-notification>`` is a subagent's report (it carries a ``<result>`` or its summary
    names an agent; a background command's end is not), and the id of the call that started the task
    (``<tool-use-id>``), to pair the report with that call."""
    if not is_task_notification(text):
        return False, None
    head = text[:4096]  # the tags come first; the result itself may be long
    found = _CALL_ID.search(head)
    report = "<result>" in text or _AGENT_SUMMARY.search(head) is not None
    return report, (found.group(1) if found else None)


def _json_text(value: Any) -> str:
    """Compact JSON of ``value``, keys in the order written, non-ASCII as is (CJK stays a word to find),
    control characters escaped (``\\u001b``); never Python's ``repr`` (no ``None``, no ``{'a': …}``)."""
    try:
        return _encode(value).decode("utf-8")
    except (TypeError, ValueError, msgspec.EncodeError):
        pass
    try:  # a lone surrogate (a database's text) or a value JSON has no spelling for
        return _encode(scrub_surrogates(value), enc_hook=str).decode("utf-8")
    except (TypeError, ValueError, msgspec.EncodeError, RecursionError):
        return ""


def _argv_text(argv: list[Any]) -> str:
    """An argv list as one command line: the script of ``bash -lc <script>``, else every word quoted."""
    parts = [a if isinstance(a, str) else _json_text(a) for a in argv]
    if len(parts) == 3 and os.path.basename(parts[0]) in {"bash", "sh", "zsh"} and parts[1] in {"-lc", "-c"}:
        return parts[2]
    return shlex.join(parts)


def _with_reason(command: str, by_key: dict[str, Any]) -> str:
    """``command``, and on a line of its own the call's reason for it as a shell comment (``# …``), whitespace
    folded to one line so that it cannot pass for a second command."""
    for key in _REASON_KEYS:
        reason = by_key.get(key)
        if isinstance(reason, str) and reason.strip():
            # A printable reason has no line break to fold; only another one pays for the split.
            return f"{command}\n# {reason.strip() if reason.isprintable() else ' '.join(reason.split())}"
    return command


def _empty(value: Any, depth: int = 0) -> bool:
    """True for a value that says nothing: ``None``, blank text or a spelling of nothing, an empty list,
    an object whose every value says nothing (``{"command": ""}`` is an empty command, not a call's text)."""
    if value is None:
        return True
    if isinstance(value, str):
        if len(value) > 16:  # longer than any spelling of nothing with a little padding: blank or not
            return value.isspace()
        return value.strip() in _NOTHING
    if isinstance(value, dict):
        if depth >= 2:
            return False
        for v in value.values():  # usually decided by the first value: a string with content
            if v is None:
                continue
            if isinstance(v, str):
                if v.isspace() if len(v) > 16 else v.strip() in _NOTHING:
                    continue
                return False
            if not _empty(v, depth + 1):
                return False
        return True
    return isinstance(value, (list, tuple)) and not value


def arguments_text(arguments: Any, *, shell: bool = False) -> str:
    """What a call's arguments contribute to its searchable text (``""`` when they say nothing).

    ``arguments`` is the value or its JSON text (text that is not JSON is taken as written). With
    ``shell``, a mapping's command line (``command``, else ``cmd``, ``commandLine``, ``script``, ``code``, in any case: a
    string as written, an argv list as one line), with its ``description`` (or ``explanation``) after it as a
    ``# `` comment line, stands for the call; a shell tool's bare string is
    its command. Anything else with content is compact JSON. ``None``, ``""``, ``{}``, ``[]`` and
    their spellings as text (``"null"``, ``"None"``, ``"{}"``), and an object whose every value is one of
    those (``{"command": ""}``) contribute nothing.
    """
    value = arguments
    if not isinstance(value, dict):  # an object is what most agents store: it needs none of this
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", "replace")
        if isinstance(value, str):
            if _empty(value):
                return ""
            if value.lstrip()[:1] not in ("{", "[", '"'):
                return value
            try:
                value = decode_json(value.encode("utf-8", "surrogatepass"))
            except (msgspec.DecodeError, RecursionError, UnicodeError):
                return value  # JSON cut short or not JSON: the text is what there is to find
        if _empty(value):
            return ""
        if isinstance(value, str):
            return value
        if not isinstance(value, dict):
            if shell and isinstance(value, list) and all(isinstance(a, str) for a in value):
                return _argv_text(value)
            return _json_text(value)
    if _empty(value):
        return ""
    if shell:
        # Keys as most agents spell them first; any other case only when those are not there.
        by_key = value if "command" in value else {k.casefold(): v for k, v in value.items() if isinstance(k, str)}
        for key in _COMMAND_KEYS:
            command = by_key.get(key)
            if isinstance(command, str) and command.strip():
                return _with_reason(command, by_key)
            if isinstance(command, list) and command:
                return _with_reason(_argv_text(command), by_key)
    return _json_text(value)


def tool_call_text(tool: str | None, arguments: Any, shell_tools: Iterable[str] = ()) -> str:
    """A tool call's searchable text, by the one rule (docs/json.md, "Tool calls and subagent reports").

    The arguments (:func:`arguments_text`; a shell tool's, by :func:`is_shell_tool` with the adapter's
    own ``shell_tools`` beside :data:`SHELL_TOOLS`, as its command line); when they say nothing, the
    tool's name as written, so a call without arguments is still one event, shown and found by its
    name; ``""`` (no event) only when there is neither. The name is not put before the arguments: the
    index already keeps the event's ``tool`` beside its text.
    """
    text = arguments_text(arguments, shell=is_shell_tool(tool, shell_tools))
    if text and not text.isspace():
        return text
    return tool.strip() if isinstance(tool, str) else ""
