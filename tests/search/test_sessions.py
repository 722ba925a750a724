"""Finding the session a person remembers: several words said in different messages of one session (issue #22).

Through the real CLI on Claude Code sessions in their real format: a query of several
terms matches a session when each term occurs in some event of it; phrases and CJK runs
keep their adjacency inside one event; filters and negations apply to events; terms
split across two sessions make neither a full match (a partial one, flagged); exit 1
only when no term occurs anywhere.
"""

from __future__ import annotations


import pytest

from tests.support.nocatalog import NoCatalog, sessions_read, varied_events
from tests.support.run import search_json
from tests.support.sessions import write_turn_sessions

#: Sessions, each a list of (role, text): ``user`` is a typed prompt, ``assistant`` the agent's
#: reply, ``tool`` a Bash call whose output is the text, ``command`` a Bash call of the text.
SESSIONS: dict[str, list[tuple[str, str]]] = {
    # The words are said in three different events: the prompt, a tool's output, the reply.
    "a1": [
        ("user", "the webhook tests fail again"),
        ("tool", "ERROR redis idempotency layer unreachable"),
        ("assistant", "I added a cache in front of it"),
    ],
    # Every word in one event (and nowhere else in the session).
    "b2": [("user", "write a note"), ("assistant", "webhook idempotency cache: the three go together")],
    # 数 and 据 in two different events; "connection" and "refused" too.
    "c3": [("user", "数字 and the connection pool"), ("assistant", "据点 was refused by upstream")],
    # Terms split across two sessions: neither holds both.
    "d4": [("user", "the zanzibar migration")],
    "e5": [("user", "the quokka rollout")],
}


@pytest.fixture
def remembered(home, run):
    write_turn_sessions(home, SESSIONS)
    assert run("scan").exit_code == 0


def _sessions(doc) -> set[str]:
    return {h["session_id"].partition(":")[2][:2] for h in doc["hits"]}


def test_words_said_in_different_events_find_the_session(remembered, run):
    res, doc = search_json(run, "--sessions", "webhook idempotency cache")
    assert res.exit_code == 0 and doc["match"] == "all" and res.stderr == ""
    assert _sessions(doc) == {"a1", "b2"} and doc["total"] == 2
    a1 = next(h for h in doc["hits"] if h["session_id"].startswith("claude:a1"))
    held = {t["term"]: t for t in a1["matched_terms"]}
    assert list(held) == ["webhook", "idempotency", "cache"]
    assert (held["webhook"]["kind"], held["idempotency"]["kind"], held["cache"]["kind"]) == (
        "user",
        "tool_result",
        "assistant",
    )
    assert a1["hit_count"] == 3
    # Event hits: the events of those sessions that say the words, the one event holding all three first.
    res, doc = search_json(run, "webhook idempotency cache")
    assert res.exit_code == 0 and doc["match"] == "all"
    first = doc["hits"][0]
    assert first["session_id"].startswith("claude:b2") and first["kind"] == "assistant"
    assert {(h["session_id"][7:9], h["kind"]) for h in doc["hits"][1:]} == {
        ("a1", "user"),
        ("a1", "tool_result"),
        ("a1", "assistant"),
    }
    assert doc["total"] == 4 == len(doc["hits"])


def test_a_person_sees_the_events_not_no_matches(remembered, run):
    # Filters apply to events: of the three words, tool output holds only "idempotency".
    res, doc = search_json(run, "webhook idempotency cache", "--kind", "tool")
    assert res.exit_code == 0 and doc["match"] == "partial" and [h["kind"] for h in doc["hits"]] == ["tool_result"]
    res = run("search", "--no-refresh", "webhook idempotency cache", "--kind", "tool")
    assert "no session holds all 3 terms" in res.stderr and "ERROR redis idempotency" in res.stdout
    res = run("search", "--no-refresh", "webhook idempotency")
    assert res.exit_code == 0 and "the webhook tests fail again" in res.stdout


def test_terms_split_across_sessions_are_a_partial_match(remembered, run):
    res, doc = search_json(run, "--sessions", "zanzibar quokka")
    assert res.exit_code == 0 and doc["match"] == "partial" and _sessions(doc) == {"d4", "e5"}
    assert res.stderr.count("\n") == 1 and "no session holds all 2 terms" in res.stderr
    assert all(len(h["matched_terms"]) == 1 for h in doc["hits"])
    res, doc = search_json(run, "zanzibar quokka")
    assert res.exit_code == 0 and doc["match"] == "partial" and doc["total"] == 2
    # A term found nowhere makes the others partial; no term anywhere is no match (exit 1).
    res, doc = search_json(run, "--sessions", "zanzibar migration nosuchword")
    assert res.exit_code == 0 and doc["match"] == "partial" and _sessions(doc) == {"d4"}
    # Sessions holding more of the terms come first: d4 holds two of three, e5 one.
    res, doc = search_json(run, "--sessions", "zanzibar migration quokka")
    assert doc["match"] == "partial" and [h["session_id"][7:9] for h in doc["hits"]] == ["d4", "e5"]
    assert [len(h["matched_terms"]) for h in doc["hits"]] == [2, 1]
    res, doc = search_json(run, "zanzibar migration quokka")
    assert [h["session_id"][7:9] for h in doc["hits"]] == ["d4", "e5"] and doc["total"] == 2
    res, doc = search_json(run, "--sessions", "nosuchword otherword")
    assert res.exit_code == 1 and doc["total"] == 0 and doc["hits"] == [] and doc["match"] == "all"
    assert run("search", "--no-refresh", "nosuchword otherword").exit_code == 1


