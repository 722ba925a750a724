"""The wheel carries every module: build it, install it into a fresh venv, import them all."""

from __future__ import annotations

import pkgutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    """Every module of every package pyproject.toml declares, found on disk through its package-dir mapping."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; CI runs 3.11

    import voyager_sessions

    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = tool["package-dir"]
    names = []
    for pkg in tool["packages"]:
        # voyager_sessions.ingest.adapters -> ingest/adapters (the longest mapped prefix decides).
        prefix = max((k for k in mapping if pkg == k or pkg.startswith(k + ".")), key=len)
        path = ROOT / mapping[prefix] / pkg[len(prefix) + 1 :].replace(".", "/")
        names.append(pkg)
        names.extend(
            f"{pkg}.{m.name}" for m in pkgutil.iter_modules([str(path)]) if not m.ispkg and not m.name.startswith("__")
        )
    # A package on disk that pyproject.toml forgot would be missing from the wheel.
    for prefix, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            pkg = ".".join([prefix, *rel.parts])
            assert pkg in tool["packages"], f"{pkg} is not listed in pyproject.toml's packages"
    assert voyager_sessions.__version__
    return sorted(set(names))


@pytest.mark.slow
def test_wheel_installs_every_module(tmp_path):
    wheel_dir = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(wheel_dir.glob("voyager_sessions-*.whl"))
    import zipfile

    shipped = {n.split("/", 1)[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert not shipped & {"synth", "bench", "tests"}, shipped  # development code stays out of the wheel
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    # Dependencies come from this environment (no network); the package itself only from the wheel.
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = [p for p in site.getsitepackages() if Path(p).exists()]
    Path(purelib, "deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], check=True, capture_output=True, timeout=300
    )
    mods = _modules()
    code = (
        "import importlib, sys\n"
        f"mods = {mods!r}\n"
        "for m in mods:\n"
        "    mod = importlib.import_module(m)\n"
        "    assert 'site-packages' in (mod.__file__ or ''), (m, mod.__file__)\n"
        "from voyager_sessions.demo import CORPUS\n"
        "assert any(CORPUS.rglob('*.jsonl')), 'demo corpus missing from the wheel'\n"
        "print(len(mods))\n"
    )
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == len(mods)
    exe = env_dir / "bin" / "voyager"
    assert subprocess.run([str(exe), "--help"], capture_output=True, timeout=60).returncode == 0


def test_zstd_is_a_regular_dependency_and_the_old_extra_still_installs():
    """A default install reads DeepSeek Harness and Zed: ``zstandard`` where the standard library has no
    ``compression.zstd``; ``voyager-sessions[zstd]`` (older install commands) resolves, to nothing more."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    zstd_deps = [d for d in project["dependencies"] if d.split(">")[0].split(";")[0].strip() == "zstandard"]
    assert len(zstd_deps) == 1 and "python_version < '3.14'" in zstd_deps[0], project["dependencies"]
    assert project["optional-dependencies"]["zstd"] == []


def test_a_default_install_has_a_zstd_implementation():
    from voyager_sessions.ingest import zstd

    assert zstd.available(), "zstandard (or compression.zstd) must come with a default install"
