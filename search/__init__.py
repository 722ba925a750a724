"""Search: the only package that knows Tantivy.

``analyzer`` defines how text becomes terms (CJK-capable, code-aware), ``index`` owns
the on-disk index (schema, writer, reader), ``query`` parses Voyager's query language
into Tantivy queries, ``snippets`` cuts highlighted excerpts, and ``engine`` answers a
search with hits joined to session metadata. Nothing outside imports ``tantivy``.
"""