@pytest.mark.parametrize("mode", [("--sessions",), ()])
def test_beside_words_said_nowhere_one_word_is_searched_as_itself(remembered, run, mode):
    """When every other term is said nowhere, the one that is matches as a partial match of them all: its own
    hits in its own order (every session holds one term), each row naming it, the others in ``terms``."""
    alone_res, alone = search_json(run, *mode, "webhook")
    for query in ("nosuchword webhook", "webhook nosuchword zzqqxx", '"not said anywhere" webhook'):
        res, doc = search_json(run, *mode, query)
        assert res.exit_code == 0 and doc["match"] == "partial", query
        assert doc["terms"] == _terms(query)
        assert "no session holds all" in res.stderr and res.stderr.count("\n") == 1
        rows = [(h["session_id"], h["seq"], h["snippet"]) for h in doc["hits"]]
        assert rows == [(h["session_id"], h["seq"], h["snippet"]) for h in alone["hits"]] and rows
        assert doc["total"] == alone["total"]
        if mode:
            assert all([t["term"] for t in h["matched_terms"]] == ["webhook"] for h in doc["hits"])
    # Filters and negations apply as to the word alone; where they leave nothing, nothing matches (exit 1).
    for words, narrowed in (("", ("--kind", "user")), (" -fail", ()), ("", ("--kind", "tool_call"))):
        res, doc = search_json(run, *mode, "nosuchword webhook" + words, *narrowed)
        alone_res, alone = search_json(run, *mode, "webhook" + words, *narrowed)
        assert [h["session_id"] for h in doc["hits"]] == [h["session_id"] for h in alone["hits"]], narrowed
        assert (res.exit_code, doc["total"]) == (alone_res.exit_code, alone["total"]), narrowed


def _terms(query: str) -> list[str]:
    """The terms JSON names for ``query`` (a quoted phrase keeps its quotes)."""
    import shlex

    return [f'"{t}"' if " " in t else t for t in shlex.split(query)]


def test_phrases_and_cjk_runs_never_match_across_events(remembered, run):
    # 数 and 据 are in the same session but different events: a CJK run keeps its adjacency.
    res, doc = search_json(run, "数据")
    assert res.exit_code == 1 and doc["total"] == 0
    res, doc = search_json(run, "--sessions", "数据 upstream")
    assert "c3" not in _sessions(doc) or doc["match"] == "partial"
    assert doc["match"] == "partial"
    # A quoted phrase likewise; unquoted, the two words are two terms and the session holds both.
    res, doc = search_json(run, "--sessions", '"connection refused" pool')
    assert doc["match"] == "partial"
    res, doc = search_json(run, "--sessions", "connection refused")
    assert doc["match"] == "all" and _sessions(doc) == {"c3"}


def test_filters_and_negations_apply_to_events(remembered, run):
    # kind:user keeps only prompts: "cache" is said only by the agent, so a1 no longer holds it.
    res, doc = search_json(run, "--sessions", "webhook cache kind:user")
    assert doc["match"] == "partial" and all(h["kind"] == "user" for h in doc["hits"])
    # A negation drops the events that say it, not the session: a1's tool output says "unreachable",
    # and a1 still holds "webhook" and "cache" elsewhere.
    res, doc = search_json(run, "--sessions", "webhook cache -unreachable")
    assert doc["match"] == "all" and _sessions(doc) == {"a1", "b2"}
    # ...but the dropped event's words no longer count: a1 says "webhook" only in a prompt that says "fail".
    res, doc = search_json(run, "--sessions", "webhook idempotency -fail")
    assert doc["match"] == "all" and _sessions(doc) == {"b2"}
    res, doc = search_json(run, "--sessions", "--provider", "codex", "webhook idempotency")
    assert res.exit_code == 1 and doc["total"] == 0


def test_one_term_and_or_queries_behave_as_before(remembered, run):
    res, doc = search_json(run, "idempotency")
    assert doc["total"] == 2 and doc["terms"] == ["idempotency"] and doc["match"] == "all"
    # An OR is one term: any of its words in one event.
    res, doc = search_json(run, "zanzibar OR quokka")
    assert doc["total"] == 2 and doc["match"] == "all"
    # Parentheses keep words together in one event: b2 says all three in one, a1 does not.
    res, doc = search_json(run, "--sessions", "(webhook idempotency) cache")
    assert _sessions(doc) == {"b2"}


def test_session_rows_in_the_terminal_show_where_each_term_was_said(remembered, run):
    res = run("search", "--no-refresh", "--sessions", "webhook idempotency cache")
    assert res.exit_code == 0 and res.stderr == "1-2 of 2 sessions\n"
    block = res.stdout.split("claude   a1")[1].split("resume:")[0]
    # The row shows one event; the other two terms each get a line naming the event that says it.
    assert sum(f"{w} (#" in block for w in ("webhook", "idempotency", "cache")) == 2


