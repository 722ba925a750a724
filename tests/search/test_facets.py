"""Facets of a search (``search.facets``, through ``api.Reader.facets``): every matching session, and its weeks.

An index of 640 small sessions (more than the 500 rows the web page's counts used to be
taken from), built directly as the bench builds its corpora: the facets name the very
sessions a grouped search lists (one term, several terms, filters, a partial match), and a
session counts in each week it has a matching event, which is what narrowing to that week finds.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from voyager_sessions.core.model import Event, Session, SessionRecord
from voyager_sessions.core.paths import DataDir

N_SESSIONS = 640
#: Mondays, UTC: the two weeks the events fall in.
WEEK_A = datetime(2026, 11, 9, 12, tzinfo=timezone.utc).timestamp()
WEEK_B = datetime(2026, 11, 16, 12, tzinfo=timezone.utc).timestamp()
PROVIDERS = ("claude", "codex", "gemini")


def _session(i: int) -> tuple[Session, list[Event]]:
    provider = PROVIDERS[i % 3]
    sid = f"{provider}:s{i:04d}"
    # Every session says "deploy"; every other one also "rollback" (in another event); one in five says
    # "deploy" again a week later; every seventh holds "quokka" alone.
    texts = [("user", "please deploy the service"), ("assistant", "rollback ready" if i % 2 == 0 else "done")]
    if i % 7 == 0:
        texts.append(("assistant", "quokka"))
    events = [
        Event(session=sid, seq=k, kind="message", origin=role, text=text, ts=WEEK_A + i + k)
        for k, (role, text) in enumerate(texts)
    ]
    if i % 5 == 0:
        events.append(
            Event(session=sid, seq=len(events), kind="message", origin="user", text="deploy again", ts=WEEK_B + i)
        )
    repo = f"github.com/acme/p{i % 4}" if i % 4 else None
    sess = Session(id=sid, provider=provider, native_id=f"s{i:04d}", cwd=f"/home/dev/p{i % 4}", git_repo=repo)
    return sess, events


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    from voyager_sessions.api import Reader
    from voyager_sessions.search.index import SearchIndex
    from voyager_sessions.store.state import StateStore

    ddir = DataDir(tmp_path_factory.mktemp("facets"))
    index = SearchIndex(ddir.index)
    records = []
    for i in range(N_SESSIONS):
        sess, events = _session(i)
        index.add_events(events)
        records.append(SessionRecord(session=sess, events=len(events)))
    index.commit()
    index.close()
    store = StateStore(ddir.state_db)
    store.commit_scan(sessions=records)
    store.close()
    r = Reader(ddir)
    yield r
    r.close()


def _grouped(reader, query: str, **opts) -> set[str]:
    from voyager_sessions.search.engine import SearchOptions

    res = reader.search(query, SearchOptions(sessions=True, limit=10_000, **opts))
    assert res.total == len(res.hits)
    return {h.session_id for h in res.hits}


@pytest.mark.parametrize(
    ("query", "opts"),
    [
        ("deploy", {}),
        ("deploy rollback", {}),  # several terms: the sessions holding each (in different events)
        ("rollback", {"providers": ["codex"]}),
        ("deploy -rollback", {}),
        ("quokka rollback", {}),
        ("deploy", {"where": {"repo": "acme/p1"}}),  # --repo acme/p1
    ],
)
def test_the_facets_name_every_session_a_grouped_search_lists(reader, query, opts):
    from voyager_sessions.search.engine import SearchOptions

    found = reader.facets(query, SearchOptions(sessions=True, **opts))
    assert set(found.sessions) == _grouped(reader, query, **opts)
    assert len(found.sessions) == len(set(found.sessions))


def test_all_640_sessions_are_counted_not_a_window_of_them(reader):
    from voyager_sessions.search.engine import SearchOptions

    found = reader.facets("deploy", SearchOptions())
    assert len(found.sessions) == N_SESSIONS and found.match == "all"


def test_a_partial_match_is_flagged_as_the_ranking_flags_it(reader):
    from voyager_sessions.search.engine import SearchOptions

    found = reader.facets("quokka zanzibarish", SearchOptions())
    assert found.match == "partial" and len(found.sessions) == len(range(0, N_SESSIONS, 7))


def test_a_session_counts_in_each_week_it_has_a_matching_event(reader):
    from voyager_sessions.search.engine import SearchOptions

    found = reader.facets("deploy", SearchOptions())
    mondays = {
        datetime.fromtimestamp(ms / 1000, timezone.utc).date().isoformat(): ids for ms, ids in found.weeks.items()
    }
    assert sorted(mondays) == ["2026-11-09", "2026-11-16"]
    assert len(mondays["2026-11-09"]) == N_SESSIONS
    assert len(mondays["2026-11-16"]) == len(range(0, N_SESSIONS, 5))
    # What narrowing to a week finds: the same sessions.
    assert set(mondays["2026-11-16"]) == _grouped(reader, "deploy", since="2026-11-16", until="2026-11-22")


def test_projects_are_the_repo_else_the_cwd(reader):
    projects = reader.projects(["claude:s0000", "codex:s0001", "nobody:none"])
    assert projects == {"claude:s0000": "/home/dev/p0", "codex:s0001": "github.com/acme/p1"}


def test_a_bad_query_is_the_one_line_error(reader):
    from voyager_sessions.core.errors import UserError
    from voyager_sessions.search.engine import SearchOptions

    with pytest.raises(UserError, match="bad query"):
        reader.facets("provider:nosuchagent deploy", SearchOptions())
