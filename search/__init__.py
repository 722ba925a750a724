"""Search: the only package that knows Tantivy.

``analyzer`` defines how text becomes terms (CJK-capable, code-aware), ``index`` owns
the on-disk index (schema, writer, reader). A query goes one way through three modules:
``syntax`` parses Voyager's query language into a tree (no Tantivy: the API and front ends
may parse with it), ``plan`` works out once what the tree means for this index (its terms,
their breadths, whether it matches events or sessions), ``compiler`` makes the plan into
Tantivy queries. ``engine`` runs and ranks them (``tiers``, ``sessions``, ``parts`` help),
``facets`` counts what the same plan matches, ``snippets`` cuts highlighted excerpts.
Nothing outside imports ``tantivy``.
"""
