"""The server's client's JSON (core/jsontext.py): json's bytes and values, without importing the json package."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from voyager_sessions.core import jsontext
from voyager_sessions.core.textsafe import escape_json_controls

HOSTILE = [
    "",
    "plain",
    'quote " backslash \\ slash /',
    "\x00\x01\x1b[2J\x07\r\n\t\x7f\x80\x9b\u2028\u2029",
    "数据库迁移 インデックス 가나 🚀 é",
    "\ud800 lone \udfff surrogates",  # an undecodable byte of argv, as Python holds it
    "x" * 5000,
]


def _values(rng: random.Random, depth: int = 0):
    kinds = ["str", "int", "float", "bool", "none"] + (["list", "dict", "tuple"] if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        return rng.choice(HOSTILE) + "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(8)))
    if kind == "int":
        return rng.choice([0, -1, 2**63, -(2**70), rng.randrange(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.0, -0.0, 1e-310, 1.5, -2.25e300, 0.1 + 0.2, float("nan"), float("inf"), float("-inf")])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    items = [_values(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    return {rng.choice(HOSTILE) + str(i): v for i, v in enumerate(items)}


def test_dumps_writes_what_json_dumps_writes():
    rng = random.Random(7)
    for _ in range(400):
        value = _values(rng)
        assert jsontext.dumps(value) == json.dumps(value, separators=(",", ":"))
    # What it leaves to the json package (non-string keys) still comes out as json's.
    odd = {1: "a", False: None, 2.5: [1]}
    assert jsontext.dumps(odd) == json.dumps(odd, separators=(",", ":"))
    with pytest.raises(TypeError):
        jsontext.dumps({"x": object()})


def test_loads_reads_what_json_loads_reads():
    rng = random.Random(11)
    for _ in range(400):
        value = _values(rng)
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1), " \n" + json.dumps(value)):
            got, want = jsontext.loads(text), json.loads(text)
            assert json.dumps(got) == json.dumps(want)
            assert jsontext.loads(text.encode("utf-8", "surrogatepass")) == want or _has_nan(want)
    doc = msgspec.json.encode({"hits": [{"snippet": s, "score": 1.25} for s in HOSTILE if "\ud800" not in s]})
    assert jsontext.loads(doc) == json.loads(doc)
    hooked = jsontext.loads(b'{"a": {"b": [1, {"c": 2}]}}', object_hook=lambda d: ("obj", sorted(d)))
    assert hooked == json.loads(b'{"a": {"b": [1, {"c": 2}]}}', object_hook=lambda d: ("obj", sorted(d)))


def _has_nan(value) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(map(_has_nan, value.values()))
    if isinstance(value, list):
        return any(map(_has_nan, value))
    return False


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a":}', "[1,]", '{"a":1} x', "nul", '"\\x"', "[1] [2]", "\ufeff{}"])
def test_malformed_json_is_the_error_json_raises(text):
    with pytest.raises(ValueError) as want:
        json.loads(text)
    with pytest.raises(ValueError) as got:
        jsontext.loads(text)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_raw_decode_returns_where_the_value_ends():
    text = ' {"k": [1, "two"]} , 3'
    assert jsontext.raw_decode(text, 1) == json.JSONDecoder().raw_decode(text, 1)


def test_escaping_json_controls_is_the_regular_expression_it_replaced():
    import re

    old = re.compile(rb"\x7f|\xc2[\x80-\x9f]")
    rng = random.Random(3)
    for _ in range(300):
        text = "".join(
            chr(rng.choice([0x7F, 0x80, 0x85, 0x9B, 0x9F, 0xA0, 0xC2, 0x41, 0x4E2D, 0x1F680])) for _ in range(30)
        )
        data = msgspec.json.encode(text)
        want = old.sub(lambda m: b"\\u%04x" % ord(m.group().decode("utf-8")), data)
        assert escape_json_controls(data) == want
        assert json.loads(want) == text


def test_the_client_modules_import_neither_json_nor_re():
    """Not json, nor re and enum, which it brings (an editable install's finder imports them at start-up on its
    own, so the interpreter here starts without ``site``, as a user's installed client reads them from its own)."""
    root = Path(__file__).resolve().parents[1]
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "before = set(sys.modules)\n"
        "from voyager_sessions.core import jsontext, remote, textsafe\n"
        "from voyager_sessions.cli import present\n"
        "jsontext.loads(jsontext.dumps({'q': ['x', 1.5, None, True]}))\n"
        "textsafe.escape_json_controls(b'\\xc2\\x9b\\x7f')\n"
        "print('start:', *sorted({'json', 're', 'enum'} & before))\n"
        "print('added:', *sorted({'json', 're', 'enum'} & set(sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["start:", "added:"]


MALFORMED = ["", "   ", "{", "{not json", '{"a":}', '{"a" 1}', "[1,]", '{"a":1} x', "nul", "tru", '"\\x"', "[1] [2]"]


def test_malformed_json_is_json_s_error_in_a_process_that_never_imported_json():
    """The C scanner makes its messages from ``json.decoder``, looked up in sys.modules only: where nothing imported
    it (a server's client, which is the point of this module) it raised SystemError, and a server that answered
    garbage cost the client a traceback instead of its own answer (tests/serve/test_client.py). Each error here is
    the ValueError json.loads raises, type and message, each in a process of its own (the first error that imports
    json would hide the next)."""
    root = Path(__file__).resolve().parents[1]
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from voyager_sessions.core import jsontext\n"
        "assert 'json' not in sys.modules and 'json.decoder' not in sys.modules\n"
        "try:\n"
        "    jsontext.loads(sys.argv[1].encode() if sys.argv[2] == 'bytes' else sys.argv[1])\n"
        "except ValueError as exc:\n"
        "    print(type(exc).__name__, exc, sep=': ')\n"
    )
    for text in MALFORMED:
        for kind in ("str", "bytes"):
            with pytest.raises(ValueError) as caught:
                json.loads(text.encode() if kind == "bytes" else text)
            proc = subprocess.run(
                [sys.executable, "-I", "-S", "-c", code, text, kind], capture_output=True, text=True, timeout=60
            )
            assert proc.returncode == 0, (text, proc.stderr)
            assert proc.stdout == f"{type(caught.value).__name__}: {caught.value}\n", text
