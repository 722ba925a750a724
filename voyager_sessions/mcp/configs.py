"""Editing an agent's MCP config safely: one server's entry set or removed, every other byte the user's.

``voyager mcp install`` writes into files people keep by hand (and agents rewrite), so an edit here
must never change what the file means beyond Voyager's own entry, and must never leave a file the agent
reads differently from what was meant. The rules:

* each format is read by a real parser first: JSON (with comments, ``//`` and ``/* */``, for the agents
  that accept them: Gemini CLI, Qwen Code, OpenCode) by :func:`parse_json`, a scanner that also gives the
  spans the edit uses; TOML (Codex) by the standard library's ``tomllib`` (``tomlkit`` before 3.11);
* the edit is textual where it can be (the entry's value replaced, inserted or removed; comments, key
  order and formatting survive) and through ``tomlkit`` (a round-tripping TOML editor that keeps comments)
  where the file defines the table in a shape a textual edit cannot reach (dotted keys, inline tables);
* what cannot be edited safely is refused with one line (:class:`Unsafe`), nothing written: a key the
  agent would read twice (a duplicated ``mcpServers``: the agent reads only the last), a list of servers
  that is not a table, a file that does not parse;
* every result is parsed again and compared with what was meant (the old document with exactly this entry
  set or gone); a result that differs is refused, never written.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from voyager_sessions.core.errors import UserError


class Unsafe(UserError):
    """The config cannot be edited safely; nothing was written."""


class _Bad(ValueError):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {col}"


# -- JSON (and JSON with comments) --------------------------------------------------------------


@dataclass
class _Member:
    key: str
    start: int  # where the key's string starts
    value_start: int
    value_end: int


@dataclass
class Parsed:
    """A JSON document as the agent reads it (a repeated key: the last one), and the paths of repeated keys."""

    value: Any
    repeated: set[tuple[str, ...]] = field(default_factory=set)


_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class _Scanner:
    """Strict JSON, plus ``//`` and ``/* */`` comments where the agent accepts them (``comments``)."""

    def __init__(self, text: str, comments: bool) -> None:
        self.text = text
        self.comments = comments

    def skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text):
            c = text[pos]
            if c in " \t\r\n":
                pos += 1
            elif c == "/" and text.startswith("//", pos):
                if not self.comments:
                    raise _Bad("a comment, which this agent's config does not allow", pos)
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end + 1
            elif c == "/" and text.startswith("/*", pos):
                if not self.comments:
                    raise _Bad("a comment, which this agent's config does not allow", pos)
                end = text.find("*/", pos + 2)
                if end < 0:
                    raise _Bad("an unclosed comment", pos)
                pos = end + 2
            else:
                break
        return pos

    def string(self, pos: int) -> tuple[str, int]:
        if self.text[pos : pos + 1] != '"':
            raise _Bad("expected a string", pos)
        try:
            return json.decoder.scanstring(self.text, pos + 1, True)  # type: ignore[attr-defined,no-any-return]
        except json.JSONDecodeError as exc:
            raise _Bad(exc.msg, exc.pos) from None

    def value(self, pos: int, path: tuple[str, ...], repeated: set[tuple[str, ...]]) -> tuple[Any, int]:
        """The value at ``pos`` (already past whitespace) and the position after it."""
        text = self.text
        c = text[pos : pos + 1]
        if c == "{":
            members, close = self.members(pos, path, repeated)
            obj: dict[str, Any] = {}
            for m, v in members:
                obj[m.key] = v
            return obj, close + 1
        if c == "[":
            items: list[Any] = []
            pos = self.skip(pos + 1)
            if text[pos : pos + 1] == "]":
                return items, pos + 1
            while True:
                item, pos = self.value(pos, (*path, str(len(items))), repeated)
                items.append(item)
                pos = self.skip(pos)
                if text[pos : pos + 1] == "]":
                    return items, pos + 1
                if text[pos : pos + 1] != ",":
                    raise _Bad("expected , or ]", pos)
                pos = self.skip(pos + 1)
                if text[pos : pos + 1] == "]":
                    raise _Bad("a trailing comma", pos)
        if c == '"':
            return self.string(pos)
        for word, literal in _LITERALS.items():
            if text.startswith(word, pos):
                return literal, pos + len(word)
        number = _NUMBER.match(text, pos)
        if number:
            return json.loads(number.group(0)), number.end()
        raise _Bad("expected a value", pos)

    def members(
        self, pos: int, path: tuple[str, ...], repeated: set[tuple[str, ...]]
    ) -> tuple[list[tuple[_Member, Any]], int]:
        """The members of the object whose ``{`` is at ``pos`` (with their values), and the position of its ``}``."""
        text = self.text
        out: list[tuple[_Member, Any]] = []
        seen: set[str] = set()
        pos = self.skip(pos + 1)
        if text[pos : pos + 1] == "}":
            return out, pos
        while True:
            start = pos
            key, pos = self.string(pos)
            pos = self.skip(pos)
            if text[pos : pos + 1] != ":":
                raise _Bad("expected :", pos)
            value_start = self.skip(pos + 1)
            value, value_end = self.value(value_start, (*path, key), repeated)
            if key in seen:
                repeated.add((*path, key))
            seen.add(key)
            out.append((_Member(key, start, value_start, value_end), value))
            pos = self.skip(value_end)
            if text[pos : pos + 1] == "}":
                return out, pos
            if text[pos : pos + 1] != ",":
                raise _Bad("expected , or }", pos)
            pos = self.skip(pos + 1)
            if text[pos : pos + 1] == "}":
                raise _Bad("a trailing comma", pos)


