"""judged: search quality on the judged set (issue #22), beside fast-resume's; the floor that gates CI.

The corpus (``bench.judged.corpus``: 150 sessions as Claude Code, Codex and OpenCode
files under one fake HOME) is indexed through the real scan, ``voyager scan`` in a
child process whose HOME points at it, nothing overridden. Every query of
``bench/judged/queries.json`` then runs through the application API exactly as
``voyager search QUERY --sessions --json`` runs it (``Reader.search`` with
``SearchOptions(sessions=True)``; one query per class also through the CLI, which must
give the same sessions in the same order: the CLI's runs go to one ``voyager serve``). The rank of the one target among the first
ten sessions gives S@1, S@5 and MRR@10 per class.

Quality does not depend on the machine's load, so unlike timings it is enforced: each
class's metric below its floor in ``bench/quality_floor.json`` is a failed check and a
non-zero exit, in ``--quick`` too. The full run also runs the same queries through
fast-resume's ``fr`` on the same HOME (``bench.judged.fastresume``) and puts its numbers
beside Voyager's; without ``fr`` that part is skipped with the reason in a note.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import msgspec

from bench import REPO_ROOT
from bench.context import Context
from bench.judged import corpus, fastresume
from bench.judged.metrics import DEPTH, NAMES, ClassScore, rank_of, score
from bench.judged.queries import CLASSES, JudgedQuery, load
from bench.model import Check, Metric, Reference, ScenarioResult
from bench.util import child_env, voyager_command

FLOOR_PATH = REPO_ROOT / "bench" / "quality_floor.json"


class Floors(msgspec.Struct, kw_only=True):
    about: str
    #: class -> metric name ("S@1", "S@5", "MRR@10") -> the lowest value that passes.
    voyager: dict[str, dict[str, float]]
    #: The same with ``--meaning`` (checked where the model is installed), and where they came from.
    voyager_meaning: dict[str, dict[str, float]] = {}
    about_meaning: str = ""


class Embedded(msgspec.Struct, kw_only=True):
    """What ``voyager scan --meaning`` did to the judged corpus: its seconds and the check of its result."""

    seconds: float
    check: Check


class Fresh(msgspec.Struct, kw_only=True):
    """The judged corpus as a fresh history made searchable by meaning: ``voyager scan`` into an empty data dir,
    then ``voyager scan --meaning`` (the meaning scenario reports it in ``--quick`` rather than make another)."""

    sessions: int
    scan_s: float
    meaning_s: float
    check: Check


def load_floors(path: Path = FLOOR_PATH) -> Floors:
    return msgspec.json.decode(path.read_bytes(), type=Floors)


def _key(session_id: str) -> str:
    # Voyager names a session "<provider>:<native id>"; the generated native ids are the corpus's.
    return session_id.partition(":")[2] or session_id


def _voyager_ranked(
    data_dir: Path, queries: list[JudgedQuery], by_id: dict[str, str], rejected: list[str], *, meaning: bool = False
) -> dict[str, list[str]]:
    """Query id -> the session keys Voyager ranks, best first, through the API ``voyager search --sessions`` uses
    (``meaning``: ``--sessions --meaning``'s).

    A query the language rejects finds nothing, as for a person; its id goes to ``rejected``.
    """
    from voyager_sessions.api import parse_query, reader
    from voyager_sessions.core.errors import VoyagerError
    from voyager_sessions.search.engine import SearchOptions

    out: dict[str, list[str]] = {}
    opts = SearchOptions(limit=DEPTH, sessions=True)
    with reader(data_dir) as r:
        for q in queries:
            try:
                if meaning:
                    hits = r.search_meaning(q.query, opts, parse_query(q.query)).hits
                else:
                    hits = r.search(q.query, opts).hits  # parsed once; a malformed query is a UserError
            except VoyagerError:
                rejected.append(q.id)
                hits = []
            out[q.id] = [by_id.get(_key(h.session_id), h.session_id) for h in hits]
    return out


def _cli_ranked(env: dict[str, str], query: str, by_id: dict[str, str], *, meaning: bool = False) -> list[str]:
    proc = subprocess.run(
        [*voyager_command(), "search", query, "--sessions", "--json", "--no-refresh", "--limit", str(DEPTH)]
        + (["--meaning"] if meaning else []),
        env=child_env(env),
        capture_output=True,
        timeout=120,
        check=False,
    )
    try:
        hits = msgspec.json.decode(proc.stdout).get("hits", [])
    except msgspec.DecodeError:
        return []
    return [by_id.get(_key(h["session_id"]), h["session_id"]) for h in hits]


def _scores(
    queries: list[JudgedQuery], ranked: dict[str, list[str]]
) -> tuple[dict[str, ClassScore], dict[str, int | None]]:
    ranks = {q.id: rank_of(q.target, ranked.get(q.id, [])) for q in queries}
    return {c: score(ranks[q.id] for q in queries if q.cls == c) for c in CLASSES}, ranks


def _rank_note(engine: str, queries: list[JudgedQuery], ranks: dict[str, int | None]) -> str:
    """Every query's rank on one line per engine (``-`` = not in the first ten): what a reviewer diffs."""
    return f"{engine} ranks: " + " ".join(f"{q.id}={ranks[q.id] or '-'}" for q in queries)


def _fast_resume(
    ctx: Context, res: ScenarioResult, written: corpus.Written, queries: list[JudgedQuery], by_id: dict[str, str]
) -> dict[str, ClassScore] | None:
    from bench.scenarios.cli_search import fr_command

    if ctx.quick:
        res.notes.append("fast-resume: not run in --quick (the comparison is part of the full run)")
        return None
    fr = fr_command()
    version = fastresume.fr_version(fr) if fr else None
    if fr is None or version is None:
        res.notes.append(
            "fast-resume: skipped, `fr` is not installed (pip install fast-resume; the bench installs nothing)"
            if fr is None
            else f"fast-resume: skipped, {fr} is not fast-resume's fr"
        )
        return None
    env = fastresume.fr_env(written.env(), ctx.dir("judged") / "fr-cache")
    t = time.perf_counter()
    listed = fastresume.index(fr, env)
    res.notes.append(f"fast-resume ({version}): indexed in {time.perf_counter() - t:.1f} s, lists {listed} sessions")
    ranked = {q.id: [by_id.get(i, i) for i in fastresume.search(fr, env, q.query, DEPTH)] for q in queries}
    scores, ranks = _scores(queries, ranked)
    res.notes.append(_rank_note("fast-resume", queries, ranks))
    return scores


def judged(ctx: Context) -> ScenarioResult:
    res = ScenarioResult(
        name="judged",
        description="search quality: the judged set's queries (one target session "
        "each), rank of the target in `voyager search … --sessions`; fast-resume beside (full run)",
    )
    root = ctx.dir("judged")
    t = time.perf_counter()
    written = corpus.write(root / "home")
    by_id = {s.conv.id: s.key for s in written.sessions}
    queries = load()
    res.notes.append(
        f"corpus: {len(written.sessions)} sessions written in {time.perf_counter() - t:.2f} s; {len(queries)} queries"
    )
    data_dir = root / "data"
    env = {**written.env(), "VOYAGER_HOME": str(data_dir)}
    t = time.perf_counter()
    proc = subprocess.run(
        [*voyager_command(), "scan"], env=child_env(env), capture_output=True, timeout=600, check=False
    )
    scan_s = round(time.perf_counter() - t, 2)
    res.metrics.append(Metric(name="voyager scan", value=scan_s, unit="s"))
    from voyager_sessions.api import reader

    with reader(data_dir) as r:
        indexed = sum(p["sessions"] for p in r.stats().providers.values())
    ok = proc.returncode == 0 and indexed == len(written.sessions)
    res.checks.append(
        Check(
            name=f"voyager scan indexed the {len(written.sessions)} judged sessions",
            ok=ok,
            detail=None
            if ok
            else f"exit {proc.returncode}, {indexed} sessions; {proc.stderr.decode(errors='replace')[-300:]}",
        )
    )

    t = time.perf_counter()
    rejected: list[str] = []
    ranked = _voyager_ranked(data_dir, queries, by_id, rejected)
    if rejected:
        res.notes.append(f"voyager rejected {len(rejected)} queries as malformed: {' '.join(rejected)}")
    res.metrics.append(Metric(name="queries, in-process", value=round(time.perf_counter() - t, 2), unit="s"))
    scores, ranks = _scores(queries, ranked)
    res.notes.append(_rank_note("voyager", queries, ranks))
    fr_scores = _fast_resume(ctx, res, written, queries, by_id)

    floors = load_floors()
    _report(res, scores, fr_scores, floors.voyager, "")
    # The in-process path must be the CLI's: one query per class, and its first word alone (which finds
    # sessions whatever the engine does with several words), through `voyager search` too.
    firsts = [next(q for q in queries if q.cls == c) for c in CLASSES]
    probes = firsts + [msgspec.structs.replace(q, id=f"{q.id}:first-word", query=q.query.split()[0]) for q in firsts]
    with_meaning = _with_meaning(res, env, data_dir, queries, by_id, probes, floors)
    meaning = None
    if with_meaning is not None:
        meaning, embedded = with_meaning
        ctx.cache["judged-meaning"] = (data_dir, written)  # the meaning scenario's needles read it too
        ctx.cache["judged-fresh"] = Fresh(
            sessions=len(written.sessions), scan_s=scan_s, meaning_s=embedded.seconds, check=embedded.check
        )
    _cli_probes(res, env, data_dir, probes, by_id, meaning)
    return res


def _cli_probes(
    res: ScenarioResult,
    env: dict[str, str],
    data_dir: Path,
    probes: list[JudgedQuery],
    by_id: dict[str, str],
    meaning: dict[str, list[str]] | None,
) -> None:
    """The probes through ``voyager search --sessions --json`` (and ``--meaning``'s, ranked in-process as
    ``meaning``), checked against the API's ranking.

    The CLI runs go to one ``voyager serve`` on the data dir, started once every session has its vector (so
    its background embedder finds nothing to do): the command, its options and its JSON are the CLI's, and no
    probe pays for opening the index and loading the model again. Where no server starts, each runs alone.
    """
    from bench.scenarios.cli_search import Server

    words = _voyager_ranked(data_dir, probes, by_id, [])  # now: the index as the CLI sees it
    server: Server | None = None
    try:
        server = Server(child_env(env), data_dir)
    except (OSError, RuntimeError) as exc:
        res.notes.append(f"CLI probes: each in its own process (no server: {exc})")
    try:
        before = server.status().get("answered", 0) if server else 0
        differ = [q.id for q in probes if _cli_ranked(env, q.query, by_id) != words[q.id]]
        found = sum(bool(words[q.id]) for q in probes)
        res.checks.append(
            Check(
                name=f"`voyager search --sessions --json` ranks as the in-process API does ({len(probes)} "
                f"probes, {found} finding sessions)",
                ok=not differ and found > 0,
                detail=None if not differ and found else f"differ: {differ}, finding: {found}",
            )
        )
        if meaning is not None:
            differ = [q.id for q in probes if _cli_ranked(env, q.query, by_id, meaning=True) != meaning[q.id]]
            res.checks.append(
                Check(
                    name=f"`voyager search --sessions --meaning --json` ranks as the in-process API does "
                    f"({len(probes)} probes)",
                    ok=not differ,
                    detail=None if not differ else f"differ: {differ}",
                )
            )
        if server:
            answered = server.status().get("answered", 0) - before
            asked = len(probes) * (2 if meaning is not None else 1)
            res.notes.append(f"CLI probes: {answered} of {asked} answered by `voyager serve`")
    finally:
        if server:
            server.stop()


def _report(
    res: ScenarioResult,
    scores: dict[str, ClassScore],
    fr_scores: dict[str, ClassScore] | None,
    floors: dict[str, dict[str, float]],
    how: str,
) -> None:
    """Each class's metrics (``how``: "" for words, ", with meaning"), fast-resume beside, checked against ``floors``."""
    for c in CLASSES:
        s = scores[c]
        group = f"{c} ({s.queries} queries){how}"
        for name in NAMES:
            value = s.get(name)
            m = Metric(name=name, value=value, unit="", group=group)
            if fr_scores is not None:
                m.reference = Reference(label="fast-resume", value=fr_scores[c].get(name))
            res.metrics.append(m)
            floor = floors.get(c, {}).get(name)
            if floor is not None:
                ok = value >= floor - 1e-9
                res.checks.append(
                    Check(
                        name=f"quality floor{how}: {c} {name} >= {floor:.3f}",
                        ok=ok,
                        detail=None
                        if ok
                        else f"measured {value:.3f}: search quality regressed below bench/quality_floor.json",
                    )
                )


def _with_meaning(
    res: ScenarioResult,
    env: dict[str, str],
    data_dir: Path,
    queries: list[JudgedQuery],
    by_id: dict[str, str],
    probes: list[JudgedQuery],
    floors: Floors,
) -> tuple[dict[str, list[str]], Embedded] | None:
    """The same queries with ``--meaning`` (``voyager scan --meaning`` first), where the model is installed;
    the probes' ranking with meaning, in-process, and what the scan did (None without the model)."""
    from voyager_sessions.search.embed import INSTALL_HINT, available

    if not available():
        res.notes.append(f"meaning: not measured, the model is not installed ({INSTALL_HINT})")
        return None
    t = time.perf_counter()
    proc = subprocess.run(
        [*voyager_command(), "scan", "--meaning", "-q"], env=child_env(env), capture_output=True, timeout=1800
    )
    embedded = Embedded(
        seconds=round(time.perf_counter() - t, 2),
        check=Check(
            name="voyager scan --meaning embedded every judged session",
            ok=proc.returncode == 0 and f"{len(by_id)} of {len(by_id)} sessions searchable".encode() in proc.stdout,
            detail=None if proc.returncode == 0 else proc.stderr.decode(errors="replace")[-300:],
        ),
    )
    res.metrics.append(Metric(name="voyager scan --meaning", value=embedded.seconds, unit="s"))
    res.checks.append(embedded.check)
    t = time.perf_counter()
    rejected: list[str] = []
    ranked = _voyager_ranked(data_dir, queries, by_id, rejected, meaning=True)
    res.metrics.append(
        Metric(name="queries with meaning, in-process", value=round(time.perf_counter() - t, 2), unit="s")
    )
    # A probe that is one of the queries was ranked just now; only the first-word probes are new.
    probe_ranked = {q.id: ranked[q.id] for q in probes if q.id in ranked}
    probe_ranked |= _voyager_ranked(data_dir, [q for q in probes if q.id not in ranked], by_id, [], meaning=True)
    scores, ranks = _scores(queries, ranked)
    res.notes.append(_rank_note("voyager --meaning", queries, ranks))
    _report(res, scores, None, floors.voyager_meaning, ", with meaning")
    return probe_ranked, embedded
