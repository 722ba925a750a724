"""The meaning model measured in a process of its own: ``python -m bench.meaning_child load|throughput …``.

OpenMP reads its thread count once, when the engine loads, so each thread count is its
own process; so is the load, so that its time and memory are the model's alone. Prints
one JSON document on stdout.
"""

from __future__ import annotations

import json
import os
import sys
import time


def _rss_kb() -> int:
    from bench.util import current_rss_kb

    return current_rss_kb()


def load(queries: list[str]) -> dict:
    """Load time, the RSS the model adds, and query embedding time (CPU and wall, each query once warm)."""
    rss0 = _rss_kb()
    t = time.perf_counter()
    from voyager_sessions.search import embed

    m = embed.model()
    m.query("warm up")
    loaded = time.perf_counter() - t
    rss1 = _rss_kb()
    walls, cpus = [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        m.query(q)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    vec = embed.encode(m.query("bytes of one vector"))[0]
    return {
        "load_s": loaded,
        "model_rss_kb": rss1 - rss0,
        "query_wall_s": walls,
        "query_cpu_s": cpus,
        "vector_bytes": len(vec),
    }


def throughput(texts: list[str]) -> dict:
    """Sessions embedded a second (wall), and CPU seconds a session, in batches as the embedder sends them."""
    from voyager_sessions.scan.meaning import BATCH
    from voyager_sessions.search import embed

    m = embed.model(int(os.environ.get("OMP_NUM_THREADS", "1")))
    m.passages(texts[:2])  # warm
    t, c = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), BATCH):
        m.passages(texts[i : i + BATCH])
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return {"sessions": len(texts), "wall_s": wall, "cpu_s": cpu}


def main() -> int:
    what = sys.argv[1]
    payload = json.load(sys.stdin)
    out = load(payload) if what == "load" else throughput(payload)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