@pytest.mark.parametrize("query", ["webhook idempotency cache", "zanzibar migration quokka", "the webhook"])
def test_pages_add_up_to_the_whole(remembered, run, query):
    for mode in ([], ["--sessions"]):
        _, whole = search_json(run, *mode, query)
        keys = [(h["session_id"], h["seq"]) for h in whole["hits"]]
        paged = []
        for offset in range(whole["total"] + 1):
            _, page = search_json(run, *mode, "--limit", "1", "--offset", str(offset), query)
            assert page["total"] == whole["total"] and page["match"] == whole["match"]
            paged += [(h["session_id"], h["seq"]) for h in page["hits"]]
        assert paged == keys and len(keys) == whole["total"]


def test_sort_recent(remembered, run):
    # a1's last event is later than b2's.
    _, doc = search_json(run, "--sessions", "--sort", "recent", "webhook idempotency cache")
    assert [h["session_id"][7:9] for h in doc["hits"]] == ["a1", "b2"]
    _, doc = search_json(run, "--sort", "recent", "webhook idempotency cache")
    stamps = [h["timestamp"] for h in doc["hits"]]
    assert stamps == sorted(stamps, reverse=True) and doc["total"] == 4 == len(stamps)


def test_the_demo_query_finds_the_session(home, run):
    """The issue's example: in the bundled demo, the three words are said in different messages of one session."""
    import shutil

    from voyager_sessions.demo import CORPUS

    shutil.copytree(CORPUS / "claude", home / ".claude")
    shutil.copytree(CORPUS / "codex", home / ".codex")
    assert run("scan").exit_code == 0
    res = run("search", "--no-refresh", "webhook idempotency cache")
    assert res.exit_code == 0 and "No matches" not in res.stderr and "idempotency cache" in res.stdout
    _, doc = search_json(run, "webhook idempotency cache")
    assert doc["match"] == "all" and {h["session_id"] for h in doc["hits"]} == {
        "codex:019a3f2e-7b10-7c44-9e21-5d8a0b6c4f12"
    }
    _, doc = search_json(run, "--sessions", "webhook idempotency cache")
    assert doc["total"] == 1 and [t["term"] for t in doc["hits"][0]["matched_terms"]] == [
        "webhook",
        "idempotency",
        "cache",
    ]


# -- rare words weigh more; a description of any length is ranked over sessions (issue #34) -----------------

#: Sessions where what a person describes is said in ordinary sentences: function words everywhere, each topic's
#: own words in its session only.
DESCRIBED: dict[str, list[tuple[str, str]]] = {
    "w1": [
        ("user", "the nightly export keeps timing out and I do not know why"),
        ("tool", "ERROR export job exceeded 900s deadline after the bucket moved to eu-west-3"),
        ("assistant", "so the bucket is in another region now and the transfer is slow; I added a regional endpoint"),
    ],
    "w2": [
        ("user", "so I think the export of the invoices is fine and it is the email that is slow"),
        ("assistant", "I checked it and so it is: the mailer retries and the queue is full"),
    ],
    "w3": [
        ("user", "so and I and the and it is of to"),
        ("assistant", "I see, so it is the one to do and then the other"),
    ],
    "w4": [("user", "rename the variable and so on"), ("assistant", "done, I renamed it and it is the same")],
    "w5": [("user", "the tests of the parser and so"), ("assistant", "I ran the tests and it is green")],
    "w6": [
        ("user", "订单服务的支付回调一直重复触发"),
        ("assistant", "原因是回调处理超时，我加了幂等缓存，用Redis保存通知编号"),
    ],
    "w7": [("user", "会员服务的数据库迁移失败了"), ("assistant", "我把迁移拆成三步，先加字段再回填")],
}


@pytest.fixture
def described(home, run):
    write_turn_sessions(home, DESCRIBED)
    assert run("scan").exit_code == 0


def test_function_words_do_not_decide_a_partial_match(described, run):
    """No session holds every word: a session holding one rare word (``bucket``, ``regional``) comes before
    sessions holding many common ones (``the``, ``so``, ``and``, ``I``), which is how often they are said
    weighs each word (its idf), not how many of the query's words a session holds."""
    res, doc = search_json(run, "--sessions", "so I and the bucket it is")
    assert doc["match"] == "partial" and res.exit_code == 0
    first = doc["hits"][0]
    assert first["session_id"][7:9] == "w1", [h["session_id"][7:9] for h in doc["hits"]]
    # w3 holds six of the seven words, w1 five of them, bucket among them: by count, w3 came first.
    assert {t["term"] for t in first["matched_terms"]} >= {"bucket"}


def test_a_long_description_is_ranked_over_sessions(described, run):
    """A sentence of more words than any limit (a person describing the session) is matched over sessions, not
    as one needle event: the session it describes first, flagged partial (no session says every word)."""
    query = (
        "the one where the nightly export kept timing out after we moved the bucket to another region and "
        "I had to add a regional endpoint so it would finish"
    )
    assert len(set(query.split())) > 20
    for mode in ([], ["--sessions"]):
        res, doc = search_json(run, *mode, query)
        assert res.exit_code == 0 and doc["match"] == "partial", res.stderr
        assert doc["hits"][0]["session_id"][7:9] == "w1"
        assert "no session holds all" in res.stderr


