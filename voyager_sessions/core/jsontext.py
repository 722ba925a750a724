"""JSON for a server's client, without importing the ``json`` package.

Every plain ``voyager search`` while ``voyager serve`` runs is a new Python process whose whole work is to send
one line of JSON and read one back: ``import json`` costs it ``re`` and ``enum`` (the regular expressions that
``json.decoder`` and ``json.encoder`` compile at import), about 31 million instructions, as many as the
interpreter's own start (36 million; callgrind, CPython 3.11) and most of what the client did beyond it. The
work itself is done by the C accelerator ``json`` uses, ``_json``, called here directly: the same scanner reads
the same values, and strings are escaped by the same function, so :func:`dumps` writes the bytes
``json.dumps(obj, separators=(",", ":"))`` writes and :func:`loads` returns what ``json.loads`` returns. What
it does not know (a value of another type, an interpreter without ``_json``) goes to the ``json`` package, as
do the messages of malformed input (its :class:`json.JSONDecodeError`, a ``ValueError``).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a server's client imports this
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_string: Callable[[str], str] | None
_make_scanner: Any
try:
    from _json import encode_basestring_ascii as _string
    from _json import make_scanner as _make_scanner  # typeshed types it by json.JSONDecoder, which it reads
except ImportError:  # an interpreter without CPython's accelerator: the json package does it all
    _string = None

#: JSON's whitespace (what ``json.loads`` skips around a document).
_SPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """What the C scanner reads off the ``json.JSONDecoder`` it is made for: ``json.loads``' defaults."""

    __slots__ = ("strict", "object_hook", "object_pairs_hook", "parse_float", "parse_int", "parse_constant", "memo")

    def __init__(self, object_hook: Callable[[dict[str, Any]], Any] | None) -> None:
        self.strict = True
        self.object_hook = object_hook
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = _CONSTANTS.__getitem__
        self.memo: dict[str, str] = {}


_scanners: dict[object, Callable[[str, int], tuple[Any, int]]] = {}


def raw_decode(text: str, pos: int = 0, object_hook: Callable[[dict[str, Any]], Any] | None = None) -> tuple[Any, int]:
    """The JSON value that starts at ``pos`` of ``text`` and where it ends (``json.JSONDecoder.raw_decode``)."""
    if _string is None:
        import json

        return json.JSONDecoder(object_hook=object_hook).raw_decode(text, pos)
    scan = _scanners.get(object_hook)
    if scan is None:
        scan = _scanners[object_hook] = _make_scanner(_Context(object_hook))
    try:
        return scan(text, pos)
    except StopIteration as err:
        import json  # only to say what is wrong, as json.loads says it

        raise json.JSONDecodeError("Expecting value", text, err.value) from None
    except SystemError:
        # The C scanner builds its other errors from ``json.decoder``, which it looks up in sys.modules only: in a
        # process that never imported it (a server's client) it raises SystemError instead. The json package
        # reads the text again and says what json.loads would.
        import json

        return json.JSONDecoder(object_hook=object_hook).raw_decode(text, pos)


def loads(data: str | bytes | bytearray, object_hook: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """The value of the JSON document ``data`` (UTF-8 when bytes), as ``json.loads`` reads it."""
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "surrogatepass")
    if text.startswith("\ufeff"):  # a byte-order mark: json.loads refuses it in a str, skips it in bytes
        import json

        return json.loads(data, object_hook=object_hook)
    start = len(text) - len(text.lstrip(_SPACE))
    value, end = raw_decode(text, start, object_hook)
    if text[end:].strip(_SPACE):
        import json

        json.loads(text)  # raises "Extra data" where json.loads does
    return value


class _Unknown(Exception):
    """A value :func:`dumps` leaves to the json package."""


def dumps(obj: Any) -> str:
    """``obj`` (dicts with string keys, lists, tuples, strings, numbers, booleans, None) as compact ASCII JSON:
    ``json.dumps(obj, separators=(",", ":"))``, byte for byte (a lone surrogate is a ``\\udXXX`` escape)."""
    if _string is not None:
        out: list[str] = []
        try:
            _encode(obj, out.append)
            return "".join(out)
        except _Unknown:
            pass
    import json

    return json.dumps(obj, separators=(",", ":"))


def _encode(obj: Any, put: Callable[[str], None]) -> None:
    assert _string is not None
    if isinstance(obj, str):
        put(_string(obj))
    elif obj is None:
        put("null")
    elif obj is True:
        put("true")
    elif obj is False:
        put("false")
    elif isinstance(obj, int):
        put(int.__repr__(obj))
    elif isinstance(obj, float):
        if obj != obj:
            put("NaN")
        elif obj in (float("inf"), float("-inf")):
            put("Infinity" if obj > 0 else "-Infinity")
        else:
            put(float.__repr__(obj))
    elif isinstance(obj, dict):
        put("{")
        for i, (key, value) in enumerate(obj.items()):
            if not isinstance(key, str):
                raise _Unknown  # json.dumps turns numbers and booleans into keys: left to it
            put("," + _string(key) + ":" if i else _string(key) + ":")
            _encode(value, put)
        put("}")
    elif isinstance(obj, (list, tuple)):
        put("[")
        for i, value in enumerate(obj):
            if i:
                put(",")
            _encode(value, put)
        put("]")
    else:
        raise _Unknown
