"""``voyager export --redact``: secrets of well-known shapes replaced before anything is written.

Redaction is a table of shapes (:data:`SHAPES`). Each has a name, a regex that finds a
candidate, and a rule that says which part of the candidate is the secret: the whole match
(a provider's key: ``ghp_…``, ``glpat-…``, ``xapp-…``, ``hf_…``, a JWT, a PEM block), or the
value of an assignment, a flag or a URL's password, cut where its syntax ends: a quoted value
at its closing quote (JSON escapes honoured, so ``"pa$$w0rd"`` or ``"a\\"b"`` go whole), a
bare value at whitespace, or at ``&`` / ``;`` only where the next query parameter or
connection-string field begins. A secret becomes ``[REDACTED:<shape>]`` and the rest of the
text reads on (``password=[REDACTED:password]``).

What is *not* a secret is decided by rules, not by regex cleverness: a name counts as secret
by its words (``client_secret``, ``apiKey``, ``DB_PASSWORD``; not ``password_reset_url``,
``max_tokens``), a value is left when it is a reference or placeholder (``$X``, ``${X}``,
``{x}``, ``<your key>``, ``settings.key``, ``getpass()``) or a literal (``true``, ``null``);
key shapes whose prefix is common in words need the key's character mix (an OpenAI key has
digits and both cases; a branch ``sk-feature-login`` has not).

Linear time on any text: every regex starts only at a boundary its own characters cannot
continue, and has no nested or overlapping repetition, so a failed attempt costs at most a
bounded look-ahead or the length of one token; what a match means is then decided in Python
on that one match. ``docs/export.md`` lists every shape with its examples; the shapes of
provider keys follow gitleaks' published rules (``config/gitleaks.toml``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

Span = tuple[int, int]


class Shape(NamedTuple):
    """One kind of secret: its name, the regex that finds a candidate, and what of a match is secret.

    ``spans`` returns the absolute spans to replace (none: the candidate is not a secret);
    without it, the group ``secret`` if the regex has one, else the whole match.
    """

    name: str
    regex: re.Pattern[str]
    spans: Callable[[re.Match[str]], list[Span]] | None = None


#: A boundary that keeps a key from being cut out of a longer token.
_B = r"(?<![A-Za-z0-9_-])"
_E = r"(?![A-Za-z0-9_-])"

# -- names that say "secret" ---------------------------------------------------------------------

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
#: A word that makes a name secret wherever it stands (``DB_PASSWORD``, ``clientSecret``, ``SECRET_KEY_BASE``),
#: also as the end of a run-together word (``PGPASSWORD``).
_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "credential",
    "credentials",
    "apikey",
    "privatekey",
    "accountkey",
)
#: Words too common elsewhere to count anywhere: secret only as the name's last word (``GITHUB_TOKEN``,
#: ``csrftoken``, ``DB_PASS``, ``Pwd``, ``&sig=``), so ``timeToFirstTokenMs`` or ``token_limit`` are not.
_LAST_ONLY = frozenset({"pass", "pwd", "sig"})
_LAST_ENDING = "token"
#: ``key`` is secret only after one of these (``api_key``, ``AccountKey``, ``SharedAccessKey``, ``x-api-key``).
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "private",
        "secret",
        "account",
        "shared",
        "client",
        "signing",
        "encryption",
        "master",
        "auth",
        "app",
        "service",
        "storage",
        "subscription",
        "license",
        "admin",
        "session",
        "webhook",
    }
)
#: A last word that makes the name about a secret, not the secret (``password_reset_url``,
#: ``POSTGRES_PASSWORD_FILE``, ``max_tokens``, ``token_count``, ``private_key_id``).
_NOT_SECRET_LAST = frozenset(
    {
        "url",
        "uri",
        "urls",
        "path",
        "file",
        "filename",
        "dir",
        "directory",
        "name",
        "id",
        "ids",
        "length",
        "len",
        "size",
        "min",
        "max",
        "count",
        "limit",
        "policy",
        "hint",
        "prompt",
        "field",
        "label",
        "type",
        "mode",
        "enabled",
        "required",
        "expiry",
        "expires",
        "expiration",
        "ttl",
        "timeout",
        "reset",
        "rotation",
        "version",
        "format",
        "header",
        "param",
        "env",
        "var",
        "ref",
        "endpoint",
        "host",
        "source",
        "location",
        "help",
        "regex",
        "pattern",
        "validator",
        "validation",
        "strength",
        "confirm",
        "confirmation",
        "input",
        "box",
        "form",
        "page",
        "link",
        "route",
        "template",
        "changed",
        "set",
        "age",
        "store",
        "manager",
        "provider",
        "kind",
        "usage",
        "usages",
        "used",
        "tokens",
        "in",
        "at",
    }
)


def secret_name(name: str) -> bool:
    """True when ``name`` (a variable, key, header or flag name) says its value is a secret."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _NOT_SECRET_LAST:
        return False
    if words[-1] in _LAST_ONLY or words[-1].endswith(_LAST_ENDING):
        return True
    for i, word in enumerate(words):
        if word.endswith(_SECRET_WORDS):
            return True
        if word == "key" and i > 0 and words[i - 1] in _KEY_QUALIFIERS:
            return True
    return False