def test_a_chinese_description_is_ranked_over_sessions(described, run):
    """A sentence written as Chinese is (no spaces) that no event holds as typed is read as its pairs of characters,
    matched over sessions with their idf: the session it describes first, flagged partial."""
    for mode in ([], ["--sessions"]):
        res, doc = search_json(run, *mode, "支付平台重复发送回调导致订单服务处理了两次，后来用Redis做了幂等")
        assert res.exit_code == 0 and doc["match"] == "partial", res.stderr
        assert doc["hits"][0]["session_id"][7:9] == "w6" and "支付" in doc["terms"] and "redis" in doc["terms"]
        assert doc["hits"][0]["highlights"]  # the pairs it holds are lit


def test_a_cjk_run_said_as_typed_or_short_stays_a_needle(described, run):
    res, doc = search_json(run, "--sessions", "订单服务的支付回调一直重复触发")  # held as typed: exactly where it is
    assert (
        res.exit_code == 0
        and doc["match"] == "all"
        and _sessions(doc) == {"w6"}
        and doc["terms"] == ["订单服务的支付回调一直重复触发"]
    )
    res, doc = search_json(run, "--sessions", "服务的数据迁移")  # seven characters, said nowhere as typed: a needle
    assert res.exit_code == 1 and doc["hits"] == []


# -- a pasted command, log line or manifest finds its session (issue #34; docs/query.md) ------------------------

PASTED: dict[str, list[tuple[str, str]]] = {
    "p1": [
        ("user", "deploy the marketing site"),
        ("command", "rsync -avz --delete --exclude-from=.rsyncignore build/ deploy@web1:/srv/marketing-site/"),
        ("assistant", "the avz flags keep permissions; the delete pass is what removed the uploads"),
    ],
    "p2": [
        ("user", "why is the rollout stuck"),
        ("tool", "metadata:\n  labels:\n    label: team/web:env:prod\nkind: Deployment\nspec:\n  replicas: 3"),
    ],
    "p3": [
        ("user", "nginx returns 502"),
        (
            "tool",
            "2026/05/11 09:12:44 [error] 3121#3121: *88 upstream prematurely closed connection, client: 10.0.4.17",
        ),
    ],
    "p4": [("user", "list the pods"), ("command", "kubectl get pods -n prod | grep -v Running")],
    # Decoys: the same words, not the same lines; and the words the pasted options would exclude.
    "p5": [
        ("user", "rsync the docs, avz is what we always use, and delete nothing; the team label is web"),
        ("assistant", "prod runs 3 replicas of the Deployment; nginx upstream connection closed at 09:12"),
    ],
}

PASTES = {
    "rsync -avz --delete --exclude-from=.rsyncignore build/ deploy@web1:/srv/marketing-site/": "p1",
    "label: team/web:env:prod": "p2",
    "kind: Deployment replicas: 3": "p2",
    "[error] 3121#3121: *88 upstream prematurely closed connection, client: 10.0.4.17": "p3",
    "kubectl get pods -n prod | grep -v Running": "p4",
}


@pytest.fixture
def pasted(home, run):
    write_turn_sessions(home, PASTED)
    assert run("scan").exit_code == 0


@pytest.mark.parametrize("query", list(PASTES))
@pytest.mark.parametrize("mode", [[], ["--sessions"]])
def test_a_pasted_command_log_line_or_manifest_finds_its_session(pasted, run, query, mode):
    """Options and ``key: value`` pairs are text: the session where the line was said comes first (its event
    holds the whole line), exit 0; read as exclusions and filters they found nothing or the decoy."""
    res, doc = search_json(run, *mode, query)
    assert res.exit_code == 0, res.stderr
    assert doc["hits"][0]["session_id"][7:9] == PASTES[query], [h["session_id"][7:9] for h in doc["hits"]]


def test_an_exclusion_written_as_one_still_excludes(pasted, run):
    _, doc = search_json(run, "--sessions", "rsync -marketing")
    assert _sessions(doc) == {"p5"}  # p1 says rsync only in the event that says marketing
    _, doc = search_json(run, "--sessions", "rsync NOT avz")
    assert _sessions(doc) == set()  # both sessions say avz wherever they say rsync


# -- counts and ranks against a brute force, on a corpus where sessions hold different words ---------------


WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma"]


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    """40 sessions, each drawing its events' words from its own subset of WORDS (four to six of them): many hold
    some of a query's words and not others, so totals are counted over some sessions and left out of others."""
    from voyager_sessions.search.engine import Searcher
    from voyager_sessions.search.index import SearchIndex

    index = SearchIndex(tmp_path_factory.mktemp("varied") / "index")
    events = varied_events(11, 40, "v", WORDS, least_words=4, events=(3, 30), most_words=6)
    index.add_events(events)
    index.commit()
    return Searcher(index, NoCatalog(), ["claude"]), events


@pytest.mark.parametrize("narrow", [0, 500])
@pytest.mark.parametrize("query", ["alpha beta", "alpha beta gamma", "kappa sigma", "alpha beta gamma delta kappa"])
def test_event_totals_are_the_chosen_sessions_events_saying_a_term(varied, query, narrow, monkeypatch):
    """The total of an event search is every event of the sessions holding all the words that says one of them,
    however it is counted (one count less the sessions left out, or the chosen sessions' own; every term
    aggregated everywhere, or within the narrowest term's sessions)."""
    from voyager_sessions.search import sessions
    from voyager_sessions.search.engine import SearchOptions

    monkeypatch.setattr(sessions, "NARROW_SESSIONS", narrow)
    searcher, events = varied
    words = query.split()
    held: dict[str, set[str]] = {}
    for ev in events:
        held.setdefault(ev.session, set()).update(w for w in words if w in ev.text.split())
    chosen = {sid for sid, ws in held.items() if len(ws) == len(words)}
    assert chosen and len(chosen) < len([sid for sid, ws in held.items() if ws])  # some sessions are left out
    want = sum(1 for ev in events if ev.session in chosen and set(words) & set(ev.text.split()))
    res = searcher.search(query, SearchOptions(limit=5))
    assert res.match == "all" and res.total == want
    assert {h.session_id for h in res.hits} <= chosen


