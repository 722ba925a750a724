"""The bundled demo corpus: real-format Claude Code and Codex sessions (invented content).

``voyager demo`` points the adapters at ``corpus/`` and indexes it into a temporary
data dir, so a newcomer sees search work on a machine with no agent history.
"""

from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
