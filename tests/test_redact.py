"""``voyager export --redact``: every pattern on examples it must replace and look-alikes it must leave,
linear time on hostile text, and an export with secrets in its turns, title, paths and checkpoint."""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest

from tests.conftest import CLAUDE_SID, _line, claude_session_lines, write_claude
from voyager_sessions.export.redact import PATTERNS, redact

# Example secrets: right shapes, invented values (assembled here so no scanner mistakes the file for a leak).
OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" + "AbCdEfGh"
OPENAI_OLD = "sk-" + "T3BlbkFJ" + "a1B2c3D4e5F6g7H8i9J0k1L2"
ANTHROPIC = "sk-ant-api03-" + "x7Yy" * 22 + "-AA"
GITHUB = "ghp_" + "0123456789abcdefABCDEF0123456789abcd"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ01"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
GOOGLE = "AIza" + "SyD-1234567890abcdefghijklmnopqrstu"
GOOGLE_OAUTH = "ya29." + "a0AfH6SMBx1234567890abcdefghijklmnop"
STRIPE = "sk_live_" + "51H8abcdefghijklmnopqrstuv"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234abcd\nZm9vYmFy\n-----END RSA PRIVATE KEY-----"

#: (text, the secret that must be gone, the pattern that takes it)
MUST = [
    (f"export OPENAI_API_KEY={OPENAI}", OPENAI, "openai-key"),
    (f"key {OPENAI_OLD} here", OPENAI_OLD, "openai-key"),
    (f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC, "anthropic-key"),
    (f"git clone https://{GITHUB}@github.com/o/r", GITHUB, "github-token"),
    (f"token: {GITHUB_PAT}", GITHUB_PAT, "github-token"),
    (f"aws_access_key_id = {AWS_ID}", AWS_ID, "aws-access-key-id"),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "password"),
    (f"SLACK_BOT_TOKEN={SLACK}", SLACK, "slack-token"),
    (f"curl -X POST {SLACK_HOOK}", SLACK_HOOK, "slack-webhook"),
    (f'{{"apiKey": "{GOOGLE}"}}', GOOGLE, "google-api-key"),
    (f"Authorization: Bearer {GOOGLE_OAUTH}", GOOGLE_OAUTH, "google-oauth-token"),
    (f"stripe.api_key = '{STRIPE}'", STRIPE, "stripe-key"),
    (f"cookie: session={JWT}; path=/", JWT, "jwt"),
    (f"{PEM}\nafter", "MIIEowIBAAKCAQEA1234abcd", "private-key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n(cut off)", "b3BlbnNzaC1rZXk", "private-key"),
    ('curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA==" http://x', "dXNlcjpwYXNzd29yZA==", "authorization"),
    ("headers = {'Authorization': 'token 0123456789abcdef'}", "0123456789abcdef", "authorization"),
    ("proxy said: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234", "bearer-token"),
    ("DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app", "s3cr3t-Pa55", "url-password"),
    ("mysql --user root --password hunter2hunter2 -h db", "hunter2hunter2", "password-flag"),
    ("password=hunter22", "hunter22", "password"),
    ('DB_PASSWORD="correct horse battery"', "correct horse battery", "password"),
    ("db:\n  password: 'p@ss w0rd!'\n", "p@ss w0rd!", "password"),
    ('{"client_secret": "9f8e7d6c5b4a"}', "9f8e7d6c5b4a", "password"),
    ("GITLAB_TOKEN=glpat-abcdefghij1234567890", "glpat-abcdefghij1234567890", "password"),
    ("https://api.example.com/v1?user=bob&api_key=0a1b2c3d4e5f&x=1", "0a1b2c3d4e5f", "password"),
]