def parse_json(text: str, *, comments: bool) -> Parsed:
    """``text`` as the agent reads it; ValueError (with where) when it is not JSON (with comments, if allowed)."""
    scanner = _Scanner(text, comments)
    repeated: set[tuple[str, ...]] = set()
    try:
        pos = scanner.skip(0)
        value, end = scanner.value(pos, (), repeated)
        end = scanner.skip(end)
        if end != len(text):
            raise _Bad("text after the document", end)
    except _Bad as exc:
        raise ValueError(f"{exc} at {_where(text, exc.pos)}") from None
    except RecursionError:
        raise ValueError("nested too deeply to edit") from None
    return Parsed(value, repeated)


def _check_path(parsed: Parsed, keys: list[str]) -> None:
    """Refuse when a key on the way to the entry is repeated, or a step is not an object."""
    node = parsed.value
    if not isinstance(node, dict):
        raise Unsafe("does not hold a JSON object")
    for depth, key in enumerate(keys):
        if tuple(keys[: depth + 1]) in parsed.repeated:
            raise Unsafe(
                f'has "{key}" twice{_under(keys[:depth])}, and the agent reads only the last: keep one and run again'
            )
        if key not in node:
            return
        node = node[key]
        if depth < len(keys) - 1 and not isinstance(node, dict):
            raise Unsafe(f'has "{key}"{_under(keys[:depth])} as a {_kind(node)}, not an object: fix it by hand')


def _under(keys: list[str]) -> str:
    return f" in {'.'.join(keys)}" if keys else ""