def test_both_ways_of_counting_are_taken(varied, monkeypatch):
    """Not vacuous: on this corpus some totals are one count less the sessions left out (some of which hold
    several of the words), others the chosen sessions' own."""
    from voyager_sessions.search import sessions
    from voyager_sessions.search.engine import Searcher, SearchOptions

    monkeypatch.setattr(sessions, "NARROW_SESSIONS", 0)  # every term aggregated everywhere
    searcher, _ = varied
    seen: list[list[int]] = []
    real = Searcher._saying_any

    def spy(self, s, any_term, ids, cov):
        seen.append([cov.held[sid] for sid in ids])
        return real(self, s, any_term, ids, cov)

    monkeypatch.setattr(Searcher, "_saying_any", spy)
    for query in ["alpha beta", "alpha beta gamma", "kappa sigma", "alpha beta gamma delta kappa"]:
        searcher.search(query, SearchOptions(limit=5))
    assert 0 < len(seen) < 4, seen  # subtracted for some queries, counted per session for the others
    assert any(n >= 2 for held in seen for n in held)  # a left-out session holding several of the words


@pytest.mark.parametrize("mode", [[], ["sessions"]])
@pytest.mark.parametrize(
    "query", ["alpha beta", "alpha beta gamma", "kappa sigma", "alpha beta gamma delta kappa", "beta -gamma delta"]
)
def test_looking_within_the_narrowest_terms_sessions_changes_nothing(varied, query, mode, monkeypatch):
    """The other terms aggregated only in the sessions of the narrowest (a rare word beside common ones): the
    same hits, scores, totals and matched terms as every term aggregated everywhere."""
    from voyager_sessions.search import sessions
    from voyager_sessions.search.engine import SearchOptions

    searcher, _ = varied
    opts = SearchOptions(limit=50, sessions=bool(mode))
    seen = []
    real = sessions._within

    def spy(*a, **kw):
        cov = real(*a, **kw)
        seen.append(cov is not None)
        return cov

    monkeypatch.setattr(sessions, "_within", spy)
    narrow = searcher.search(query, opts)
    monkeypatch.setattr(sessions, "NARROW_SESSIONS", 0)
    everywhere = searcher.search(query, opts)
    assert seen and all(seen)  # the narrow way was taken, and found the answer
    assert narrow.match == everywhere.match == "all" and narrow.total == everywhere.total > 0

    def rows(res):
        return [
            (h.session_id, h.seq, round(h.score, 4), h.hit_count, [(t.term, t.seq) for t in h.matched_terms or []])
            for h in res.hits
        ]

    assert rows(narrow) == rows(everywhere)


@pytest.mark.parametrize(("limit", "offset"), [(5, 0), (10, 5), (400, 0)])
@pytest.mark.parametrize("query", ["alpha beta", "alpha beta gamma", "kappa sigma"])
def test_common_words_whose_events_fill_the_page_skip_the_sessions(varied, query, limit, offset, monkeypatch):
    """When every word is common and the events holding them all fill the page, that page is the one the full
    search returns, with a lower bound for a total; a page past those events is counted in full."""
    from voyager_sessions.search import tiers
    from voyager_sessions.search.engine import SearchOptions

    searcher, _ = varied
    opts = SearchOptions(limit=limit, offset=offset)
    monkeypatch.setattr(tiers, "WIDE", 10**12)
    full = searcher.search(query, opts)
    monkeypatch.setattr(tiers, "WIDE", 1)
    fast = searcher.search(query, opts)
    assert fast.match == full.match == "all"
    assert [(h.session_id, h.seq, round(h.score, 4)) for h in fast.hits] == [
        (h.session_id, h.seq, round(h.score, 4)) for h in full.hits
    ]
    assert full.total_exact
    if limit == 400:  # more than the events holding every word: counted as before
        assert fast.total_exact and fast.total == full.total
    else:
        assert not fast.total_exact and offset + limit <= fast.total <= full.total


