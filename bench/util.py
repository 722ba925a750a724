"""Small measuring tools the scenarios share: percentiles, sizes, peak RSS, sandboxed env, children.

Everything the bench touches lives under one temporary work dir; ``provider_env``
builds the explicit environment mapping that points Voyager's adapters (and a child
``voyager`` process) at fake provider homes inside it, so neither the user's real
data dir nor their HOME is ever read or written.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import msgspec

from bench import REPO_ROOT


def percentile(samples: Iterable[float], p: float) -> float:
    """The ``p``-th percentile (0..100) with linear interpolation between closest ranks."""
    xs = sorted(samples)
    if not xs:
        raise ValueError("no samples")
    if len(xs) == 1:
        return xs[0]
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Quantiles(msgspec.Struct, frozen=True, kw_only=True):
    """p50/p95/p99/max of a set of samples, in the samples' unit."""

    n: int
    p50: float
    p95: float
    p99: float
    max: float

    @classmethod
    def of(cls, samples: list[float]) -> Quantiles:
        return cls(
            n=len(samples),
            p50=percentile(samples, 50),
            p95=percentile(samples, 95),
            p99=percentile(samples, 99),
            max=max(samples),
        )


def repeat(
    fn: Callable[[], object], *, reps: int, warmup: int = 1, budget: float | None = None, min_reps: int = 3
) -> list[float]:
    """Seconds of ``reps`` calls after ``warmup`` unmeasured ones.

    With ``budget`` (seconds), stops early once at least ``min_reps`` samples exist and
    the budget is spent: a slow baseline query must not stall the whole run.
    """
    for _ in range(warmup):
        fn()
    out: list[float] = []
    start = time.perf_counter()
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
        if budget is not None and len(out) >= min_reps and time.perf_counter() - start > budget:
            break
    return out


def file_bytes(path: Path) -> int:
    """Size of ``path`` with its companions (a database's ``-wal`` and ``-shm``)."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def dir_bytes(path: Path) -> int:
    """Total size of the regular files under ``path``."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def peak_rss_kb() -> int:
    """This process's peak resident set (VmHWM) in KiB; ``ru_maxrss`` where /proc is missing."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss // 1024 if sys.platform == "darwin" else rss


def current_rss_kb() -> int:
    """This process's resident set now (VmRSS) in KiB, or 0 if unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class ProviderHomes(msgspec.Struct, frozen=True, kw_only=True):
    """Fake provider locations under one root, and the env mapping that names them."""

    root: str
    claude: str
    codex: str
    opencode_db: str
    opencode_home: str

    @classmethod
    def under(cls, root: Path) -> ProviderHomes:
        root.mkdir(parents=True, exist_ok=True)
        return cls(
            root=str(root),
            claude=str(root / "claude"),
            codex=str(root / "codex"),
            opencode_db=str(root / "opencode" / "opencode.db"),
            opencode_home=str(root / "opencode"),
        )

    @property
    def claude_projects(self) -> Path:
        return Path(self.claude) / "projects"

    def env(self, data_dir: Path | None = None) -> dict[str, str]:
        """An explicit environment: fake HOME and XDG dirs, every provider override set."""
        env = {
            "HOME": str(Path(self.root) / "home"),
            "XDG_DATA_HOME": str(Path(self.root) / "home" / ".local" / "share"),
            "XDG_CONFIG_HOME": str(Path(self.root) / "home" / ".config"),
            "VOYAGER_CLAUDE_HOME": self.claude,
            "VOYAGER_CODEX_HOME": self.codex,
            "VOYAGER_OPENCODE_DB": self.opencode_db,
            "VOYAGER_OPENCODE_HOME": self.opencode_home,
        }
        if data_dir is not None:
            env["VOYAGER_HOME"] = str(data_dir)
        return env


def child_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment for a child process: ``extra`` plus what a process needs to start.

    PATH, locale and TMPDIR are kept; everything provider- or Voyager-related comes only
    from ``extra``. ``PYTHONPATH`` gets the repository root so ``-m bench.child`` imports.
    """
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(extra)
    env["PYTHONPATH"] = str(REPO_ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_child(args: list[str], env: Mapping[str, str], *, timeout: float = 600, stdin: bytes | None = None) -> bytes:
    """Run ``python -m bench.child ARGS`` (``stdin`` on its standard input) and return its stdout; raise with its
    stderr on failure."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.child", *args],
        env=child_env(env),
        input=stdin,
        capture_output=True,
        timeout=timeout,
        cwd=str(REPO_ROOT),
        check=False,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"bench child {args[0]} failed ({proc.returncode}): {err}")
    return proc.stdout


def voyager_command() -> list[str]:
    """How to run the installed CLI: the ``voyager`` script next to this interpreter, else ``-m voyager_sessions``."""
    script = Path(sys.executable).parent / "voyager"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "voyager_sessions"]


def cli_env(extra: Mapping[str, str], pycache: Path) -> dict[str, str]:
    """The environment for a timed ``voyager`` child: :func:`child_env` with bytecode cached in ``pycache``.

    A user's install has its modules compiled (pip does it at install time; a checkout
    writes ``__pycache__`` on first run). ``child_env`` forbids writing bytecode, which
    would make every timed run recompile Voyager's sources (about 15 ms), so here bytecode
    goes to ``pycache`` in the sandbox instead (``PYTHONPYCACHEPREFIX``; time a warm-up
    run first). No ``PYTHONPATH``: the CLI imports only what is installed.
    """
    env = child_env(extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def install_wheel(work: Path, commit: str | None = None) -> list[str]:
    """Build a wheel of this checkout (or of ``commit`` of its repository) and install it, not editable, into a
    new venv under ``work``.

    That is what ``pip install .`` or ``pipx install .`` gives a user: no editable-install
    finder in ``site``, modules compiled at install time. The venv sees this interpreter's
    site-packages for the dependencies (a ``.pth`` line, as tests/test_packaging.py does),
    so nothing is downloaded. Returns the command that runs its ``voyager`` script; raises
    ``subprocess.CalledProcessError`` when pip (or ``git archive``) cannot build or install.
    """
    import shutil
    import site
    import venv

    src = work / "src"
    if commit is None:
        shutil.copytree(
            REPO_ROOT,
            src,
            ignore=shutil.ignore_patterns(
                ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache"
            ),
        )
    else:
        src.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", commit],
            check=True,
            capture_output=True,
            timeout=300,
        )
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True, timeout=300)
    wheels = work / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(wheels.glob("voyager_sessions-*.whl"), None)
    if wheel is None:
        raise OSError(f"pip wheel left no voyager wheel in {wheels}")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    deps = [p for p in [*site.getsitepackages(), site.getusersitepackages()] if Path(p).exists()]
    Path(purelib, "deps.pth").write_text("\n".join(deps) + "\n")
    # Without PYTHONPATH: pip asks the venv's interpreter what is installed, and a checkout on its path (the bench run
    # with PYTHONPATH=.) would read as voyager-sessions installed already, leaving the venv without it.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    return [str(env_dir / "bin" / "voyager")]


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def us(seconds: float) -> float:
    return round(seconds * 1_000_000.0, 2)


def mb(n_bytes: float) -> float:
    return round(n_bytes / 1_000_000.0, 3)
