"""A tool call as people read it: an edit as a diff, a written file as code, a shell call as its command.

What the index keeps of a call is its tool's name (``Event.tool``) and its text, by the one rule of
``ingest/toolcall.py``: a shell call's command line, any other call's arguments as
compact JSON (so an ``Edit`` is ``{"file_path":…,"old_string":"a\\nb",…}`` on one line). Shown as
stored, that is unreadable; every front end (``voyager show`` and search hits in the CLI, the picker,
the web page) asks :func:`parts` instead and draws what it returns in its own medium:

* an edit (a path and an old/new pair, in any agent's spelling; several edits; a patch; a SEARCH/REPLACE
  block) as a unified diff of the two texts (:class:`Diff`);
* a written file (a path and its content) as a code block in the file's language (:class:`Code`);
* a shell call as its command (:class:`Command`);
* other tools Voyager knows (read, search, fetch, a subagent's task, a to-do list) as labelled fields
  (:class:`Field`);
* anything else as pretty-printed JSON, a string that holds line breaks shown as its lines (:class:`Json`).

Newlines are never shown escaped. The text given here is the stored text (cut at the index's cap,
``search/prepare.py``: cut JSON is closed as far as it reads, and the cut said); nothing is invented.
:func:`readable_snippet` does the same for a search hit's one-line excerpt of a call, keeping its
highlight offsets. Each front end keeps neutralising what it draws (``textsafe.printable``, HTML
escaping): this module returns plain strings, as hostile as the session that held them.

On the bottom floor (``core/``), because every front end draws calls and front ends read nothing below
the API (tests/test_layers.py); it knows the names agents give their tools' arguments, no file format.
Standard library only, imported only when a call is drawn: ``voyager show`` through ``voyager serve``
renders in a client that imports nothing heavier.
"""

from __future__ import annotations

import json
import re

from voyager_sessions.core.toolnames import is_shell_tool, is_subagent_tool

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see the docstring)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any


class Part:
    """One piece of a call as shown; ``label`` says what it is (a field's name, a file's path), or is empty."""

    __slots__ = ("label",)
    kind = ""

    def __init__(self, label: str = "") -> None:
        self.label = label

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in ("label", *self.__slots__) if k != "label")
        return f"{type(self).__name__}({self.label!r}{', ' + fields if fields else ''})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, k) == getattr(other, k) for k in ("label", *type(self).__slots__)
        )

    __hash__ = None  # type: ignore[assignment]


class Field(Part):
    """A labelled value: one line, or several (a prompt, a list)."""

    __slots__ = ("text",)
    kind = "field"

    def __init__(self, label: str, text: str) -> None:
        super().__init__(label)
        self.text = text


class Code(Part):
    """A file's content (``label``: its path) in ``language`` (a Pygments/Markdown name, or '' when unknown)."""

    __slots__ = ("text", "language")
    kind = "code"

    def __init__(self, label: str, text: str, language: str = "") -> None:
        super().__init__(label)
        self.text = text
        self.language = language


class Command(Part):
    """A shell command line (its reason, when the agent gave one, is the ``# …`` line the text ends with)."""

    __slots__ = ("text",)
    kind = "command"

    def __init__(self, text: str) -> None:
        super().__init__("")
        self.text = text


class Diff(Part):
    """A change to a file (``label``: its path, or ''): lines tagged ``+`` added, ``-`` removed, `` `` kept,
    ``@`` a hunk's start, ``=`` a header line of a patch (the file it changes)."""

    __slots__ = ("lines",)
    kind = "diff"

    def __init__(self, label: str, lines: list[tuple[str, str]]) -> None:
        super().__init__(label)
        self.lines = lines


class Json(Part):
    """Arguments of a tool Voyager does not know, pretty-printed (strings with line breaks as their lines)."""

    __slots__ = ("text",)
    kind = "json"

    def __init__(self, text: str) -> None:
        super().__init__("")
        self.text = text