@pytest.mark.parametrize(("limit", "offset"), [(5, 0), (5, 5), (100, 0)])
@pytest.mark.parametrize("query", ["alpha beta", "alpha beta gamma", "kappa sigma", "beta -gamma delta"])
def test_common_words_with_sessions_list_those_saying_them_together_newest_first(
    varied, query, limit, offset, monkeypatch
):
    """Every word common (tiers.WIDE lowered): each is scored as said once wherever said, so the sessions where
    one event says them all come first, newest first; when they fill the page it is built from them alone, and
    is the page the full aggregation builds (the total then a lower bound)."""
    from voyager_sessions.search import tiers
    from voyager_sessions.search.engine import Searcher, SearchOptions

    searcher, events = varied
    latest: dict[str, float] = {}
    for ev in events:
        latest[ev.session] = max(latest.get(ev.session, 0.0), ev.ts or 0.0)
    monkeypatch.setattr(
        searcher.catalog, "latest_of", lambda ids: {i: latest[i] for i in ids if i in latest}, raising=False
    )
    monkeypatch.setattr(tiers, "WIDE", 1)
    opts = SearchOptions(sessions=True, limit=limit, offset=offset)
    fast = searcher.search(query, opts)
    monkeypatch.setattr(Searcher, "_together_first", lambda self, *a: None)
    full = searcher.search(query, opts)

    def rows(res):
        return [
            (h.session_id, h.seq, round(h.score, 4), h.hit_count, [(t.term, t.seq) for t in h.matched_terms or []])
            for h in res.hits
        ]

    assert rows(fast) == rows(full) and full.total_exact
    if fast.total_exact:  # the sessions saying them together did not fill the page: the full search answered
        assert fast.total == full.total
    else:
        assert offset + limit <= fast.total <= full.total
        shown = [latest[h.session_id] for h in fast.hits]
        assert shown == sorted(shown, reverse=True)  # newest first


def test_the_together_first_page_is_taken(varied, monkeypatch):
    """Not vacuous: on this corpus a short page of common words is built from the sessions saying them together."""
    from voyager_sessions.search import tiers
    from voyager_sessions.search.engine import SearchOptions

    searcher, _ = varied
    monkeypatch.setattr(tiers, "WIDE", 1)
    assert not searcher.search("alpha beta", SearchOptions(sessions=True, limit=5)).total_exact


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """150 sessions each saying one word once in a prompt: 120 say ``alpha``, 30 ``beta``. No session holds both,
    so ``alpha beta`` matches partially in two runs of equal score (the 30 rarer ``beta`` sessions first)."""
    from voyager_sessions.core.model import Event
    from voyager_sessions.search.engine import Searcher
    from voyager_sessions.search.index import SearchIndex

    index = SearchIndex(tmp_path_factory.mktemp("tied") / "index")
    events = [
        Event(
            session=f"claude:t{s:03d}",
            seq=0,
            kind="user",
            origin="human",
            text="alpha filler" if s < 120 else "beta filler",
            ts=1_700_000_000.0 + s,
        )
        for s in range(150)
    ]
    index.add_events(events)
    index.commit()
    return Searcher(index, NoCatalog(), ["claude"])


@pytest.mark.parametrize(("offset", "limit"), [(0, 10), (25, 10), (28, 4), (30, 20), (140, 20), (0, 150)])
def test_equal_ranks_are_newest_first_on_every_page(tied, offset, limit, monkeypatch):
    """Sessions of equal rank are newest first, equal recency by id, whatever page is asked: a page is the slice
    of the whole ranking even where a run of equal rank starts before it or runs past it (the catalog is asked
    only for the newest of each run the page reaches)."""
    import random

    from voyager_sessions.search.engine import SearchOptions

    rng = random.Random(5)
    latest = {f"claude:t{s:03d}": float(rng.randint(0, 40)) for s in range(150)}  # many equal: ties go by id
    asked: list[tuple[int, int]] = []
    newest = type(tied.catalog).newest

    def counting_newest(self, ids, n):
        asked.append((len(ids), n))
        return newest(self, ids, n)

    monkeypatch.setattr(tied.catalog, "latest_of", lambda ids: {i: latest[i] for i in ids if i in latest})
    monkeypatch.setattr(type(tied.catalog), "newest", counting_newest)
    whole = tied.search("alpha beta", SearchOptions(sessions=True, limit=150))
    assert whole.match == "partial" and whole.total == 150
    beta = sorted((f"claude:t{s:03d}" for s in range(120, 150)), key=lambda sid: (-latest[sid], sid))
    alpha = sorted((f"claude:t{s:03d}" for s in range(120)), key=lambda sid: (-latest[sid], sid))
    assert [h.session_id for h in whole.hits] == beta + alpha
    asked.clear()
    page = tied.search("alpha beta", SearchOptions(sessions=True, limit=limit, offset=offset))
    assert [h.session_id for h in page.hits] == (beta + alpha)[offset : offset + limit]
    assert page.total == 150
    # Each run the page reaches is asked for as many of its newest as the page shows of it, no more.
    end = min(offset + limit, 150)
    want = ([(30, min(end, 30))] if offset < 30 else []) + ([(120, end - 30)] if end > 30 else [])
    assert asked == want