def _kind(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _indent_of(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    lead = text[line_start:pos]
    return lead if not lead.strip() else ""


def _dump(value: Any, indent: str | None) -> str:
    """``value`` as JSON: indented from ``indent``, or on one line when the file is (``indent`` None)."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _one_line(text: str) -> bool:
    return "\n" not in text.strip()


def json_set(text: str | None, keys: list[str], value: Any, *, comments: bool = False) -> str:
    """``text`` with the member at ``keys`` set to ``value``, every other byte unchanged; verified, else Unsafe."""
    if text is None or not text.strip():
        nested: Any = value
        for k in reversed(keys):
            nested = {k: nested}
        return json.dumps(nested, indent=2, ensure_ascii=False) + "\n"
    old = _parse_or_refuse(text, comments)
    _check_path(old, keys)
    new = _json_edit(text, keys, value, comments)
    want = copy.deepcopy(old.value)
    node = want
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    _verify_json(new, want, keys, comments)
    return new


def json_remove(text: str, keys: list[str], *, comments: bool = False) -> str:
    """``text`` without the member at ``keys`` (unchanged when there is none); verified, else Unsafe."""
    if not text.strip():
        return text
    old = _parse_or_refuse(text, comments)
    _check_path(old, keys)
    node = old.value
    for k in keys[:-1]:
        node = node.get(k) if isinstance(node, dict) else None
    if not isinstance(node, dict) or keys[-1] not in node:
        return text
    new = _json_cut(text, keys, comments)
    want = copy.deepcopy(old.value)
    node = want
    for k in keys[:-1]:
        node = node[k]
    del node[keys[-1]]
    _verify_json(new, want, keys[:-1], comments)
    return new


def _parse_or_refuse(text: str, comments: bool) -> Parsed:
    try:
        return parse_json(text, comments=comments)
    except ValueError as exc:
        raise Unsafe(f"is not valid JSON{' (with comments)' if comments else ''}: {exc}") from None


def _verify_json(new: str, want: Any, keys: list[str], comments: bool) -> None:
    """Refuse ``new`` unless it reads as ``want``, no key on the way to the entry repeated."""
    try:
        got = parse_json(new, comments=comments)
    except ValueError as exc:  # the edit's own bug: refused rather than written
        raise Unsafe(f"could not be edited safely (the result would not parse: {exc})") from None
    on_path = {tuple(keys[: i + 1]) for i in range(len(keys))}
    if got.value != want or got.repeated & on_path:
        raise Unsafe("could not be edited safely (the result would not read as intended)")


def _json_edit(text: str, keys: list[str], value: Any, comments: bool) -> str:
    scanner = _Scanner(text, comments)
    pos = scanner.skip(0)
    for depth, key in enumerate(keys):
        pairs, close = scanner.members(pos, (), set())
        members = [m for m, _ in pairs]
        found = next((m for m in reversed(members) if m.key == key), None)
        rest: Any = value
        for k in reversed(keys[depth + 1 :]):
            rest = {k: rest}
        if found is None:
            return _insert(text, pos, members, close, key, rest)
        if depth == len(keys) - 1 or text[found.value_start] != "{":
            indent = None if _one_line(text) else _indent_of(text, found.start)
            return text[: found.value_start] + _dump(rest, indent) + text[found.value_end :]
        pos = found.value_start
    raise AssertionError("unreachable")


def _insert(text: str, open_pos: int, members: list[_Member], close: int, key: str, value: Any) -> str:
    if _one_line(text):
        piece = f"{json.dumps(key)}: {_dump(value, None)}"
        if members:
            return text[: members[-1].value_end] + ", " + piece + text[members[-1].value_end :]
        return text[:open_pos] + "{" + piece + "}" + text[close + 1 :]
    if members:
        last = members[-1]
        indent = _indent_of(text, last.start)
        multiline = "\n" in text[open_pos : last.start]
        piece = f"{json.dumps(key)}: {_dump(value, indent)}"
        eol = text.find("\n", last.value_end, close)
        tail = text[last.value_end : eol].strip() if eol >= 0 else ""
        if multiline and tail and _one_comment(tail):
            # The last member's own comment stays on its line, after the comma the new member needs.
            return f"{text[: last.value_end]},{text[last.value_end : eol]}\n{indent}{piece}{text[eol:]}"
        sep = ",\n" + indent if multiline else ", "
        return text[: last.value_end] + sep + piece + text[last.value_end :]
    outer = _indent_of(text, open_pos)
    inner = outer + "  "
    body = f"{{\n{inner}{json.dumps(key)}: {_dump(value, inner)}\n{outer}}}"
    return text[:open_pos] + body + text[close + 1 :]


def _one_comment(tail: str) -> bool:
    """Whether ``tail`` (the rest of a line after a value) is one comment and nothing else."""
    if tail.startswith("//"):
        return True
    return tail.startswith("/*") and tail.endswith("*/") and tail.count("*/") == 1


def _json_cut(text: str, keys: list[str], comments: bool) -> str:
    scanner = _Scanner(text, comments)
    pos = scanner.skip(0)
    for depth, key in enumerate(keys):
        pairs, close = scanner.members(pos, (), set())
        members = [m for m, _ in pairs]
        idx = next(i for i, m in enumerate(members) if m.key == key)
        m = members[idx]
        if depth < len(keys) - 1:
            pos = m.value_start
            continue
        if len(members) == 1:  # the list is empty again: written as an empty list is, `{}`
            return text[:pos] + "{}" + text[close + 1 :]
        if idx == 0:  # drop through the next member's start
            return text[: m.start] + text[members[1].start :]
        return text[: members[idx - 1].value_end] + text[m.value_end :]
    raise AssertionError("unreachable")


# -- TOML (Codex) -----------------------------------------------------------------------------------

_HEADER = re.compile(r"^[ \t]*\[\[?[ \t]*([^\]\n]+?)[ \t]*\]\]?[ \t]*(#.*)?$")


def load_toml(text: str) -> dict[str, Any]:
    """``text`` as a strict TOML reader reads it (Codex's is strict); ValueError saying where it is not TOML."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(str(exc)) from None
    import tomlkit  # pragma: no cover - 3.10
    from tomlkit.exceptions import TOMLKitError

    try:  # pragma: no cover - 3.10
        return tomlkit.parse(text).unwrap()
    except TOMLKitError as exc:  # pragma: no cover - 3.10
        raise ValueError(str(exc)) from None


def _header_lines(lines: list[str]) -> list[str | None]:
    """For each line, the table it opens (``a.b`` for ``[a.b]`` / ``[[a.b]]``) or None; lines inside a
    multi-line string never open one (a string may hold ``[mcp_servers.voyager]`` as text)."""
    out: list[str | None] = []
    inside: str | None = None  # the delimiter of the multi-line string a line starts in
    for line in lines:
        if inside is None:
            m = _HEADER.match(line.rstrip("\r\n"))
            out.append(_table_name(m.group(1)) if m else None)
        else:
            out.append(None)
        inside = _string_state(line, inside)
    return out


def _string_state(line: str, inside: str | None) -> str | None:
    """Which multi-line string (``\"\"\"`` or ``'''``) is still open at the end of ``line``, given the one open
    at its start."""
    i = 0
    n = len(line)
    while i < n:
        if inside is not None:
            if inside == '"""' and line[i] == "\\":
                i += 2
                continue
            if line.startswith(inside, i):
                i += 3
                while i < n and line[i] == inside[0]:  # up to two quotes may close the string's content
                    i += 1
                inside = None
                continue
            i += 1
            continue
        c = line[i]
        if c == "#":
            return None
        if line.startswith('"""', i) or line.startswith("'''", i):
            inside = line[i : i + 3]
            i += 3
            continue
        if c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if c == "'":
            end = line.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        i += 1
    return inside


def _table_name(raw: str) -> str:
    return ".".join(part.strip().strip('"').strip("'") for part in raw.split("."))


def _is_value_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _spans(text: str, name: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The lines of ``text`` and the [start, end) line spans of table ``name`` and its sub-tables.

    A span ends at its last key line: blank lines and comments before the next table belong to what follows.
    """
    lines = text.splitlines(keepends=True)
    headers = _header_lines(lines)
    spans: list[tuple[int, int]] = []
    start: int | None = None

    def ours(table: str) -> bool:
        return table == name or table.startswith(f"{name}.")

    def close(end: int) -> None:
        assert start is not None
        while end > start + 1 and not _is_value_line(lines[end - 1]):
            end -= 1
        spans.append((start, end))

    for i, table in enumerate(headers):
        if table is None:
            continue
        if start is not None and not ours(table):
            close(i)
            start = None
        elif start is None and ours(table):
            start = i
    if start is not None:
        close(len(lines))
    return lines, spans


def toml_set(text: str, keys: list[str], value: dict[str, Any], block: str) -> str:
    """``text`` with table ``keys`` (``mcp_servers.voyager``) replaced by ``block`` (its TOML text, meaning
    ``value``), appended when absent; every other line unchanged where a textual edit can do it, else through
    tomlkit; verified, else Unsafe."""
    old = _toml_or_refuse(text)
    _check_toml_path(old, keys)
    want = copy.deepcopy(old)
    node = want
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    for candidate in (_toml_text_set, _tomlkit_set):
        try:
            new = candidate(text, keys, value, block)
        except Exception:  # a shape this way cannot edit: the next way, or the refusal below
            continue
        if _toml_means(new, want):
            return new
    raise Unsafe(
        f"defines {'.'.join(keys[:-1])} in a shape Voyager cannot edit safely: "
        "add the entry by hand (`--print` shows it)"
    )


def toml_remove(text: str, keys: list[str]) -> str:
    """``text`` without table ``keys`` (unchanged when there is none); verified, else Unsafe."""
    old = _toml_or_refuse(text)
    _check_toml_path(old, keys)
    node: Any = old
    for k in keys[:-1]:
        node = node.get(k) if isinstance(node, dict) else None
    if not isinstance(node, dict) or keys[-1] not in node:
        return text
    want = copy.deepcopy(old)
    parent = want
    for k in keys[:-1]:
        parent = parent[k]
    del parent[keys[-1]]
    for candidate in (_toml_text_remove, _tomlkit_remove):
        try:
            new = candidate(text, keys)
        except Exception:
            continue
        if _toml_means(new, want) or _toml_means(new, _without_empty(want, keys[:-1])):
            return new
    raise Unsafe(
        f"defines {'.'.join(keys[:-1])} in a shape Voyager cannot edit safely: remove [{'.'.join(keys)}] by hand"
    )


def _toml_or_refuse(text: str) -> dict[str, Any]:
    try:
        return load_toml(text)
    except ValueError as exc:
        raise Unsafe(f"is not valid TOML ({exc})") from None


def _check_toml_path(doc: dict[str, Any], keys: list[str]) -> None:
    node: Any = doc
    for depth, key in enumerate(keys[:-1]):
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return
        if not isinstance(node, dict):
            raise Unsafe(f"has {'.'.join(keys[: depth + 1])} as a {type(node).__name__}, not a table: fix it by hand")


def _toml_means(new: str, want: dict[str, Any]) -> bool:
    try:
        return load_toml(new) == want
    except ValueError:
        return False


def _without_empty(doc: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """``doc`` without the table at ``keys`` when it is empty (removing its last sub-table leaves none at all)."""
    out = copy.deepcopy(doc)
    node: Any = out
    for k in keys[:-1]:
        node = node[k]
    if node.get(keys[-1]) == {}:
        del node[keys[-1]]
    return out


def _toml_text_set(text: str, keys: list[str], value: dict[str, Any], block: str) -> str:
    lines, spans = _spans(text, ".".join(keys))
    if not spans:
        if not text:
            return block
        sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + block
    out = lines[: spans[0][0]] + [block]
    prev = spans[0][1]
    for s, e in spans[1:]:  # a duplicate of ours further down goes: the file then names one server once
        out += lines[prev:s]
        prev = e
    return "".join(out + lines[prev:])


def _toml_text_remove(text: str, keys: list[str]) -> str:
    lines, spans = _spans(text, ".".join(keys))
    if not spans:
        raise ValueError("not defined by table headers")
    out: list[str] = []
    prev = 0
    for s, e in spans:
        out += lines[prev:s]
        prev = e
    rest = lines[prev:]
    if not "".join(rest).strip() and out and not out[-1].strip():
        out.pop()  # the separator install appended
    return "".join(out + rest)


def _tomlkit_set(text: str, keys: list[str], value: dict[str, Any], block: str) -> str:
    import tomlkit
    from tomlkit.items import InlineTable

    doc = tomlkit.parse(text)
    node: Any = doc
    for k in keys[:-1]:
        if k not in node:
            node[k] = tomlkit.table(is_super_table=True)
        node = node[k]
    item: Any = tomlkit.inline_table() if isinstance(node, InlineTable) else tomlkit.table()
    for k, v in value.items():
        if isinstance(v, dict) and isinstance(item, InlineTable):
            sub: Any = tomlkit.inline_table()
            sub.update(v)
            item[k] = sub
        else:
            item[k] = v
    node[keys[-1]] = item
    return tomlkit.dumps(doc)


def _tomlkit_remove(text: str, keys: list[str]) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    node: Any = doc
    for k in keys[:-1]:
        node = node[k]
    del node[keys[-1]]
    return tomlkit.dumps(doc)
