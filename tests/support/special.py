"""Things that are not session files where an adapter expects one: FIFOs, sockets, symlink loops,
directories, unreadable files, a store root that is a file. Each is made in place of a (copied)
fixture file or folder; the read must end promptly and raise nothing.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
from collections.abc import Callable
from pathlib import Path

Special = Callable[[Path], None]


def _clear(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        p.unlink()
    elif p.is_dir():
        shutil.rmtree(p)


def fifo(p: Path) -> None:
    _clear(p)
    os.mkfifo(p)
    p.chmod(0o600)  # not the fixture files' mode, whatever the umask: a read that changes it is seen


def sock(p: Path) -> None:
    """A listening Unix socket at ``p`` (bound relative to its folder: socket paths are short)."""
    _clear(p)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cwd = os.getcwd()
    try:
        os.chdir(p.parent)
        s.bind(p.name)
    finally:
        os.chdir(cwd)
        s.close()  # the socket file stays


def loop(p: Path) -> None:
    """A symlink to itself: every open or stat of it fails with ELOOP."""
    _clear(p)
    p.symlink_to(p.name)


def directory(p: Path) -> None:
    _clear(p)
    p.mkdir()
    (p / "inside").write_text("{}")


def dangling(p: Path) -> None:
    _clear(p)
    p.symlink_to(p.name + ".gone")


def dir_loop(p: Path) -> None:
    """A folder that holds a symlink back to its parent (a cycle a walk must not follow forever)."""
    if p.is_dir():
        (p / "cycle").symlink_to("..")
        (p / "self").symlink_to(".")


SPECIALS: dict[str, Special] = {
    "fifo": fifo,
    "socket": sock,
    "loop": loop,
    "directory": directory,
    "dangling": dangling,
}


def unreadable(p: Path) -> None:
    """No permission to read ``p`` (a file) or list it (a folder); only binding for a non-root reader."""
    p.chmod(0)


def chown_tree(root: Path, uid: int, gid: int) -> None:
    for q in [root, *root.rglob("*")]:
        os.lchown(q, uid, gid)


def is_special(p: Path) -> bool:
    try:
        mode = os.lstat(p).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


NOBODY = 65534


def unprivileged(fn: Callable[[], object], tree: Path) -> object:
    """``fn()`` as a user that permissions bind: this process when it is not root, else a forked child
    that owns ``tree`` and runs as ``nobody`` (root reads a chmod-000 file regardless). Its result
    (or exception) comes back pickled; the tree is given back to root afterwards."""
    import pickle
    import traceback

    if os.geteuid() != 0:
        return fn()
    chown_tree(tree, NOBODY, NOBODY)
    for parent in tree.parents:  # nobody must be able to reach the tree
        if parent.stat().st_mode & 0o001 == 0:
            parent.chmod(parent.stat().st_mode | 0o001)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            out: object = ("ok", fn())
        except BaseException as exc:
            out = ("raised", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        try:
            data = pickle.dumps(out)
        except Exception as exc:
            data = pickle.dumps(("raised", f"result not picklable: {exc}"))
        os.write(w, data)
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 1 << 16):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    chown_tree(tree, 0, 0)
    status, value = pickle.loads(b"".join(chunks))
    if status == "raised":
        raise AssertionError(f"raised as an unprivileged user: {value}")
    return value