class Note(Part):
    """Voyager's own remark about the call (the stored text was cut): shown apart from the call."""

    __slots__ = ("text",)
    kind = "note"

    def __init__(self, text: str) -> None:
        super().__init__("")
        self.text = text


# -- the vocabulary: argument names as agents spell them ------------------------------------------------

#: The argument naming the file a call reads or changes.
PATH_KEYS = (
    "file_path",
    "filepath",
    "path",
    "absolute_path",
    "target_file",
    "file",
    "filename",
    "notebook_path",
    "target",
)
#: (old, new) argument pairs of an edit: Claude/Gemini/Qwen, OpenCode/Kilo, Copilot/OpenHands/Goose, Pi, Kimi.
EDIT_PAIRS = (
    ("old_string", "new_string"),
    ("oldstring", "newstring"),
    ("old_str", "new_str"),
    ("oldtext", "newtext"),
    ("old", "new"),
    ("search", "replace"),
)
#: The argument holding a whole file's new content.
CONTENT_KEYS = ("content", "contents", "file_text", "filetext", "new_content", "text", "code_edit")
#: The argument holding a patch (Codex's apply_patch input, OpenCode's patchText, Cline's diff).
PATCH_KEYS = ("patch", "patchtext", "patch_text", "diff", "input")
#: A list of edits of one file (Claude's MultiEdit, OpenCode's multiedit).
EDITS_KEYS = ("edits",)
#: A to-do list or plan: a list of items, each with text and a status.
TODO_KEYS = ("todos", "plan", "items")

#: Tools whose arguments are shown as labelled fields (names compared case-insensitively, namespace
#: stripped): reading, listing, searching, fetching, subagents' tasks, plans, notes.
KNOWN_TOOLS = frozenset(
    {
        "read",
        "read_file",
        "readfile",
        "read_many_files",
        "view",
        "view_file",
        "cat",
        "ls",
        "list",
        "list_dir",
        "list_directory",
        "list_files",
        "glob",
        "find",
        "find_files",
        "file_search",
        "grep",
        "search",
        "search_files",
        "search_file_content",
        "codebase_search",
        "grep_search",
        "ripgrep",
        "rg",
        "webfetch",
        "web_fetch",
        "fetch",
        "websearch",
        "web_search",
        "google_web_search",
        "todowrite",
        "todo_write",
        "todoread",
        "write_todos",
        "update_plan",
        "update_todos",
        "save_memory",
        "memory",
        "notebookedit",
        "notebook_edit",
        "exitplanmode",
        "exit_plan_mode",
        "askuserquestion",
        "ask_followup_question",
        "attempt_completion",
        "complete_task",
        "skill",
        "slashcommand",
        "killshell",
        "kill_shell",
        "bashoutput",
        "view_image",
    }
)

#: How a field's name reads (anything else: the name with ``_`` as spaces, camelCase split).
LABELS = {
    **dict.fromkeys(PATH_KEYS, "file"),
    "path": "path",
    "dir_path": "folder",
    "directory": "folder",
    "absolute_path_dir": "folder",
    "pattern": "pattern",
    "glob": "files",
    "include": "files",
    "query": "query",
    "q": "query",
    "url": "url",
    "prompt": "prompt",
    "description": "description",
    "subagent_type": "agent",
    "agent_type": "agent",
    "agent_name": "agent",
    "offset": "from line",
    "limit": "lines",
    "explanation": "why",
    "instruction": "instruction",
    "instructions": "instructions",
    "output_mode": "output",
}

