"""Reading a command's argv without click: one option table per command, and a strict reader of it.

Importing click and building the command tree costs more than answering a search, and
the commands a person runs most (``search``, ``list``, ``show``, ``stats``) are read here
instead when their arguments are plain. Each command's options are declared once, as a
tuple of :class:`Option`; :mod:`voyager_sessions.cli.app` builds the click command from the
same table, and :func:`parse_args` reads argv with it. The reader accepts only spellings
whose meaning is certain and returns exactly the values click would pass; for anything
else (``--help``, an unknown or malformed option, an out-of-range value, ``-n5``-style
bundling, a missing or extra argument) it returns None and click parses, reports and
exits as it always did. ``tests/test_argv.py`` and ``tests/test_search_fast_path.py`` hold the two to the same results.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every `voyager search` pays for it)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Option:
    """One option of a command: how click declares it and how the fast reader reads it.

    ``kind`` is ``flag`` (no value), ``text``, ``int`` (within ``bounds``, inclusive) or
    ``choice`` (one of ``choices``). ``default`` is None where click has none (text
    options give None, flags False, ``multiple`` options an empty tuple). A plain
    class because creating a NamedTuple class costs about 1.5 ms at import.
    """

    __slots__ = ("bounds", "choices", "decls", "default", "dest", "help", "kind", "multiple", "show_default")

    def __init__(
        self,
        decls: tuple[str, ...],
        dest: str,
        kind: str,
        default: int | str | None = None,
        *,
        multiple: bool = False,
        bounds: tuple[int, int] = (0, 0),
        choices: tuple[str, ...] = (),
        help: str | None = None,
        show_default: bool = False,
    ) -> None:
        self.decls = decls
        self.dest = dest
        self.kind = kind
        self.default = default
        self.multiple = multiple
        self.bounds = bounds
        self.choices = choices
        self.help = help
        self.show_default = show_default

    def __repr__(self) -> str:
        return f"Option({'/'.join(self.decls)} -> {self.dest})"


class Positional:
    """A command's positional argument: ``dest``, and how many words it takes (-1: any number, as a tuple)."""

    __slots__ = ("dest", "nargs")

    def __init__(self, dest: str, nargs: int) -> None:
        self.dest = dest
        self.nargs = nargs


def parse_args(
    options: Sequence[Option], args: Sequence[str], positional: Positional | None = None
) -> dict[str, Any] | None:
    """The parameters click would pass for ``args``, or None to leave ``args`` to click.

    Read: words (anywhere; all of them after ``--``), ``--opt VALUE``, ``--opt=VALUE``,
    ``-n VALUE``, ``-C VALUE`` and flags. A value is taken as given, as click takes it;
    an int must be plain ASCII digits within its bounds, a choice one of its choices.
    Repeating a non-multiple option keeps the last value, as click does. Words go to
    ``positional`` (a tuple for ``nargs=-1``, one string for ``nargs=1``); a command
    without one, or a count click would refuse, leaves ``args`` to click.
    """
    by_decl = {d: o for o in options for d in o.decls}
    values: dict[str, Any] = {}
    words: list[str] = []
    i, n = 0, len(args)
    while i < n:
        arg = args[i]
        i += 1
        if arg == "--":
            words.extend(args[i:])
            break
        if arg[:1] != "-" or arg == "-":
            words.append(arg)
            continue
        name, eq, inline = arg.partition("=")
        if eq and not name.startswith("--"):
            return None  # click reads "-n=5" as "-n" with value "=5"; let it say so
        opt = by_decl.get(name)
        if opt is None:
            return None
        if opt.kind == "flag":
            if eq:
                return None
            values[opt.dest] = True
            continue
        if eq:
            raw = inline
        elif i < n:
            raw = args[i]
            i += 1
        else:
            return None
        value = _convert(opt, raw)
        if value is None:
            return None
        if opt.multiple:
            values[opt.dest] = (*values.get(opt.dest, ()), value)
        else:
            values[opt.dest] = value
    params: dict[str, Any] = {}
    if positional is None:
        if words:
            return None
    elif positional.nargs == -1:
        params[positional.dest] = tuple(words)
    elif len(words) != positional.nargs:
        return None
    else:
        params[positional.dest] = words[0] if positional.nargs == 1 else tuple(words)
    for opt in options:
        if opt.dest in values:
            params[opt.dest] = values[opt.dest]
        else:
            params[opt.dest] = () if opt.multiple else False if opt.kind == "flag" else opt.default
    return params


def _convert(opt: Option, raw: str) -> int | str | None:
    """``raw`` as ``opt``'s value, or None where click would refuse it or read it in a way not copied here."""
    if opt.kind == "int":
        # Plain ASCII digits, and not many of them: Python refuses to parse over 4,300
        # digits, leading zeros included, and click then reports the value itself.
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 100:
            return None
        number = int(raw)
        lo, hi = opt.bounds
        return number if lo <= number <= hi else None
    if opt.kind == "choice":
        return raw if raw in opt.choices else None
    return raw