@pytest.mark.parametrize(("offset", "limit"), [(0, 5), (7, 30), (100, 50), (380, 40)])
def test_a_partial_event_page_is_the_slice_of_the_whole_ranking(varied, offset, limit):
    """No session holds every term (one is said nowhere): events of sessions holding more of the query come first
    (each word counting its idf: a rarer word more), a level at a time, each level counted only when a page
    reaches it; every page is that slice of the whole ranking and the total is every event saying a term."""
    from voyager_sessions.search.engine import SearchOptions
    from voyager_sessions.search.sessions import idfs

    searcher, events = varied
    query = "alpha beta gamma delta kappa sigma nosuchword"
    whole = searcher.search(query, SearchOptions(limit=10_000))
    saying = [ev for ev in events if set(ev.text.split()) & set(WORDS)]
    assert whole.match == "partial" and whole.total == len(saying) == len(whole.hits)
    held = {ev.session: set() for ev in events}
    for ev in events:
        held[ev.session] |= set(ev.text.split())
    idf = dict(zip(WORDS, idfs([sum(w in ev.text.split() for ev in events) for w in WORDS], len(events))))
    weight = {sid: round(sum(idf[w] for w in words), 9) for sid, words in held.items()}
    levels = [weight[h.session_id] for h in whole.hits]
    assert levels == sorted(levels, reverse=True) and len(set(levels)) > 1
    page = searcher.search(query, SearchOptions(limit=limit, offset=offset))

    def ranks(hits):  # events of equal score may be any of them (which ones Tantivy keeps at a page's edge)
        return [(weight[h.session_id], round(h.score, 4)) for h in hits]

    assert ranks(page.hits) == ranks(whole.hits)[offset : offset + limit] and page.hits
    assert {(h.session_id, h.seq) for h in page.hits} <= {(h.session_id, h.seq) for h in whole.hits}
    assert page.total == whole.total


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize(
    "query", ["alpha beta", "alpha beta gamma delta kappa sigma", "kappa sigma", "beta -gamma delta", "alpha zzqx"]
)
def test_rows_read_only_where_asked_are_the_rows_read_everywhere(varied, query, wide, monkeypatch):
    """``Searcher.search(rows=…)`` (meaning's fusion reads the word ranking deeper than it shows): told the ranked
    sessions as bare rows, the rows it names are read exactly as a search reading every row reads them, in the
    same places; the others stay bare (the session, its score and nothing read), and the order, total and match
    level are the same. A search of another kind reads every row."""
    from voyager_sessions.core.model import SearchResult
    from voyager_sessions.search import tiers
    from voyager_sessions.search.engine import SearchOptions

    if wide:
        monkeypatch.setattr(tiers, "WIDE", 1)  # every word common: the together-first page where it fills
    searcher, _ = varied
    opts = SearchOptions(limit=12, sessions=True)
    read = sessions_read(monkeypatch)
    full = searcher.search(query, opts)
    assert len(full.hits) >= 6, query  # the corpus has the sessions to leave some bare
    told: list[SearchResult] = []

    def every_third(bare: SearchResult) -> set[str]:
        told.append(bare)
        return {h.session_id for h in bare.hits[::3]}

    read.clear()
    some = searcher.search(query, opts, rows=every_third)
    if query == "alpha zzqx":  # one term said anywhere: searched as that term alone, every row read as always
        assert not told and some == full
        return
    assert len(told) == 1
    wanted = {h.session_id for h in told[0].hits[::3]}
    assert set(read) == wanted  # no other session's events were looked up
    assert [h.session_id for h in told[0].hits] == [h.session_id for h in full.hits]
    assert (some.total, some.match, some.total_exact, some.terms) == (
        full.total,
        full.match,
        full.total_exact,
        full.terms,
    )
    assert [h.session_id for h in some.hits] == [h.session_id for h in full.hits]
    for got, want in zip(some.hits, full.hits):
        if got.session_id in wanted:
            assert got == want
        else:
            assert (got.score, got.snippet, got.matched_terms, got.hit_count) == (want.score, "", None, None)


@pytest.mark.parametrize("words", [["alpha", "beta"], WORDS, ["sigma", "alpha", "zzqx", "kappa"]])
def test_any_term_in_one_session_clause_by_clause_ranks_as_the_union_does(varied, words):
    """``Compiler.any_in_session`` (each term narrowed to the session, then their union) matches the events
    ``in_session(any_of(terms))`` matches, with the same scores to the bit and in the same order, ties included:
    a session's row is the same event either way."""
    from voyager_sessions.search.syntax import parse

    searcher, events = varied
    s = searcher.index.searcher()
    c = searcher.compiler
    qs = [c.node(parse(w).root) for w in words]
    compared = 0
    for sid in sorted({ev.session for ev in events}):
        union = s.search(c.in_session(c.any_of(qs), sid), limit=100, count=False, weight_by_field="w").hits
        each = s.search(c.any_in_session(qs, sid), limit=100, count=False, weight_by_field="w").hits
        assert [(score, a.segment_ord, a.doc) for score, a in each] == [
            (score, a.segment_ord, a.doc) for score, a in union
        ], sid
        compared += len(union)
    assert compared > 100


@pytest.mark.parametrize("words", [["alpha", "beta"], WORDS, ["sigma", "zzqx"]])
def test_any_term_among_sessions_clause_by_clause_matches_as_the_union_does(varied, words):
    """``Compiler.any_among`` (each term narrowed to the sessions, then their union) matches the events
    ``restricted(any_of(terms), ids)`` matches, scored alike: the same counts per session (``hit_count``)."""
    from voyager_sessions.search import sessions
    from voyager_sessions.search.syntax import parse

    searcher, events = varied
    s = searcher.index.searcher()
    c = searcher.compiler
    qs = [c.node(parse(w).root) for w in words]
    ids = sorted({ev.session for ev in events})[::3]
    union = s.search(c.restricted(c.any_of(qs), ids), limit=10_000, count=True, weight_by_field="w")
    each = s.search(c.any_among(qs, ids), limit=10_000, count=True, weight_by_field="w")
    assert [(score, a.segment_ord, a.doc) for score, a in each.hits] == [
        (score, a.segment_ord, a.doc) for score, a in union.hits
    ]
    assert len(union.hits) > 20
    assert (
        sessions.evidence(s, c.any_among(qs, ids)).counts
        == sessions.evidence(s, c.restricted(c.any_of(qs), ids)).counts
    )