#: File name endings and the language a code block is highlighted as (Pygments' and Markdown's names agree).
LANGUAGES = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "jsx",
    "ts": "typescript",
    "tsx": "tsx",
    "rs": "rust",
    "go": "go",
    "java": "java",
    "kt": "kotlin",
    "kts": "kotlin",
    "scala": "scala",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "swift": "swift",
    "m": "objective-c",
    "sh": "bash",
    "bash": "bash",
    "zsh": "zsh",
    "fish": "fish",
    "ps1": "powershell",
    "sql": "sql",
    "json": "json",
    "jsonl": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "ini": "ini",
    "cfg": "ini",
    "md": "markdown",
    "markdown": "markdown",
    "html": "html",
    "htm": "html",
    "css": "css",
    "scss": "scss",
    "less": "less",
    "xml": "xml",
    "svg": "xml",
    "vue": "vue",
    "svelte": "svelte",
    "lua": "lua",
    "r": "r",
    "jl": "julia",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "dart": "dart",
    "zig": "zig",
    "nim": "nim",
    "pl": "perl",
    "proto": "protobuf",
    "tf": "terraform",
    "graphql": "graphql",
    "gql": "graphql",
    "diff": "diff",
    "patch": "diff",
    "dockerfile": "docker",
    "makefile": "make",
    "mk": "make",
    "cmake": "cmake",
    "gradle": "groovy",
    "groovy": "groovy",
}

#: The index's cut marker (search/prepare.py's TRUNCATION_MARKER), at the end of a cut text.
_CUT = re.compile(r"\n\[… truncated by voyager: ([\d,]+) more characters; [^\n]*\]\Z")

#: A diff is worked out line by line only up to this many lines on each side (difflib is quadratic at worst):
#: past it the old text is shown removed and the new one added, whole.
DIFF_LINES = 4000

#: A JSON document nested deeper than this is shown as its text (Python's json recurses).
MAX_DEPTH = 200

_DIFF_TAGS = frozenset("+- @=")


def language_of(path: str) -> str:
    """The language a file is written in, by its name (``''`` when its ending says nothing)."""
    name = re.split(r"[\\/]", path.strip())[-1].lower()
    if name in LANGUAGES:  # Dockerfile, Makefile
        return LANGUAGES[name]
    stem, dot, ext = name.rpartition(".")
    return LANGUAGES.get(ext, "") if dot and stem else ""


def _fold(name: str) -> str:
    """A key or tool name compared as agents vary it: any case (``filePath`` is ``filepath``)."""
    return name.strip().casefold()


def _known(tool: str | None) -> bool:
    if not isinstance(tool, str):
        return False
    key = _fold(tool)
    return key in KNOWN_TOOLS or re.split(r"\.|__|/", key)[-1] in KNOWN_TOOLS


def label_of(key: str) -> str:
    """How argument ``key`` reads as a field's label."""
    folded = _fold(key)
    if folded in LABELS:
        return LABELS[folded]
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key.strip())
    return spaced.replace("_", " ").replace("-", " ").strip().lower() or key


def _get(args: dict[str, Any], keys: Iterable[str]) -> tuple[str, Any] | None:
    """The first of ``keys`` (compared folded) that ``args`` holds, as (its key, its value)."""
    folded = {_fold(k): k for k in args if isinstance(k, str)}
    for key in keys:
        if key in folded:
            return folded[key], args[folded[key]]
    return None


# -- JSON, read as far as it goes ----------------------------------------------------------------------


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _closed(text)


_MISSING = object()


def _closed(text: str) -> Any:
    """JSON cut short (at the index's cap) closed where it stops: its open string and containers ended,
    a dangling key or comma dropped. ``_MISSING`` when that does not read either."""
    stack: list[str] = []
    in_string = escaped = False
    depth_ok = True
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
            if len(stack) > MAX_DEPTH:
                depth_ok = False
                break
        elif ch in "}]":
            if not stack:
                return _MISSING
            stack.pop()
    if not depth_ok or not stack:
        return _MISSING
    head = text
    if in_string:
        if escaped:
            head = head[:-1]
        head = re.sub(r"\\u[0-9a-fA-F]{0,3}\Z", "", head) + '"'
    for _ in range(3):  # a dangling comma, colon or key after the last whole value
        stripped = head.rstrip()
        if stripped.endswith(","):
            head = stripped[:-1]
        elif stripped.endswith(":"):
            head = stripped + " null"
        elif stack[-1] == "}" and re.search(r'[{,]\s*"(?:[^"\\]|\\.)*"\Z', stripped):
            head = re.sub(r',?\s*"(?:[^"\\]|\\.)*"\Z', "", stripped)
        else:
            break
    try:
        return json.loads(head + "".join(reversed(stack)))
    except (ValueError, RecursionError):
        return _MISSING