#: Look-alikes that are not secrets: they stay exactly as they are.
MUST_NOT = [
    "def login(password: str) -> bool:",
    "password = getpass.getpass()",
    "secret = os.environ['APP_SECRET']",
    "api_key = settings.api_key",
    'password: "{password}"',
    "token: ${GITHUB_TOKEN}",
    "PASSWORD=<your password here>",
    "if password == expected:",
    "secret: true",
    "max_tokens=4096",
    "tokens_in: 1234",
    "The password must be at least 12 characters long.",
    "a tokenizer: whitespace",
    "sk-learn is not a key; sk-short1",
    "task-abcdefghijklmnopqrstuvwxyz0123456789 is a task id",
    "AKIA is how AWS ids start",
    "eyJhbGciOiJIUzI1NiJ9 alone is one JWT part",
    "Bearer tokens are sent in the Authorization header.",
    "https://example.com/path:with@colons",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
    "commit 3f6c9a52e1b0d7f1046c2a9e8d41a0c35b2e91d7",
    "uuid 5f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e5f",
]


@pytest.mark.parametrize(("text", "secret", "pattern"), MUST, ids=[m[2] + "-" + str(i) for i, m in enumerate(MUST)])
def test_secret_is_replaced(text: str, secret: str, pattern: str) -> None:
    counts: Counter[str] = Counter()
    out = redact(text, counts)
    assert secret not in out, out
    assert f"[REDACTED:{pattern}]" in out, out
    assert counts[pattern] >= 1


@pytest.mark.parametrize("text", MUST_NOT)
def test_look_alike_is_kept(text: str) -> None:
    counts: Counter[str] = Counter()
    assert redact(text, counts) == text
    assert not counts


def test_every_pattern_has_an_example() -> None:
    assert {p.name for p in PATTERNS} == {m[2] for m in MUST}


def test_only_the_value_goes_and_the_rest_reads_on() -> None:
    assert redact("password=hunter22 user=bob") == "password=[REDACTED:password] user=bob"
    assert redact(f"Authorization: Bearer {JWT}") == "Authorization: Bearer [REDACTED:jwt]"
    assert redact(f"{PEM}\nafter") == "[REDACTED:private-key]\nafter"


@pytest.mark.parametrize("hostile", ["a.a" * 100_000, "a_" * 100_000, "password" * 30_000, "password." * 30_000 + "=x1234",
                                     "sk-" * 60_000, "x://" * 50_000, "Bearer " * 30_000, "-----BEGIN RSA PRIVATE KEY-----" * 7000,
                                     ("password." * 10 + "=hunter22 ") * 20_000])
def test_linear_on_hostile_text(hostile: str) -> None:
    t0 = time.perf_counter()
    redact(hostile)
    assert time.perf_counter() - t0 < 2.0


def test_export_redacts_every_session_derived_string(home, run) -> None:
    out = []
    for line in claude_session_lines(cwd="/home/dev/shop"):
        rec = json.loads(line)
        if rec.get("uuid") == "u1":
            rec["message"]["content"] = f"deploy with OPENAI_API_KEY={OPENAI} please"
        elif rec.get("uuid") == "u2":
            rec["message"]["content"][0]["content"] = f"Authorization: Bearer {JWT}\n{PEM}"
        out.append(_line(rec))
    out.append(_line({"type": "custom-title", "customTitle": f"rotate {GITHUB}", "sessionId": CLAUDE_SID}))
    write_claude(home, out)
    assert run("scan", "-q").exit_code == 0
    assert run("checkpoint", "save", CLAUDE_SID, "--note", f"the key was {AWS_ID}").exit_code == 0
    for fmt in ("md", "json", "html"):
        plain = run("export", CLAUDE_SID, "--format", fmt)
        assert OPENAI in plain.stdout and "redacted" not in plain.stderr
        res = run("export", CLAUDE_SID, "--format", fmt, "--redact")
        assert res.exit_code == 0
        for secret in (OPENAI, JWT, "MIIEowIBAAKCAQEA1234abcd", GITHUB, AWS_ID):
            assert secret not in res.stdout, (fmt, secret)
        assert "[REDACTED:openai-key]" in res.stdout and "[REDACTED:github-token]" in res.stdout
        # The title and the checkpoint are each in the facts and in an event of their own: counted twice.
        assert res.stderr == ("voyager: redacted 7 matches (aws-access-key-id ×2, github-token ×2, jwt ×1, "
                              "openai-key ×1, private-key ×1)\n"), res.stderr
