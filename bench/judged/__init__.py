"""The judged set: realistic sessions in several agents' formats, and queries with one known target each.

``topics`` holds the hand-written content, ``corpus`` turns it into sessions and writes
them where the agents keep them under a fake HOME, ``queries.json`` holds the queries
(written from the content before any ranking was seen), ``metrics`` scores rankings,
``fastresume`` runs the same queries through fast-resume's ``fr``. The scenario that ties
them together is ``bench.scenarios.judged``; docs/bench.md describes the set.
"""
