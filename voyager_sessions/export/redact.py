"""``voyager export --redact``: secrets replaced before anything is written, found the way secret scanners find them.

A catalogue of shapes can never be complete, so a secret is found by three signals, as dedicated scanners
(gitleaks, detect-secrets) find them, and each candidate is checked against a verified allow-list of
look-alikes:

1. **Known formats** (:data:`KEYS`): a provider's key is its prefix and its alphabet and length
   (``ghp_`` + 36, ``dop_v1_`` + 64 hex, ``SG.`` + 22 + ``.`` + 43, ``AGE-SECRET-KEY-1`` + 58 …), found
   anywhere, whatever surrounds it. The facts (prefixes, lengths) are those of gitleaks' published rules
   (``config/gitleaks.toml``) and detect-secrets' plugins; each key's ``rule`` names the one it follows. A
   body that is a placeholder (``ghp_xxxx…``, ``AKIAXXXX…``: a run of one character) is no key.
2. **Keyword context** (the ``password`` shape and the flags): a value assigned to, or given after, a name
   that says "secret". A *strong* name (``password``, ``passwd``, ``passphrase``, ``secret``,
   ``credentials``, ``api_key``, ``private_key``, ``account_key``; ``pass``, ``pwd`` as its last word) makes
   any value a secret but a reference, a placeholder, code or a path; a *weak* one (its last word ``token``,
   ``key`` after another word, ``auth``, ``sig``) only a value that looks random: **entropy** (Shannon, at
   least 2.8 bits a character over 8 or more characters, two kinds of character of letters and digits),
   not a word, an identifier or an environment variable's name. So ``ADAFRUIT_IO_KEY=<32 random>`` or
   ``JIRA_API_TOKEN=…`` go (any vendor), ``sort_key: created_at``, ``next_page_token: …`` and
   ``"key": "ctrl+k"`` stay.
3. **Syntax**: where a tool or a file keeps a password in a form of its own: a URL's password (everything
   between the user's ``:`` and the *last* ``@`` of the authority, so ``p@ss@host`` loses ``p@ss``),
   ``.netrc`` (``machine … password X``), ``.pgpass`` lines, Docker's ``config.json`` ``"auth"`` (base64 of
   ``user:password``), a Kubernetes Secret's ``data:``, ``<add key="…Password" value="…"/>``, password
   hashes (bcrypt ``$2b$``, ``$argon2id$``, crypt ``$6$``/``$5$``/``$1$``/``$apr1$``, Django's
   ``pbkdf2_sha256$``), and commands: ``mysql -pX``, ``sshpass -p X``, ``curl -u user:X``,
   ``docker``/``podman``/``helm``… ``login -p X``, ``redis-cli -a X``, ``htpasswd -b file user X``,
   ``openssl … pass:X``, ``keytool -storepass X``.

The allow-list (what is never a secret, each entry with a test both ways): references and placeholders
(``$X``, ``${X}``, ``{{ x }}``, ``<your key>``, ``YOUR_API_KEY_HERE``, ``sk-...``, a run of ``x``), code
(``os.environ["X"]``, ``settings.key``, ``process.env.X!``), paths (``/etc/ssl/private/server.key``,
``~/.ssh/id_ed25519``, ``keys/server.key``), literals (``true``, ``null``), and names that say the value
is *about* a secret (``password_reset_url``, ``private_key_path``, ``max_tokens``, ``api_key_header``,
``signing_key_algorithm``). Hashes, ids, UUIDs and checksums are never found on their own (a value needs a
prefix, a name or a syntax to be a secret), so ``sha512-…`` integrity, ``h1:`` sums, git SHAs,
``msg_01…`` ids stay. ``bench/scenarios/redaction.py`` measures all of it: recall on the credential shapes
of gitleaks' and detect-secrets' rules that appear in coding sessions, false positives on look-alikes,
and both again on a held-out set written before these rules.

A secret becomes ``[REDACTED:<shape>]`` (a provider key: ``[REDACTED:<its name>]``) and the rest of the text
reads on (``password=[REDACTED:password]``).

Linear time on any text: every regex starts only at a boundary its own characters cannot continue, and
has no nested or overlapping repetition, so a failed attempt costs at most a bounded look-ahead or the
length of one token; the provider keys are found by one pass for their prefixes, each hit checked by its
key's own regex; what a match means is then decided in Python on that one match. ``docs/export.md`` lists
every shape with its examples.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Literal, NamedTuple

Span = tuple[int, int]


class Shape(NamedTuple):
    """One kind of secret: its name, the regex that finds a candidate, and what of a match is secret.

    ``spans`` returns the absolute spans to replace (none: the candidate is not a secret), each with the name
    its mark carries (None: the shape's); without it, the group ``secret`` if the regex has one, else the whole
    match.
    """

    name: str
    regex: re.Pattern[str]
    spans: Callable[[re.Match[str]], list[Span]] | None = None


#: A boundary that keeps a key from being cut out of a longer token.
_B = r"(?<![A-Za-z0-9_-])"
_E = r"(?![A-Za-z0-9_-])"

# -- names that say "secret" ---------------------------------------------------------------------

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
#: A word that makes a name strong wherever it stands (``DB_PASSWORD``, ``clientSecret``, ``SECRET_KEY_BASE``),
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
#: Strong only as the name's last word (``DB_PASS``, ``Pwd``, ``become_pass``).
_STRONG_LAST = frozenset({"pass", "pwd", "pw"})
#: ``key`` after one of these is strong (``api_key``, ``AccountKey``, ``SharedAccessKey``, ``x-api-key``).
_KEY_QUALIFIERS = frozenset({"api", "access", "private", "secret", "account", "shared", "client", "master", "admin"})
#: Weak as the name's last word: the value must look random (``JIRA_API_TOKEN``, ``ADAFRUIT_IO_KEY``, ``&sig=``).
_WEAK_LAST = frozenset({"key", "auth", "sig"})
_LAST_ENDING = "token"
#: Before a weak last word, these make the name an ordinary one (``sort_key``, ``next_page_token``).
_NOT_SECRET_QUALIFIERS = frozenset(
    {
        "public",
        "primary",
        "foreign",
        "sort",
        "partition",
        "cache",
        "idempotency",
        "dedup",
        "dedupe",
        "routing",
        "object",
        "row",
        "lookup",
        "map",
        "dict",
        "group",
        "composite",
        "unique",
        "index",
        "hash",
        "shard",
        "bucket",
        "cursor",
        "pagination",
        "page",
        "next",
        "continuation",
        "sync",
        "resume",
        "s3",
        "storage",
        "short",
        "hot",
        "keyboard",
        "max",
        "min",
        "total",
        "count",
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
        "refs",
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
        "algorithm",
        "alg",
        "stdin",
        "scheme",
        "method",
        "seconds",
        "minutes",
        "ms",
        "rate",
        "hash",
        "hashed",
        "digest",
        "fingerprint",
        "pem",
        "vault",
        "helper",
        "ring",
        "chain",
        "less",
    }
)

Strength = Literal["strong", "weak"]


def name_strength(name: str) -> Strength | None:
    """How strongly ``name`` (a variable, key, header or flag name) says its value is a secret (see the docstring)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _NOT_SECRET_LAST:
        return None
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    if last in _STRONG_LAST:
        return "strong"
    for i, word in enumerate(words):
        if word.endswith(_SECRET_WORDS):
            return "strong"
        if word == "key" and i > 0 and words[i - 1] in _KEY_QUALIFIERS:
            return "strong"
    if before in _NOT_SECRET_QUALIFIERS:
        return None
    if last.endswith(_LAST_ENDING) or (last in _WEAK_LAST and (last != "key" or before)):
        return "weak"
    return None


def secret_name(name: str) -> bool:
    """True when ``name`` says its value is a secret (strongly, or weakly: then only a random-looking value is)."""
    return name_strength(name) is not None


# -- values -------------------------------------------------------------------------------------

#: A whole value that stands for a secret rather than being one: a variable or template
#: reference, a placeholder, a mask, a literal.
_PLACEHOLDER = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}?|\$\(.*\)|%\(?[A-Za-z_]*\)?s|\{\{?[^{}]*\}?\}|<[^<>]*>"
    r"|\[[^\[\]]*\]|[*xX.•]+"
    r"|(?i:true|false|null|none|nil|undefined|str|string|bytes|int|required|optional|yes|no|on|off|redacted|hidden)",
    re.DOTALL,
)
#: Placeholders inside a value: an ellipsis, a run of one masking character, the words of "fill this in".
_PLACEHOLDER_PART = re.compile(
    r"\.\.\.|…|([xX*#•0])\1{5}|(?i:your[_-]|[_-]here\b|change[_-]?me|placeholder|redacted|example[_-]|dummy|fake[_-]?)"
)
#: An environment variable's name standing for its value (``YOUR_API_KEY``, ``OPENAI_API_KEY``).
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
#: Code where a bare value stands: a dotted reference (``settings.api_key``, ``process.env.X!``), a call
#: (``getpass()``), an index (``os.environ["X"]``). Quoted, the same characters are data.
_CODE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+[!?]?|[A-Za-z_][A-Za-z0-9_.]*[(\[].*", re.DOTALL
)
#: A path: absolute, home-relative, explicitly relative, Windows, or a relative one naming a file by its extension.
_PATH = re.compile(
    r"(?:/|~/|\.{1,2}/|[A-Za-z]:[\\/])\S*|[\w.@~+-]+(?:/[\w.@~+-]+)*/[\w@~+-]+\.[A-Za-z][A-Za-z0-9]{0,4}"
)
#: Words and identifiers (``created_at``, ``db-creds``, ``bert-base-uncased``, ``ctrlShiftP``): no randomness.
_WORDY = re.compile(r"[A-Za-z][a-z]*(?:[A-Z][a-z]+)*(?:[_.\-:+ ][A-Za-z][a-z]*(?:[A-Z][a-z]+)*)*")
#: Where a bare value (no quotes) ends inside it: the next query parameter (``&name=``) or
#: connection-string field (``;Name=``).
_FIELD_CUT = re.compile(r"[&;](?=[A-Za-z_][A-Za-z0-9_ .-]{0,40}=)")
#: Closing punctuation that ends a bare value in prose or code (``password=x1234,`` ``(token=abcd)``).
_TRAILING = ",;)]}>.'\"`"
_MIN_VALUE = 4
#: What a weak name's value needs to be a secret.
MIN_RANDOM_LENGTH = 8
MIN_ENTROPY = 2.8


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits a character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def random_looking(value: str) -> bool:
    """True when ``value`` looks generated, not written: long enough, letters and digits of two kinds (lower,
    upper, digit) making most of it, at least :data:`MIN_ENTROPY` bits a character, and no word or identifier."""
    if len(value) < MIN_RANDOM_LENGTH or _WORDY.fullmatch(value) or _ENV_NAME.fullmatch(value):
        return False
    if sum(c.isascii() and c.isalnum() for c in value) < 0.7 * len(value):
        return False
    kinds = any(c.islower() for c in value) + any(c.isupper() for c in value) + any(c.isdigit() for c in value)
    return kinds >= 2 and entropy(value) >= MIN_ENTROPY


def stands_for_a_secret(value: str) -> bool:
    """True when ``value`` is a reference, a placeholder, a path or a literal: what a secret's place holds when it
    does not hold the secret."""
    return bool(
        _PLACEHOLDER.fullmatch(value)
        or _PLACEHOLDER_PART.search(value)
        or _ENV_NAME.fullmatch(value)
        or _PATH.fullmatch(value)
        or value.startswith("[REDACTED:")
    )


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


def _is_code(value: str) -> bool:
    """A bare value that is code (``settings.api_key``, ``getpass()``), unless its parts are random: a token
    with dots in it (``pk.eyJ….…``) is no attribute access."""
    if not _CODE.fullmatch(value):
        return False
    dotted = re.fullmatch(r"[A-Za-z0-9_.-]+", value) is not None  # no call, no index: a name, or a token
    return not (dotted and any(random_looking(part) for part in value.split(".")))


def _value_span(text: str, at: int, strength: Strength = "strong") -> Span | None:
    """The secret part of the value that starts at ``text[at]``; None when there is none or it is not a secret
    (a weak name's value must also look random)."""
    if text[at : at + 1] in "bBrRuU" and text[at + 1 : at + 2] in "\"'":
        at += 1  # a Python string's prefix: b"…", r'…'
    v = _VALUE.match(text, at)
    if v is None:
        return None
    for group in ("dq", "sq", "eq"):
        if v.group(group) is not None:
            value = v.group(group)
            if len(value) < _MIN_VALUE or stands_for_a_secret(value):
                return None
            if strength == "weak" and not random_looking(value):
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
    if len(value) < _MIN_VALUE or value[0] in "$-{<([`%=?" or stands_for_a_secret(value) or _is_code(value):
        return None
    if strength == "weak" and not random_looking(value):
        return None
    return start, start + len(value)


def _assignment(m: re.Match[str]) -> list[Span]:
    key = m.group("key")
    strength = name_strength(key)
    if strength is None:
        return []
    span = _value_span(m.string, m.end(), strength)
    if span is None:
        return []
    if key.lower() in ("pwd", "pass") and m.string[span[0]] in "/~.":
        return []  # the shell's PWD=/home/dev, a path: not a password
    return [span]


def _flag(m: re.Match[str]) -> list[Span]:
    strength = name_strength(m.group("key"))
    if strength is None:
        return []
    span = _value_span(m.string, m.end(), strength)
    return [span] if span is not None else []


# -- commands that take a password in their own syntax -------------------------------------------------------

#: One argument of a command line: quoted or bare (a JSON-escaped quote ends a bare one).
_ARG = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"|(?:[^\s'\"\\]|\\(?![\"n]))+")
_MYSQL_P = re.compile(r"(?<!\S)-p(?P<v>[^\s'\"\\]+|'[^']*'|\"[^\"]*\")")
_SSHPASS_P = re.compile(r"(?<!\S)-p\s*(?P<v>[^\s'\"\\-][^\s'\"\\]*|'[^']*'|\"[^\"]*\")")
_CURL_U = re.compile(r"(?<!\S)(?:-u|--user|--proxy-user|-U)(?:\s+|=)?(?P<q>['\"]?)[^\s:'\"]*:(?P<v>[^\s'\"\\]+)")
_LOGIN_P = re.compile(r"(?<!\S)-p(?:=|\s+)(?P<v>[^\s'\"\\-][^\s'\"\\]*|'[^']*'|\"[^\"]*\")")
_REDIS_A = re.compile(r"(?<!\S)-a\s+(?P<v>[^\s'\"\\-][^\s'\"\\]*|'[^']*'|\"[^\"]*\")")
_OPENSSL_PASS = re.compile(r"(?<!\S)-pass(?:in|out|word)?\s+['\"]?pass:(?P<v>[^\s'\"\\]+)")
_KEYTOOL_PASS = re.compile(
    r"(?<!\S)-(?:src|dest|new)?(?:store|key)pass\s+(?P<v>[^\s'\"\\-][^\s'\"\\]*|'[^']*'|\"[^\"]*\")"
)
_LOGIN_TOOLS = frozenset({"docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "crane", "regctl"})


def _htpasswd(args: str) -> list[Span]:
    """``htpasswd -b[c…] FILE USER PASSWORD`` (``-n``: no FILE): the password is a positional argument."""
    words = [(a.group(), a.start()) for a in _ARG.finditer(args)]
    flags = "".join(w[1:] for w, _ in words if w.startswith("-"))
    if "b" not in flags:
        return []
    positional = [(w, at) for w, at in words if not w.startswith("-")]
    index = 1 if "n" in flags else 2
    if len(positional) <= index:
        return []
    word, at = positional[index]
    if word[:1] in "'\"":
        return [(at + 1, at + len(word) - 1)]
    return [(at, at + len(word))]


def _command(m: re.Match[str]) -> list[Span]:
    tool = m.group("tool").lower()
    args, base = m.group("args"), m.start("args")
    if tool == "htpasswd":
        return [(base + a, base + b) for a, b in _htpasswd(args)]
    if tool == "curl":
        finders = [_CURL_U]
    elif tool == "sshpass":
        finders = [_SSHPASS_P]
    elif tool in _LOGIN_TOOLS:
        login = re.search(r"(?<!\S)login(?!\S)", args)
        if login is None:
            return []
        args, base = args[login.end() :], base + login.end()
        finders = [_LOGIN_P]
    elif tool == "redis-cli":
        finders = [_REDIS_A]
    elif tool == "openssl":
        finders = [_OPENSSL_PASS]
    elif tool in ("keytool", "jarsigner"):
        finders = [_KEYTOOL_PASS]
    else:
        finders = [_MYSQL_P]
    out: list[Span] = []
    for finder in finders:
        for a in finder.finditer(args):
            start, end = a.span("v")
            value = a.group("v")
            if value[:1] in "'\"":
                start, end = start + 1, end - 1
                value = value[1:-1]
            if len(value) >= 1 and not value.startswith(("$", "[REDACTED:")) and not stands_for_a_secret(value):
                out.append((base + start, base + end))
    return out


# -- file formats and hashes ---------------------------------------------------------------------------------


def _netrc(m: re.Match[str]) -> list[Span]:
    """``password X`` of a ``.netrc`` entry: a ``machine`` (or ``default``) before it, or ``login`` on its line."""
    text, at = m.string, m.start()
    line_start = text.rfind("\n", 0, at) + 1
    if not (
        re.search(r"(?<!\S)(?:machine|default)(?!\S)", text[max(0, at - 400) : at]) or "login" in text[line_start:at]
    ):
        return []
    value = m.group("secret")
    if stands_for_a_secret(value):
        return []
    return [m.span("secret")]


def _docker_auth(m: re.Match[str]) -> list[Span]:
    """Docker's ``config.json``: ``"auth"`` is base64 of ``user:password``."""
    try:
        plain = base64.b64decode(m.group("secret"), validate=True)
    except (binascii.Error, ValueError):
        return []
    return [m.span("secret")] if b":" in plain else []


#: A line of a Kubernetes Secret's ``data:``: a key and its base64 value.
_SECRET_DATA_LINE = re.compile(r"(?m)^[ \t]+[\w.-]+:[ \t]*[\"']?(?P<v>[A-Za-z0-9+/]{8,}={0,2})[\"']?[ \t]*\r?$")
#: How far after ``kind: Secret`` its data is looked for (a bound: one crafted header costs at most this much).
SECRET_DOC_CHARS = 16_384


def _k8s_secret(m: re.Match[str]) -> list[Span]:
    """The values of a ``kind: Secret`` document's ``data:`` block (base64; ``stringData:`` is the password shape's)."""
    text = m.string
    end = text.find("\n---", m.end())
    end = min(len(text), m.end() + SECRET_DOC_CHARS, end if end >= 0 else len(text))
    doc = text[m.start() : end]
    out: list[Span] = []
    for block in re.finditer(r"(?m)^([ \t]*)(?:data|binaryData):[ \t]*\r?$", doc):
        indent = len(block.group(1))
        for line in re.finditer(r"(?m)^.*$", doc[block.end() + 1 :]):
            body = line.group()
            if body.strip() and len(body) - len(body.lstrip()) <= indent:
                break
            v = _SECRET_DATA_LINE.match(body)
            if v is not None:
                at = m.start() + block.end() + 1 + line.start()
                out.append((at + v.start("v"), at + v.end("v")))
    return out


def _pgpass(m: re.Match[str]) -> list[Span]:
    value = m.group("secret")
    return [] if stands_for_a_secret(value) else [m.span("secret")]


def _url_password(m: re.Match[str]) -> list[Span]:
    value = m.group("secret")
    if value.startswith("[REDACTED:") or stands_for_a_secret(value):
        return []
    return [m.span("secret")]


# -- provider keys -------------------------------------------------------------------------------------------


class Key(NamedTuple):
    """A provider's key: the name its mark carries, the gitleaks/detect-secrets rule it follows, its literal prefix
    (what the one pass looks for) and its regex, matched where the prefix stands."""

    name: str
    rule: str
    prefix: str
    regex: re.Pattern[str]


def _k(name: str, rule: str, prefix: str, body: str, flags: int = 0) -> Key:
    return Key(name, rule, prefix, re.compile(re.escape(prefix) + body + _E, flags))


_HEX = "[0-9a-f]"
_ANY = "[A-Za-z0-9]"
_URL = "[A-Za-z0-9_-]"

#: Provider keys with a prefix of their own (gitleaks' rule ids in the second column).
KEYS: tuple[Key, ...] = (
    _k(
        "anthropic-key",
        "anthropic-api-key, anthropic-admin-api-key",
        "sk-ant-",
        r"[a-z]{2,10}\d{0,3}-[A-Za-z0-9_-]{20,}",
    ),
    _k("openai-key", "openai-api-key", "sk-", r"(?P<body>[A-Za-z0-9_-]{20,})"),
    _k("openrouter-key", "(openrouter: sk-or-v1-)", "sk-or-v1-", _HEX + "{64}"),
    _k("github-token", "github-pat", "ghp_", _ANY + "{36,}"),
    _k("github-token", "github-oauth", "gho_", _ANY + "{36,}"),
    _k("github-token", "github-app-token", "ghu_", _ANY + "{36,}"),
    _k("github-token", "github-app-token", "ghs_", _ANY + "{36,}"),
    _k("github-token", "github-refresh-token", "ghr_", _ANY + "{36,}"),
    _k("github-token", "github-fine-grained-pat", "github_pat_", r"\w{50,}"),
    *(
        _k("gitlab-token", f"gitlab ({p})", p, r"[\w-]{20,}(?:\.[0-9a-z]{9})?")
        for p in (
            "glpat-",
            "glptt-",
            "gldt-",
            "glrt-",
            "glcbt-",
            "glft-",
            "gloas-",
            "glsoat-",
            "glimt-",
            "glagent-",
            "glffct-",
            "GR1348941",
        )
    ),
    *(_k("aws-access-key-id", "aws-access-token", p, "[A-Z0-9]{16}") for p in ("AKIA", "ASIA", "ABIA", "ACCA")),
    _k("aws-access-key-id", "aws-access-token", "A3T", "[A-Z0-9][A-Z0-9]{16}"),
    _k("aws-bedrock-key", "aws-amazon-bedrock-api-key-long-lived", "ABSK", "[A-Za-z0-9+/]{109,269}={0,2}"),
    *(
        _k("slack-token", "slack-*-token", p, "[A-Za-z0-9-]{10,}")
        for p in ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-")
    ),
    _k("slack-token", "slack-config-access-token", "xoxe.xox", r"[bp]-\d-[A-Za-z0-9]{100,}"),
    *(_k("huggingface-token", "huggingface-access-token", p, _ANY + "{30,}") for p in ("hf_", "api_org_")),
    _k("npm-token", "npm-access-token", "npm_", _ANY + "{36}"),
    _k("pypi-token", "pypi-upload-token", "pypi-AgE", r"[A-Za-z0-9_-]{50,}"),
    _k("google-api-key", "gcp-api-key", "AIza", "[0-9A-Za-z_-]{35}"),
    _k("google-oauth-token", "(google oauth2 access token)", "ya29.", "[0-9A-Za-z_-]{20,}"),
    _k("google-oauth-client-secret", "(google oauth client secret)", "GOCSPX-", _URL + "{28}"),
    *(
        _k("stripe-key", "stripe-access-token", f"{k}_{m}_", "[0-9A-Za-z]{10,}")
        for k in ("sk", "rk")
        for m in ("live", "test", "prod")
    ),
    _k("stripe-key", "(stripe webhook secret)", "whsec_", "[0-9A-Za-z]{24,}"),
    _k(
        "1password-key",
        "1password-secret-key",
        "A3-",
        r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    _k("1password-key", "1password-service-account-token", "ops_eyJ", "[A-Za-z0-9+/]{250,}={0,3}"),
    _k("adobe-key", "adobe-client-secret", "p8e-", "[A-Za-z0-9]{32}"),
    _k("age-secret-key", "age-secret-key", "AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _k("airtable-token", "airtable-personnal-access-token", "pat", _ANY + r"{14}\." + _HEX + "{64}"),
    _k("alibaba-key", "alibaba-access-key-id", "LTAI", "[A-Za-z0-9]{20}"),
    _k("artifactory-key", "artifactory-api-key", "AKCp", _ANY + "{69}"),
    _k("artifactory-key", "artifactory-reference-token", "cmVmd", _ANY + "{59}"),
    _k("clickhouse-key", "clickhouse-cloud-api-secret-key", "4b1d", _ANY + "{38}"),
    _k("clojars-token", "clojars-api-token", "CLOJARS_", "[a-z0-9]{60}", re.IGNORECASE),
    _k("cloudflare-key", "cloudflare-origin-ca-key", "v1.0-", _HEX + "{24}-" + _HEX + "{146}"),
    _k("databricks-token", "databricks-api-token", "dapi", _HEX + r"{32}(?:-\d)?"),
    *(_k("digitalocean-token", "digitalocean-*", p, _HEX + "{64}") for p in ("dop_v1_", "doo_v1_", "dor_v1_")),
    _k("doppler-token", "doppler-api-token", "dp.pt.", "[A-Za-z0-9]{43}"),
    *(_k("duffel-token", "duffel-api-token", f"duffel_{m}_", r"[A-Za-z0-9_\-=]{43}") for m in ("test", "live")),
    _k("dynatrace-token", "dynatrace-api-token", "dt0c01.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    *(_k("easypost-token", "easypost-api-token", p, "[A-Za-z0-9]{54}") for p in ("EZAK", "EZTK")),
    *(_k("facebook-token", "facebook-page-access-token", p, "[A-Za-z0-9]{100,}") for p in ("EAAM", "EAAC")),
    *(_k("flutterwave-key", "flutterwave-*", p, "[a-hA-H0-9]{12,32}(?:-X)?") for p in ("FLWSECK_TEST-", "FLWSECK-")),
    _k("flyio-token", "flyio-access-token", "fo1_", r"[\w-]{43}"),
    *(_k("flyio-token", "flyio-access-token", p, "[A-Za-z0-9+/]{100,}={0,3}") for p in ("fm1a_", "fm1r_", "fm2_")),
    _k("frameio-token", "frameio-api-token", "fio-u-", r"[A-Za-z0-9\-_=]{64}"),
    _k("grafana-token", "grafana-api-key", "eyJrIjoi", "[A-Za-z0-9]{70,400}={0,3}"),
    _k("grafana-token", "grafana-cloud-api-token", "glc_", "[A-Za-z0-9+/]{32,400}={0,3}"),
    _k("grafana-token", "grafana-service-account-token", "glsa_", "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    *(
        _k("harness-key", "harness-api-key", p, r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}")
        for p in ("pat.", "sat.")
    ),
    _k("heroku-key", "heroku-api-key-v2", "HRKU-AA", "[0-9A-Za-z_-]{58}"),
    _k("infracost-token", "infracost-api-token", "ico-", _ANY + "{32}"),
    *(_k("intra42-secret", "intra42-client-secret", p, "[a-fA-F0-9]{64}") for p in ("s-s4t2ud-", "s-s4t2af-")),
    _k("linear-key", "linear-api-key", "lin_api_", "[A-Za-z0-9]{40}"),
    _k("notion-token", "notion-api-token", "ntn_", "[0-9]{11}[A-Za-z0-9]{35}"),
    _k("notion-token", "(notion internal integration)", "secret_", _ANY + "{43}"),
    _k("octopus-key", "octopus-deploy-api-key", "API-", "[A-Z0-9]{26}"),
    _k("openshift-token", "openshift-user-token", "sha256~", r"[\w-]{43}"),
    _k("perplexity-key", "perplexity-api-key", "pplx-", _ANY + "{48}"),
    *(
        _k("planetscale-token", "planetscale-*", p, r"[\w=.-]{32,64}")
        for p in ("pscale_tkn_", "pscale_oauth_", "pscale_pw_")
    ),
    _k("postman-key", "postman-api-token", "PMAK-", "[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    _k("prefect-token", "prefect-api-token", "pnu_", _ANY + "{36}"),
    _k("pulumi-token", "pulumi-api-token", "pul-", _HEX + "{40}"),
    _k("readme-token", "readme-api-token", "rdme_", "[a-z0-9]{70}"),
    _k("rubygems-token", "rubygems-api-token", "rubygems_", _HEX + "{48}"),
    _k("scalingo-token", "scalingo-api-token", "tk-us-", r"[\w-]{48}"),
    _k("sendgrid-key", "sendgrid-api-token", "SG.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    _k("sendinblue-key", "sendinblue-api-token", "xkeysib-", _HEX + "{64}-[A-Za-z0-9]{16}"),
    _k("sentry-token", "sentry-user-token", "sntryu_", _HEX + "{64}"),
    _k("sentry-token", "sentry-org-token", "sntrys_", r"eyJ[A-Za-z0-9+/]{20,400}={0,2}_[A-Za-z0-9+/]{43}"),
    *(_k("settlemint-token", "settlemint-*-token", p, _ANY + "{16}") for p in ("sm_aat_", "sm_pat_", "sm_sat_")),
    *(_k("shippo-token", "shippo-api-token", f"shippo_{m}_", "[a-fA-F0-9]{40}") for m in ("live", "test")),
    *(_k("shopify-token", "shopify-*", p, "[a-fA-F0-9]{32}") for p in ("shpat_", "shpca_", "shppa_", "shpss_")),
    _k("sourcegraph-token", "sourcegraph-access-token", "sgp_", "(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}"),
    *(_k("square-token", "square-access-token", p, r"[\w-]{22,60}") for p in ("EAAA", "sq0atp-", "sq0csp-")),
    _k("twilio-key", "twilio-api-key", "SK", "[0-9a-fA-F]{32}"),
    _k("vault-token", "vault-service-token", "hvs.", r"[\w-]{24,120}"),
    _k("vault-token", "vault-batch-token", "hvb.", r"[\w-]{24,300}"),
    _k("vault-token", "vault-service-token (legacy)", "s.", "[A-Za-z0-9]{24}"),
    _k("langsmith-key", "(langsmith: lsv2_)", "lsv2_", r"(?:pt|sk)_" + _HEX + "{32}_" + _HEX + "{10}"),
    _k("groq-key", "(groq: gsk_)", "gsk_", _ANY + "{52}"),
    _k("replicate-token", "(replicate: r8_)", "r8_", _ANY + "{37}"),
    _k("xai-key", "(xai: xai-)", "xai-", _ANY + "{70,90}"),
    _k("mapbox-token", "mapbox-api-token", "sk.", r"eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    _k("newrelic-key", "new-relic-user-api-key", "NRAK-", "[A-Z0-9]{27}"),
    _k("newrelic-key", "new-relic-insert-key", "NRII-", "[a-zA-Z0-9-]{32}"),
    _k("newrelic-key", "new-relic-browser-api-token", "NRJS-", _HEX + "{19}"),
    _k("atlassian-token", "atlassian-api-token", "ATATT3", r"[A-Za-z0-9_\-=]{180,200}"),
    _k("typeform-token", "typeform-api-token", "tfp_", r"[a-z0-9\-_.=]{59}", re.IGNORECASE),
    _k("dropbox-token", "dropbox-short-lived-api-token", "sl.", r"[A-Za-z0-9\-=_]{130,}"),
    _k("sonar-token", "sonar-api-token", "squ_", _HEX + "{40}"),
    _k("sonar-token", "sonar-api-token", "sqp_", _HEX + "{40}"),
    _k("sonar-token", "sonar-api-token", "sqa_", _HEX + "{40}"),
    _k("mailgun-key", "mailgun-private-api-token", "key-", _HEX + "{32}"),
    _k("yandex-key", "yandex-api-key", "AQVN", r"[A-Za-z0-9_\-]{35,38}"),
)

#: The first characters of every prefix, one pass over the text finds where a key may start.
_PREFIXES = sorted({k.prefix for k in KEYS if k.prefix}, key=len, reverse=True)
_KEY_START = re.compile(_B + "(?:" + "|".join(re.escape(p) for p in _PREFIXES) + ")")
#: Two characters of a prefix -> the keys whose prefix starts so, longest prefix first.
_BY_START: dict[str, list[Key]] = {}
for _key in sorted(KEYS, key=lambda k: -len(k.prefix)):
    if _key.prefix:
        _BY_START.setdefault(_key.prefix[:2], []).append(_key)
#: A key whose body is a placeholder: a run of one character (``ghp_xxxx…``, ``AKIAXXXX…``).
_RUN = re.compile(r"(.)\1{7}")


def _openai_body_ok(body: str) -> bool:
    # Keys mix digits with both cases; words and branch names (``sk-feature-login-flow``) do not.
    return any(c.isdigit() for c in body) and any(c.isupper() for c in body) and any(c.islower() for c in body)


def _provider_keys(text: str, counts: Counter[str] | None) -> str:
    """``text`` with every provider key of :data:`KEYS` replaced: the prefixes found in one pass, each checked."""
    spans: list[tuple[int, int, str]] = []
    for hit in _KEY_START.finditer(text):
        at = hit.start()
        if spans and at < spans[-1][1]:
            continue
        for key in _BY_START.get(text[at : at + 2], ()):
            if not text.startswith(key.prefix, at):
                continue
            m = key.regex.match(text, at)
            if m is None:
                continue
            body = m.group()[len(key.prefix) :]
            if _RUN.search(body) or len(set(body)) <= 4:
                continue
            if key.name == "openai-key" and not _openai_body_ok(m.group("body")):
                continue
            spans.append((at, m.end(), key.name))
            break
    for m in _TELEGRAM.finditer(text):  # the one key with no literal prefix but a shape its own
        if not any(a <= m.start() < b for a, b, _ in spans):
            spans.append((m.start(), m.end(), "telegram-token"))
    return _replace(text, sorted(spans), counts)


_TELEGRAM = re.compile(r"(?<![0-9A-Za-z_:-])[0-9]{8,10}:A[A-Za-z0-9_-]{34}" + _E)


def _s(name: str, regex: str, spans: Callable[[re.Match[str]], list[Span]] | None = None, flags: int = 0) -> Shape:
    return Shape(name, re.compile(regex, flags), spans)


#: Order matters where shapes nest: the most specific first (a key inside ``API_KEY=…`` is named by its
#: provider, not as a ``password``). The provider keys (:data:`KEYS`) go right after the private keys.
SHAPES: tuple[Shape, ...] = (
    _s(
        "private-key",
        # A header, then a body (at least a few base64 characters: prose that names the header is no key).
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?=(?:\s|\\n|[A-Za-z0-9+/=:,-]){0,160}?[A-Za-z0-9+/]{8})"
        r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    _s("azure-client-secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
    _s("discord-token", r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}" + _E),
    _s("mailchimp-key", _B + r"[0-9a-f]{32}-us[0-9]{1,2}" + _E),
    _s("maxmind-key", _B + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _E),
    _s("terraform-token", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + _E),
    _s("facebook-token", r"(?<![0-9])[0-9]{15,16}(?:\||%7[Cc])(?P<secret>[0-9A-Za-z_-]{27,40})" + _E),
    # Webhook URLs: whoever holds one can post to the channel.
    _s("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    _s(
        "teams-webhook",
        r"https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/"
        r"(?P<secret>[0-9a-f]{32}/[0-9a-f-]{36})",
    ),
    _s(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/(?P<secret>[A-Za-z0-9_-]{60,80})",
    ),
    _s("jwt", _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _E),
    _s(
        "password-hash",
        r"\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}"
        r"|\$argon2(?:id|i|d)\$v=[0-9]+\$m=[0-9]+,t=[0-9]+,p=[0-9]+\$[A-Za-z0-9+/]{8,}\$[A-Za-z0-9+/]{16,}"
        r"|\$(?:[156]|apr1|md5|y|7|scrypt)\$(?:rounds=[0-9]+\$)?[./A-Za-z0-9,=$-]{0,40}\$[./A-Za-z0-9]{22,86}"
        r"|(?:pbkdf2_sha(?:1|256|512)|bcrypt_sha256|scrypt)\$[0-9]+\$[A-Za-z0-9./+]{4,64}\$[A-Za-z0-9./+=]{20,}",
    ),
    # An Authorization header's credential (after its scheme), and a bare "Bearer <token>".
    _s(
        "authorization",
        r"(?i:(?<![A-Za-z0-9_-])(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:bearer|basic|token|bot|digest)\s+)?)(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    ),
    _s("bearer-token", r"(?<![A-Za-z0-9_-])(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    # scheme://user:password@host, scheme://:password@host: the password runs to the authority's *last* @.
    _s(
        "url-password",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/?#@:\"'<>\[\]]{0,128}:"
        r"(?P<secret>[^\s/?#\"'<>]{1,256}?)@[A-Za-z0-9._~%\[\]-]{1,253}(?=[:/?#\s\"'<>,;)\\]|\Z)",
        _url_password,
    ),
    _s("netrc", r"(?<![\w-])(?:password|passwd)[ \t]+(?P<secret>[^\s'\"`]{1,256})", _netrc),
    _s(
        "pgpass",
        # host (a name, an address, a socket's folder or *), port, database, user, password.
        r"(?m)^(?:\*|[A-Za-z][A-Za-z0-9.-]{0,252}|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|/[^\s:]{0,252}):(?:[0-9]{1,5}|\*)"
        r":[^\s:]{1,63}:[^\s:]{1,63}:(?P<secret>\S{1,256})[ \t]*\r?$",
        _pgpass,
    ),
    _s("docker-auth", r"\"(?:auth|identitytoken)\"\s*:\s*\"(?P<secret>[A-Za-z0-9+/]{8,1024}={0,2})\"", _docker_auth),
    _s("kubernetes-secret", r"(?m)^kind:[ \t]*[\"']?Secret[\"']?[ \t]*\r?$", _k8s_secret),
    # A command whose arguments carry a password in its own syntax (see _command). The arguments run to the
    # end of the command (a pipe, ;, &, a newline).
    _s(
        "command-password",
        r"(?<![A-Za-z0-9_/.-])(?P<tool>mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mariadb"
        r"|mariadb-dump|sshpass|curl|docker|podman|buildah|skopeo|nerdctl|helm|oras|crane|regctl|redis-cli"
        r"|htpasswd|openssl|keytool|jarsigner)(?![A-Za-z0-9_.-])(?P<args>[^\n|;&]*)",
        _command,
    ),
    # --password VALUE, --db-password=VALUE, --client-secret 'VALUE', --api-key VALUE …
    _s("password-flag", r"(?<![A-Za-z0-9_-])--(?P<key>[A-Za-z][A-Za-z0-9-]{1,60})(?:=|[ \t]+)", _flag),
    # <add key="ClearTextPassword" value="…"/> (NuGet.Config, .NET appSettings).
    _s(
        "password",
        r"<add\s+key=\"(?P<key>[^\"]{1,128})\"\s+value=",
        _flag,
    ),
    # NAME=value, NAME: value, "name": "value", name => value, ?name=value, Name=value; (connection strings),
    # os.environ["NAME"] = "value". A $NAME or ${NAME} is a reference, never an assignment.
    _s(
        "password",
        r"(?<![A-Za-z0-9_.$-])(?<!\$\{)[\"']?(?P<key>[A-Za-z0-9_.-]{3,128})\\?[\"']?\]?[ \t]*(?:=>|:=|[:=](?![=:]))[ \t]*",
        _assignment,
    ),
)

#: Every name a mark can carry (the shapes', the provider keys').
NAMES = frozenset({s.name for s in SHAPES} | {k.name for k in KEYS} | {"telegram-token"})


def redact(text: str, counts: Counter[str] | None = None) -> str:
    """``text`` with every secret found replaced by ``[REDACTED:<name>]``; ``counts`` tallies them by name."""
    if not text:
        return text
    text = _apply(SHAPES[0], text, counts)
    text = _provider_keys(text, counts)
    for shape in SHAPES[1:]:
        text = _apply(shape, text, counts)
    return text


def _apply(shape: Shape, text: str, counts: Counter[str] | None) -> str:
    """``text`` with the secrets of one shape replaced: candidates found left to right, overlaps kept out."""
    spans_of = shape.spans or _default_spans
    spans: list[tuple[int, int, str]] = []
    for m in shape.regex.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue  # inside a secret already taken
        for start, end in spans_of(m):
            if not spans or start >= spans[-1][1]:
                spans.append((start, end, shape.name))
    return _replace(text, spans, counts)


def _replace(text: str, spans: list[tuple[int, int, str]], counts: Counter[str] | None) -> str:
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end, name in spans:
        if start < pos:
            continue
        if counts is not None:
            counts[name] += 1
        out += [text[pos:start], f"[REDACTED:{name}]"]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _default_spans(m: re.Match[str]) -> list[Span]:
    if "secret" in m.re.groupindex and m.group("secret") is not None:
        if m.group("secret").startswith("[REDACTED:"):
            return []
        return [m.span("secret")]
    return [m.span()]
