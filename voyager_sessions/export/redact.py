"""``voyager export --redact``: secrets of well-known shapes replaced before anything is written.

Each pattern is named; a match becomes ``[REDACTED:<name>]`` (for an assignment or a
header, only the value: ``password=[REDACTED:password]``), so a reader still sees what
was there and why it is gone. Patterns aim at shapes that are secrets with near
certainty (a provider's key prefix, a JWT's two ``eyJ`` parts, a PEM private-key block)
and at values assigned to names that say "secret"; they are not a guarantee, and
``docs/export.md`` lists them with what they do not catch. The tests hold every pattern
to examples that must and must not match.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple


class Pattern(NamedTuple):
    """One kind of secret: its name, and a regex whose group ``secret`` (else the whole match) is replaced.

    With ``key`` set, a match counts only when its group ``key`` (the name a value is
    assigned to) matches ``key`` whole; checking the name apart keeps the regex itself free
    of nested repetition, so matching stays linear however long and repetitive the text.
    """

    name: str
    regex: re.Pattern[str]
    key: re.Pattern[str] | None = None


def _p(name: str, regex: str, key: str | None = None) -> Pattern:
    return Pattern(name, re.compile(regex), re.compile(key, re.IGNORECASE) if key else None)


#: Token characters, and a boundary that keeps a key from being cut out of a longer word.
_B = r"(?<![A-Za-z0-9_-])"
_E = r"(?![A-Za-z0-9_-])"

#: Names that say their value is a secret (matched case-insensitively, anywhere in a longer name
#: such as ``MYSQL_ROOT_PASSWORD`` or ``clientSecret``); ``token`` only as the name's last word,
#: so ``max_tokens=4096`` stays.
_SECRET_NAME = (r"[A-Za-z0-9_.-]*?(?:(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key"
                r"|private[_-]?key)[A-Za-z0-9_]*|token)")
#: A value that is data, not code or a placeholder: at least 4 characters, not a call or an index
#: (``getpass()``, ``env["X"]``), not a reference (``$X``, ``${X}``, ``<your key>``, ``settings.key``),
#: not a literal.
_LITERALS = r"(?:true|false|null|none|nil|undefined|str|string|bytes|int|required|optional)(?![A-Za-z0-9_])"
_END = r"(?=[\s\"'&,;)\]}>]|$)"
_REFERENCE = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+" + _END  # settings.api_key, self.password
_BARE = r"(?![\"'$`{<(\[=])(?!" + _LITERALS + r")(?!" + _REFERENCE + r")[^\s\"'&,;)(\[\]{}<>]{4,}" + _END

#: Order matters where shapes nest: the most specific first (an Anthropic key also starts ``sk-``).
#: Every pattern starts only at a boundary its own characters cannot continue, so no text,
#: however long and repetitive, makes matching slower than linear.
PATTERNS: tuple[Pattern, ...] = (
    _p("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                      r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    _p("anthropic-key", _B + r"sk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_-]{20,}" + _E),
    _p("openai-key", _B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}" + _E),
    _p("github-token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})" + _E),
    _p("aws-access-key-id", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    _p("slack-token", _B + r"xox[abposr]-[A-Za-z0-9-]{10,}" + _E),
    _p("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    _p("google-api-key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
    _p("google-oauth-token", _B + r"ya29\.[0-9A-Za-z_-]{20,}" + _E),
    _p("stripe-key", _B + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}" + _E),
    _p("jwt", _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _E),
    # An Authorization header's credential (after its scheme), and a bare "Bearer <token>".
    _p("authorization", r"(?i:(?<![A-Za-z0-9_-])authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot)\s+)?)"
                        r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})"),
    _p("bearer-token", r"(?<![A-Za-z0-9_-])(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    # user:password@ in a URL.
    _p("url-password", r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@\[\]]+:(?P<secret>[^\s/@]+)@"),
    # --password VALUE on a command line.
    _p("password-flag", r"(?<![A-Za-z0-9_-])--(?i:password|passwd|token|api-key|secret)(?:\s+|=)(?P<bare>" + _BARE + ")"),
    # NAME=value, NAME: value, "name": "value" where the name says it is secret.
    _p("password", r"(?<![A-Za-z0-9_.-])[\"']?(?P<key>[A-Za-z0-9_.-]{5,128})[\"']?\s*[:=]\s*"
                   r"(?:\"(?P<dq>[^\"\n$`{}]{4,})\"|'(?P<sq>[^'\n$`{}]{4,})'|(?P<bare>(?i:" + _BARE + ")))",
       key=_SECRET_NAME),
)

_SECRET_GROUPS = ("secret", "dq", "sq", "bare")


def redact(text: str, counts: Counter[str] | None = None) -> str:
    """``text`` with every secret the patterns know replaced by ``[REDACTED:<name>]``; ``counts`` tallies them."""
    if not text:
        return text
    for pat in PATTERNS:
        text = pat.regex.sub(_replacer(pat, counts), text)
    return text


def _replacer(pat: Pattern, counts: Counter[str] | None) -> Callable[[re.Match[str]], str]:
    name = pat.name
    mark = f"[REDACTED:{name}]"

    def replace(m: re.Match[str]) -> str:
        if pat.key is not None and not pat.key.fullmatch(m.group("key")):
            return m.group(0)
        for group in _SECRET_GROUPS:
            if group in m.re.groupindex and m.group(group) is not None:
                value = m.group(group)
                if value.startswith("[REDACTED:"):  # an earlier, more specific pattern got it
                    return m.group(0)
                if counts is not None:
                    counts[name] += 1
                start, end = m.span(group)
                base = m.start()
                whole = m.group(0)
                return whole[: start - base] + mark + whole[end - base:]
        if counts is not None:
            counts[name] += 1
        return mark

    return replace