# -- diffs ------------------------------------------------------------------------------------------------


def diff_lines(old: str, new: str, context: int = 3) -> list[tuple[str, str]]:
    """``old`` → ``new`` as tagged lines of a unified diff (hunks start with ``@``; the texts are fragments of
    a file, so hunks carry no line numbers)."""
    a, b = old.split("\n"), new.split("\n")
    if not old:
        return [("+", line) for line in b]
    if not new:
        return [("-", line) for line in a]
    if len(a) > DIFF_LINES or len(b) > DIFF_LINES:
        return [("-", line) for line in a] + [("+", line) for line in b]
    import difflib

    out: list[tuple[str, str]] = []
    groups = difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)
    for n, group in enumerate(groups):
        if n:
            out.append(("@", "⋯"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [(" ", line) for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += [("-", line) for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                out += [("+", line) for line in b[j1:j2]]
    return out


_SEARCH_REPLACE = re.compile(
    r"^<{5,} SEARCH[^\n]*\n(.*?)\n?^={5,}[^\n]*\n(.*?)\n?^>{5,} REPLACE[^\n]*$", re.MULTILINE | re.DOTALL
)


def patch_lines(text: str) -> list[tuple[str, str]] | None:
    """A patch's lines tagged as a diff's (Codex's ``*** Begin Patch``, a unified diff, SEARCH/REPLACE
    blocks), or None when ``text`` is not a patch."""
    blocks = list(_SEARCH_REPLACE.finditer(text))
    if blocks:
        out: list[tuple[str, str]] = []
        for n, m in enumerate(blocks):
            if n:
                out.append(("@", "⋯"))
            old = re.sub(r"^:start_line:\s*\d+\s*\n-{3,}\n", "", m.group(1))  # Roo/Kilo's apply_diff header
            out += diff_lines(old, m.group(2))
        return out
    head = text.lstrip()[:200]
    if not (
        head.startswith(("*** Begin Patch", "diff --git ", "--- ", "Index: "))
        or (head.startswith("@@") and "\n" in text)
    ):
        return None
    out = []
    for line in text.split("\n"):
        if line.startswith(("*** ", "diff --git", "--- ", "+++ ", "index ", "Index: ", "===")):
            out.append(("=", line))
        elif line.startswith("@@"):
            out.append(("@", line))
        elif line[:1] in ("+", "-"):
            out.append((line[0], line[1:]))
        else:
            out.append((" ", line[1:] if line.startswith(" ") else line))
    while out and out[-1] == (" ", ""):
        out.pop()
    return out


# -- pretty JSON, newlines shown as lines ------------------------------------------------------------------


def pretty(value: Any, indent: int = 0) -> str:
    """``value`` as indented JSON, except that a string holding line breaks is written as its lines under a
    ``|`` (as YAML writes a block), never with ``\\n`` escapes."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}  {json.dumps(str(k), ensure_ascii=False)}: {pretty(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + _joined(items, [v for v in value.values()]) + f"\n{pad}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(not isinstance(v, (dict, list)) and not (isinstance(v, str) and "\n" in v) for v in value):
            flat = "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
            if len(flat) + indent <= 100:
                return flat
        return "[\n" + _joined([f"{pad}  {pretty(v, indent + 2)}" for v in value], value) + f"\n{pad}]"
    if isinstance(value, str) and ("\n" in value or "\r" in value):
        lines = value.replace("\r\n", "\n").split("\n")
        return "|\n" + "\n".join(f"{pad}    {line}" for line in lines)
    return json.dumps(value, ensure_ascii=False)


def _joined(items: list[str], values: list[Any]) -> str:
    """Items of a container one a line, a comma after each but the last and but a block of lines (the line
    break ends a block; a comma after its last line would read as part of the text)."""
    out = []
    for n, (item, value) in enumerate(zip(items, values)):
        block = isinstance(value, str) and ("\n" in value or "\r" in value)
        out.append(item + ("" if block or n == len(items) - 1 else ","))
    return "\n".join(out)


def _value_text(value: Any) -> str:
    """A field's value as text: a string as written, a list of strings one a line, anything else pretty JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return pretty(value)


_DONE = {"completed": "☑", "done": "☑", "complete": "☑", "in_progress": "◐", "in-progress": "◐", "active": "◐"}


def _checklist(items: list[Any]) -> str | None:
    """A to-do list as one line an item (``☐``/``◐``/``☑`` and its text), or None when it is not one."""
    lines = []
    for item in items:
        if not isinstance(item, dict):
            return None
        text = next(
            (
                item[k]
                for k in ("content", "step", "description", "text", "title", "task")
                if isinstance(item.get(k), str)
            ),
            None,
        )
        if text is None:
            return None
        status = item.get("status")
        lines.append(f"{_DONE.get(status.casefold(), '☐') if isinstance(status, str) else '☐'} {text}")
    return "\n".join(lines) if lines else None


# -- a call -------------------------------------------------------------------------------------------------


def _path(args: dict[str, Any]) -> str:
    got = _get(args, PATH_KEYS)
    return got[1] if got and isinstance(got[1], str) else ""


def _edit(args: dict[str, Any]) -> list[Part] | None:
    """An edit, several edits, a patch or a written file in ``args``, as parts; None when it is none of these."""
    path = _path(args)
    for old_key, new_key in EDIT_PAIRS:
        old, new = _get(args, (old_key,)), _get(args, (new_key,))
        if old and new and isinstance(old[1], str) and isinstance(new[1], str):
            rest = [k for k in args if k not in (old[0], new[0]) and _fold(k) not in PATH_KEYS]
            return [Diff(path, diff_lines(old[1], new[1])), *_fields(args, rest)]
    nested = _get(args, ("edit",))  # Kimi's StrReplaceFile: {"path", "edit": {"old", "new"}}
    if nested and isinstance(nested[1], dict):
        inner = _edit({**nested[1], **({"path": path} if path else {})})
        if inner:
            return inner
    edits = _get(args, EDITS_KEYS)
    if edits and isinstance(edits[1], list) and edits[1] and all(isinstance(e, dict) for e in edits[1]):
        lines: list[tuple[str, str]] = []
        for n, e in enumerate(edits[1]):
            one = _edit(e)
            if not one or not isinstance(one[0], Diff):
                break
            if n:
                lines.append(("@", "⋯"))
            lines += one[0].lines
        else:
            return [Diff(path, lines)]
    patch = _get(args, PATCH_KEYS)
    if patch and isinstance(patch[1], str):
        tagged = patch_lines(patch[1])
        if tagged is not None:
            rest = [k for k in args if k != patch[0] and _fold(k) not in PATH_KEYS]
            return [Diff(path, tagged), *_fields(args, rest)]
    content = _get(args, CONTENT_KEYS)
    if path and content and isinstance(content[1], str):
        rest = [k for k in args if k != content[0] and _fold(k) not in PATH_KEYS]
        return [Code(path, content[1], language_of(path)), *_fields(args, rest)]
    return None


def _fields(args: dict[str, Any], keys: Iterable[str]) -> list[Part]:
    out: list[Part] = []
    for key in keys:
        value = args[key]
        if value is None or value is False or value == "" or value == [] or value == {}:
            continue  # says nothing (an edit's replace_all: false)
        if _fold(str(key)) in TODO_KEYS and isinstance(value, list):
            listed = _checklist(value)
            if listed is not None:
                out.append(Field(label_of(str(key)), listed))
                continue
        out.append(Field(label_of(str(key)), _value_text(value)))
    return out


def parts(tool: str | None, text: str) -> list[Part]:
    """The call to ``tool`` whose stored text is ``text``, as the parts people read (see the module's docstring)."""
    note: list[Part] = []
    cut = _CUT.search(text)
    if cut:
        text = text[: cut.start()]
        note = [Note(f"… cut by voyager: {cut.group(1)} more characters (`voyager show` reads the source)")]
    stripped = text.strip()
    if not stripped:
        return note
    value: Any = _MISSING
    if stripped[0] in "{[":
        value = _loads(stripped)
    if value is _MISSING:
        # Not JSON: a shell call's command line, a patch, or the arguments as the agent wrote them.
        tagged = patch_lines(text)
        if tagged is not None:
            return [Diff("", tagged), *note]
        if is_shell_tool(tool) or (isinstance(tool, str) and _fold(tool) in ("exec", "execute")):
            return [Command(text), *note]
        if text == (tool or "").strip():  # a call without arguments reads as its name: nothing more to show
            return note
        return [Field("", text), *note] if "\n" in text or not stripped.startswith(("{", "[")) else [Json(text), *note]
    if isinstance(value, dict):
        edit = _edit(value)
        if edit is not None:
            return [*edit, *note]
        if is_shell_tool(tool):
            got = _get(value, ("command", "cmd", "commandline", "script", "code"))
            if got and isinstance(got[1], str):
                return [Command(got[1]), *_fields(value, [k for k in value if k != got[0]]), *note]
        if _known(tool) or is_subagent_tool(tool):
            return [*_fields(value, list(value)), *note]
    elif isinstance(value, str):
        return [Command(value) if is_shell_tool(tool) else Field("", value), *note]
    return [Json(pretty(value)), *note]


def styled(shown: Sequence[Part]) -> list[tuple[str, str]]:
    """The parts as lines of text, each with what it is, for a front end to style: ``add``/``del`` (a diff's
    lines, behind ``+``/``-``), ``keep`` (a diff's context), ``hunk`` (a break between hunks, a patch's
    header), ``file`` (the file a diff or code block is of), ``command`` (behind ``$``), ``code`` (a file's
    content), ``label`` (a field's ``label:``, its value after it or indented below), ``text``, ``note``."""
    out: list[tuple[str, str]] = []
    for part in shown:
        if isinstance(part, Diff):
            if part.label:
                out.append(("file", f"✎ {part.label}"))
            for tag, text in part.lines:
                if tag == "+":
                    out.append(("add", f"+ {text}".rstrip()))
                elif tag == "-":
                    out.append(("del", f"- {text}".rstrip()))
                elif tag in "@=":
                    out.append(("hunk", text))
                else:
                    out.append(("keep", f"  {text}".rstrip()))
        elif isinstance(part, Code):
            out.append(("file", f"✎ {part.label}" + (f" ({part.language})" if part.language else "")))
            body = part.text[:-1] if part.text.endswith("\n") else part.text  # a file's last line ends with one
            out += [("code", line) for line in body.split("\n")]
        elif isinstance(part, Command):
            first, *rest = part.text.split("\n")
            out.append(("command", f"$ {first}"))
            out += [("command", f"  {line}") for line in rest]
        elif isinstance(part, Field):
            if not part.label:
                out += [("text", line) for line in part.text.split("\n")]
            elif "\n" in part.text:
                out.append(("label", f"{part.label}:"))
                out += [("text", f"  {line}") for line in part.text.split("\n")]
            else:
                out.append(("label", f"{part.label}: {part.text}"))
        elif isinstance(part, Json):
            out += [("text", line) for line in part.text.split("\n")]
        elif isinstance(part, Note):
            out.append(("note", part.text))
    return out


def plain(shown: Sequence[Part]) -> str:
    """The parts as plain text (:func:`styled`'s lines)."""
    return "\n".join(text for _, text in styled(shown))


# -- a hit's excerpt ------------------------------------------------------------------------------------

#: JSON's punctuation between a snippet's keys and values, and its escapes, as they read in one line.
_SNIPPET_TOKENS = re.compile(
    r'\\u[0-9a-fA-F]{4}|\\.|"\s*:\s*"?|"?\s*,\s*"|^…?[{\[]"?|"?[}\]]$|[{\[]"|"[}\]]|"(?=…$)|^…"|^"'
)
_ESCAPES = {"n": " ", "t": " ", "r": " ", "b": "", "f": "", "/": "/", "\\": "\\", '"': '"'}


def readable_snippet(
    kind: str | None, tool: str | None, snippet: str, highlights: Sequence[Sequence[int]]
) -> tuple[str, list[tuple[int, int]]]:
    """A search hit's one-line excerpt of a tool call as it reads (``"file_path":"a","old_string":"x\\ny"``
    → ``file_path: a · old_string: x y``: escapes undone, line breaks as spaces as every excerpt folds them),
    with its highlight offsets moved along. Any other excerpt comes back as it is."""
    spans = [(int(a), int(b)) for a, b in highlights]
    if kind != "tool_call" or is_shell_tool(tool) or '":' not in snippet:
        return snippet, spans
    out: list[str] = []
    # where[i]: the output offset of input offset i (for every i, and one past the end).
    where = [0] * (len(snippet) + 1)
    pos = at = 0
    for m in _SNIPPET_TOKENS.finditer(snippet):
        s, e = m.span()
        for i in range(at, s):
            where[i] = pos
            pos += 1
        out.append(snippet[at:s])
        token = m.group()
        if token.startswith("\\u") and len(token) == 6:
            code = int(token[2:], 16)
            # A lone surrogate half (JSON writes astral characters as a pair) cannot be printed: one mark for it.
            rep = "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code)
            rep = " " if rep in "\n\r\t" else rep
        elif token.startswith("\\"):
            rep = _ESCAPES.get(token[1], token[1])
        elif ":" in token:
            rep = ": "
        elif "," in token:
            rep = " · "
        elif token.startswith("…"):
            rep = "…"
        elif s > 0 and token[0] in "{[" or e < len(snippet) and token[-1] in "}]":
            rep = token.strip('"')  # an object or list inside the arguments keeps its brackets
        else:
            rep = ""  # the arguments' own braces, a string's quotes at the excerpt's ends
        for i in range(s, e):
            where[i] = pos
        out.append(rep)
        pos += len(rep)
        at = e
    for i in range(at, len(snippet)):
        where[i] = pos
        pos += 1
    out.append(snippet[at:])
    where[len(snippet)] = pos
    text = "".join(out)
    # Line breaks became spaces: fold runs of them as the excerpt folded the text's own.
    folded, moved = _fold_spaces(text)
    mapped = []
    for a, b in spans:
        if 0 <= a < b <= len(snippet):
            na, nb = moved[where[a]], moved[where[b]]
            if nb > na:
                mapped.append((na, nb))
    return folded, mapped


def _fold_spaces(text: str) -> tuple[str, list[int]]:
    """``text`` with runs of spaces as one, and where each offset (and the end) went."""
    out: list[str] = []
    moved = [0] * (len(text) + 1)
    pos = 0
    prev_space = False
    for i, ch in enumerate(text):
        moved[i] = pos
        if ch == " " and prev_space:
            continue
        out.append(ch)
        pos += 1
        prev_space = ch == " "
    moved[len(text)] = pos
    return "".join(out), moved


__all__ = [
    "Code",
    "Command",
    "Diff",
    "Field",
    "Json",
    "Note",
    "Part",
    "diff_lines",
    "language_of",
    "parts",
    "patch_lines",
    "plain",
    "pretty",
    "readable_snippet",
    "styled",
]
