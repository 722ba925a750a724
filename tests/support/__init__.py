"""What tests share: sample writers, runners of the real CLI, servers, captures — one package, so that no
test module imports another and no test imports a conftest (conftests hold fixtures only, built from here).

- ``sessions``: Claude Code and Codex sessions in their real formats (the default corpus); ``run``: the CLI in
  process (``Run``) and as a subprocess (``voyager_exe``, ``run_subprocess``), ``sha256_tree``;
- ``items`` and ``scanning``: an adapter's stream read directly, and the CLI's scan/search as a test uses them;
- ``captures`` and ``peers``: the real agents' captures in ``tests/fixtures/agents`` and peers' samples beside
  the checkout; ``samples/<agent>``: documented agents' records, built by code;
- ``serving``, ``webpage``, ``picker``: a ``voyager serve`` process, the web page's constants, the picker's
  helpers; ``hostile``, ``shell``, ``special``, ``bomb``, ``mutations``, ``fuzz``, ``deadline``: hostile input.
"""