# -- a server's aggregations keyed by the integer session key (search.sessions.KeyMap) ---------------


@pytest.mark.parametrize("mode", [[], ["sessions"]])
@pytest.mark.parametrize(
    "query", ["alpha beta", "alpha beta gamma", "kappa sigma", "alpha beta gamma delta kappa", "beta -gamma delta"]
)
def test_aggregating_by_session_key_changes_nothing(varied, query, mode, monkeypatch):
    """A server's readers aggregate by ``sk`` and map the keys back to ids: the same hits, scores, totals and
    matched terms as aggregating by the id's strings, on every page, with and without looking within the
    narrowest term's sessions."""
    import msgspec

    from voyager_sessions.search import sessions
    from voyager_sessions.search.engine import SearchOptions

    searcher, _ = varied
    for narrow in (0, 500):
        monkeypatch.setattr(sessions, "NARROW_SESSIONS", narrow)
        for offset, limit in ((0, 50), (0, 3), (3, 4)):
            opts = SearchOptions(limit=limit, offset=offset, sessions=bool(mode))
            monkeypatch.setattr(sessions, "KEYS", None)
            by_id = msgspec.json.encode(searcher.search(query, opts))
            keys = sessions.KeyMap()
            monkeypatch.setattr(sessions, "KEYS", keys)
            by_key = msgspec.json.encode(searcher.search(query, opts))
            assert by_key == by_id
            assert keys._ids  # not vacuous: the keys were aggregated and mapped


def test_the_key_map_learns_sessions_committed_after_it(tmp_path, monkeypatch):
    """Keys a map lacks (sessions committed after it learnt the index) are learnt from the index itself, with
    no catalog (``NoCatalog``: sessions indexed before their state rows); each id is hashed once."""
    from voyager_sessions.core.model import Event
    from voyager_sessions.search import index as ix, sessions
    from voyager_sessions.search.engine import Searcher, SearchOptions

    index = ix.SearchIndex(tmp_path / "index")

    def add(sid: str) -> None:
        index.add_events(
            [Event(session=sid, seq=i, kind="user", origin="human", text="alpha beta", ts=1.7e9 + i) for i in range(2)]
        )
        index.commit()
        index.index.reload()

    add("claude:one")
    keys = sessions.KeyMap()
    monkeypatch.setattr(sessions, "KEYS", keys)
    searcher = Searcher(index, NoCatalog(), ["claude"])
    opts = SearchOptions(limit=10, sessions=True)
    assert [h.session_id for h in searcher.search("alpha beta", opts).hits] == ["claude:one"]
    hashed: list[str] = []
    real = ix.session_key.__wrapped__
    monkeypatch.setattr(ix.session_key, "__wrapped__", lambda sid: hashed.append(sid) or real(sid))
    add("claude:two")
    assert {h.session_id for h in searcher.search("alpha beta", opts).hits} == {"claude:one", "claude:two"}
    assert hashed == ["claude:two"]
    assert sorted(keys._ids.values()) == ["claude:one", "claude:two"]


@pytest.mark.parametrize("keyed", [False, True])
def test_weights_aggregated_kind_by_kind_are_the_heaviest_kind_in_each_session(varied, keyed, monkeypatch):
    """A term's evidence with kind weights, from one aggregation by kind then by session (``_by_kind``): per
    session the events saying it and the heaviest kind among them, as a brute force over the events finds them
    and as the per-bucket ``max`` gives them; when Tantivy refuses its buckets, the ``max`` answers from then on."""
    import tantivy

    from voyager_sessions.search import parts, sessions
    from voyager_sessions.search.index import KIND_WEIGHTS

    searcher, events = varied
    monkeypatch.setattr(sessions, "KEYS", sessions.KeyMap() if keyed else None)
    monkeypatch.setattr(sessions, "_BY_KIND", [True])
    s = searcher.index.searcher()
    for word in WORDS[:3]:
        q = tantivy.Query.term_query(parts.schema(), "body", word)
        counts: dict[str, int] = {}
        heaviest: dict[str, int] = {}
        for ev in events:
            if word in ev.text.split():
                counts[ev.session] = counts.get(ev.session, 0) + 1
                heaviest[ev.session] = max(heaviest.get(ev.session, 0), KIND_WEIGHTS[ev.kind])
        assert len(set(heaviest.values())) > 1  # not vacuous: sessions differ in their heaviest kind
        by_kind = sessions.evidence(s, q, weights=True)
        assert by_kind.counts == counts and by_kind.weights == heaviest
        monkeypatch.setattr(sessions, "_BY_KIND", [False])
        assert sessions.evidence(s, q, weights=True) == by_kind  # the max of each bucket
        monkeypatch.setattr(sessions, "_BY_KIND", [True])

    class Refusing:
        """A searcher whose aggregation by kind makes too many buckets (a history of sessions beyond count)."""

        def __getattr__(self, name):
            return getattr(s, name)

        def aggregate(self, query, spec):
            if "k" in spec:
                raise ValueError("Aborting aggregation because bucket limit was exceeded")
            return s.aggregate(query, spec)

    q = tantivy.Query.term_query(parts.schema(), "body", WORDS[0])
    assert sessions.evidence(Refusing(), q, weights=True) == sessions.evidence(s, q, weights=True)
    assert sessions._BY_KIND == [False]