# -- values -------------------------------------------------------------------------------------

#: A whole value that stands for a secret rather than being one: a variable or template
#: reference, a placeholder, a mask, a literal.
_PLACEHOLDER = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}?|\$\(.*\)|%\(?[A-Za-z_]*\)?s|\{\{?[^{}]*\}?\}|<[^<>]*>"
    r"|\[[^\[\]]*\]|[*xX.•]+"
    r"|(?i:true|false|null|none|nil|undefined|str|string|bytes|int|required|optional|yes|no|on|off|redacted|hidden)",
    re.DOTALL,
)
#: Code where a bare value stands: a dotted reference (``settings.api_key``), a call (``getpass()``), an index
#: (``os.environ["X"]``). Quoted, the same characters are data.
_CODE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[A-Za-z_][A-Za-z0-9_.]*[(\[].*", re.DOTALL)
#: Where a bare value (no quotes) ends inside it: the next query parameter (``&name=``) or
#: connection-string field (``;Name=``).
_FIELD_CUT = re.compile(r"[&;](?=[A-Za-z_][A-Za-z0-9_ .-]{0,40}=)")
#: Closing punctuation that ends a bare value in prose or code (``password=x1234,`` ``(token=abcd)``).
_TRAILING = ",;)]}>.'\"`"
_MIN_VALUE = 4


#: A value: double-quoted (JSON escapes: it ends at the first unescaped quote), single-quoted, or
#: bare (up to whitespace or a quote; :func:`_value_span` cuts it further). It is read apart from
#: the name, and only after the name is found secret: so a value that is not a secret
#: (``https://…`` after ``url=``) is still scanned for the candidates inside it, and a name that
#: is not secret costs nothing more. Values are bounded, so one candidate costs at most that much.
MAX_QUOTED = 1024
MAX_BARE = 256
_VALUE = re.compile(
    r"\"(?P<dq>(?:[^\"\\\n]|\\.){0,%d})\"|'(?P<sq>[^'\n]{0,%d})'"  # noqa: UP031 - a regex: braces in an f-string would need doubling
    # A quoted value inside a JSON string (a tool call's input): \"…\", its own escapes \\x.
    r"|\\\"(?P<eq>(?:[^\"\\\n]|\\[^\"\n]){0,%d})\\\"|(?P<bare>[^\s\"'`]{1,%d})"
    % (MAX_QUOTED, MAX_QUOTED, MAX_QUOTED, MAX_BARE)
)
_VALUE_CHAR = re.compile(r"[^\s\"'`]")
#: A JSON escape ends a bare value too: in a tool call's JSON input, ``password=x\n…`` or ``…=x\"``.
_JSON_ESCAPE = re.compile(r'\\[nrtbfu"\\/]')


def _value_span(text: str, at: int) -> Span | None:
    """The secret part of the value that starts at ``text[at]``; None when there is none or it is not a secret."""
    v = _VALUE.match(text, at)
    if v is None:
        return None
    for group in ("dq", "sq", "eq"):
        if v.group(group) is not None:
            value = v.group(group)
            if len(value) < _MIN_VALUE or _PLACEHOLDER.fullmatch(value) or value.startswith("[REDACTED:"):
                return None
            return v.span(group)
    value = v.group("bare")
    start, end = v.span("bare")
    if len(value) == MAX_BARE and _VALUE_CHAR.match(text, end):
        return None  # longer than any secret written bare: data, not a password
    for ends in (_JSON_ESCAPE, _FIELD_CUT):
        cut = ends.search(value)
        if cut is not None:
            value = value[: cut.start()]
    value = value.rstrip(_TRAILING)
    if len(value) < _MIN_VALUE or value[0] in "$-{<([`%=" or _PLACEHOLDER.fullmatch(value) or _CODE.fullmatch(value):
        return None
    return start, start + len(value)


def _assignment(m: re.Match[str]) -> list[Span]:
    key = m.group("key")
    if not secret_name(key):
        return []
    span = _value_span(m.string, m.end())
    if span is None:
        return []
    if key.lower() in ("pwd", "pass") and m.string[span[0]] in "/~.":
        return []  # the shell's PWD=/home/dev, a path: not a password
    return [span]


def _flag(m: re.Match[str]) -> list[Span]:
    if not secret_name(m.group("key")):
        return []
    span = _value_span(m.string, m.end())
    return [span] if span is not None else []


#: In a mysql/mariadb command, ``-pSECRET`` (no space: with one, mysql prompts) ; in sshpass, ``-p SECRET``;
#: in curl, the password of ``-u user:pass`` / ``--user user:pass``.
_MYSQL_P = re.compile(r"(?<!\S)-p(?P<v>[^\s'\"\\]+|'[^']*'|\"[^\"]*\")")
_SSHPASS_P = re.compile(r"(?<!\S)-p\s*(?P<v>[^\s'\"\\-][^\s'\"\\]*|'[^']*'|\"[^\"]*\")")
_CURL_U = re.compile(r"(?<!\S)(?:-u|--user|--proxy-user|-U)(?:\s+|=)?(?P<q>['\"]?)[^\s:'\"]*:(?P<v>[^\s'\"\\]+)")


def _command(m: re.Match[str]) -> list[Span]:
    tool = m.group("tool").lower()
    args, base = m.group("args"), m.start("args")
    out: list[Span] = []
    finder = _CURL_U if tool == "curl" else _SSHPASS_P if tool == "sshpass" else _MYSQL_P
    for a in finder.finditer(args):
        start, end = a.span("v")
        value = a.group("v")
        if value[:1] in "'\"":
            start, end = start + 1, end - 1
            value = value[1:-1]
        if len(value) >= 1 and not value.startswith(("$", "[REDACTED:")):
            out.append((base + start, base + end))
    return out


def _openai(m: re.Match[str]) -> list[Span]:
    # Keys mix digits with both cases; words and branch names (``sk-feature-login-flow``) do not.
    body = m.group("body")
    if any(c.isdigit() for c in body) and any(c.isupper() for c in body) and any(c.islower() for c in body):
        return [m.span()]
    return []


def _s(name: str, regex: str, spans: Callable[[re.Match[str]], list[Span]] | None = None, flags: int = 0) -> Shape:
    return Shape(name, re.compile(regex, flags), spans)


#: Order matters where shapes nest: the most specific first (an Anthropic key also starts ``sk-``;
#: a key inside ``API_KEY=…`` is named by its provider, not as a ``password``).
SHAPES: tuple[Shape, ...] = (
    _s(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    _s("anthropic-key", _B + r"sk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_-]{20,}" + _E),
    _s("openai-key", _B + r"sk-(?P<body>[A-Za-z0-9_-]{20,})" + _E, _openai),
    _s("github-token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})" + _E),
    _s("gitlab-token", _B + r"gl(?:pat|ptt|dt|rt|cbt|ft|oas|soat)-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{9})?" + _E),
    _s("aws-access-key-id", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
    _s("slack-token", _B + r"(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}" + _E),
    _s("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    _s("huggingface-token", _B + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}" + _E),
    _s("npm-token", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    _s("pypi-token", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}" + _E),
    _s("google-api-key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
    _s("google-oauth-token", _B + r"ya29\.[0-9A-Za-z_-]{20,}" + _E),
    _s("azure-client-secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
    _s(
        "stripe-key",
        _B + r"(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{10,}" + _E + r"|" + _B + r"whsec_[0-9A-Za-z]{24,}" + _E,
    ),
    _s("jwt", _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _E),
    # An Authorization header's credential (after its scheme), and a bare "Bearer <token>".
    _s(
        "authorization",
        r"(?i:(?<![A-Za-z0-9_-])(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:bearer|basic|token|bot|digest)\s+)?)(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    ),
    _s("bearer-token", r"(?<![A-Za-z0-9_-])(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    # scheme://user:password@host, and scheme://:password@host (redis).
    _s("url-password", r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@\[\]]*:(?P<secret>[^\s/@]+)@"),
    # A command whose arguments carry a password in its own syntax: mysql -pSECRET, sshpass -p SECRET,
    # curl -u user:SECRET. The arguments run to the end of the command (a pipe, ;, &, a newline).
    _s(
        "command-password",
        r"(?<![A-Za-z0-9_/.-])(?P<tool>mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mariadb"
        r"|mariadb-dump|sshpass|curl)(?![A-Za-z0-9_.-])(?P<args>[^\n|;&]*)",
        _command,
    ),
    # --password VALUE, --db-password=VALUE, --client-secret 'VALUE', --api-key VALUE …
    _s("password-flag", r"(?<![A-Za-z0-9_-])--(?P<key>[A-Za-z][A-Za-z0-9-]{1,60})(?:=|[ \t]+)", _flag),
    # NAME=value, NAME: value, "name": "value", name => value, ?name=value, Name=value; (connection strings).
    _s(
        "password",
        r"(?<![A-Za-z0-9_.-])[\"']?(?P<key>[A-Za-z0-9_.-]{3,128})\\?[\"']?[ \t]*(?:=>|:=|[:=](?![=:]))[ \t]*",
        _assignment,
    ),
)


def redact(text: str, counts: Counter[str] | None = None) -> str:
    """``text`` with every secret the shapes know replaced by ``[REDACTED:<shape>]``; ``counts`` tallies them."""
    if not text:
        return text
    for shape in SHAPES:
        text = _apply(shape, text, counts)
    return text


def _apply(shape: Shape, text: str, counts: Counter[str] | None) -> str:
    """``text`` with the secrets of one shape replaced: candidates found left to right, overlaps kept out."""
    spans_of = shape.spans or _default_spans
    spans: list[Span] = []
    for m in shape.regex.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue  # inside a secret already taken
        for start, end in spans_of(m):
            if not spans or start >= spans[-1][1]:
                spans.append((start, end))
    if not spans:
        return text
    if counts is not None:
        counts[shape.name] += len(spans)
    mark = f"[REDACTED:{shape.name}]"
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out += [text[pos:start], mark]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _default_spans(m: re.Match[str]) -> list[Span]:
    if "secret" in m.re.groupindex and m.group("secret") is not None:
        if m.group("secret").startswith("[REDACTED:"):
            return []
        return [m.span("secret")]
    return [m.span()]
