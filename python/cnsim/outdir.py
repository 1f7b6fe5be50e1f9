"""Output folders that never lose or silently overwrite a finished result (spec/contract.md
"Command line": default ``results/<id>-<timestamp>-<short unique suffix>/``; an existing
non-empty ``--out`` is refused unless ``--force``; nothing half-written under a final name).

* :func:`choose` checks the folder *before* any simulation: a default name is made unique by
  a timestamp and a random 24-bit suffix (two runs started in the same second get two
  folders), a given ``--out`` must
  not be empty or ``.`` (nor the current folder or one that holds it), not be a file, not be a
  non-empty folder (unless ``force`` or ``resume``) and have a writable parent.
* :func:`staging` / :func:`commit`: a run writes into a hidden sibling folder and is renamed
  to its final name only when complete; an interrupted run leaves no folder under that name.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from .errors import ScenarioError

__all__ = ["choose", "clear", "staging", "commit", "default_name"]


def default_name(stem: str) -> str:
    """``<stem>-<YYYYmmdd-HHMMSS>-<6 hex>``: unique even for runs started in the same second."""
    return f"{stem}-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def _writable_parent(path: Path) -> None:
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ScenarioError(f"--out {path}: {parent} is not a folder; give a folder path for the results")
    # a real probe, not os.access: root passes every permission check, yet /proc, read-only
    # mounts and full disks still refuse a folder
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".cnsim-probe-", dir=parent))
    except OSError as err:
        raise ScenarioError(f"--out {path}: cannot write into {parent} ({err.strerror or err}); choose another folder") from None


def _not_the_current_folder(out: Path) -> None:
    """Refuse ``--out ''``, ``--out .`` and the current folder or one that holds it: results go into
    a folder of their own, written under a hidden sibling name and renamed into place (``--force``
    would replace the folder the command runs in, and the rename onto it fails)."""
    if out == Path("."):  # both "" and "." arrive as Path(".")
        raise ScenarioError(
            f"--out {str(out)!r} (or an empty value): names the current folder itself; give the path of a new or "
            "empty folder for the results, e.g. --out results/mine"
        )
    try:
        resolved, cwd = out.resolve(), Path.cwd().resolve()
    except (OSError, RuntimeError):  # a symlink loop, or the current folder was removed
        return
    if resolved == cwd or resolved in cwd.parents:
        raise ScenarioError(
            f"--out {out}: is the current folder or holds it; give the path of a new or empty folder for the "
            "results, e.g. --out results/mine"
        )


def clear(folder: Path) -> None:
    """Empty ``folder`` (``--force`` of the commands that write in place: check, reproduce)."""
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def choose(out: Path | None, stem: str, force: bool = False, resume: bool = False, root: Path = Path("results")) -> Path:
    """The folder a command will write, checked before any work starts.

    ``out`` None: a new unique folder name under ``root``. Otherwise ``out`` itself:
    refused (:class:`ScenarioError`, exit 2) if it is a file, or a non-empty folder while
    neither ``force`` (it will be replaced) nor ``resume`` (a sweep continues in it) is set.
    """
    if out is None:
        folder = root / default_name(stem)
        _writable_parent(folder)
        return folder
    _not_the_current_folder(out)
    if out.is_symlink():  # the results replace the folder by a rename: a link would be replaced, or refuse at the end
        raise ScenarioError(f"--out {out}: is a symbolic link (to {os.readlink(out)}); give the folder's own path")
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"--out {out}: is a file, not a folder; give a folder path for the results")
    if out.is_dir() and any(out.iterdir()) and not (force or resume):
        raise ScenarioError(f"--out {out}: the folder exists and is not empty; pass --force to replace it, or choose another folder")
    _writable_parent(out)
    return out


def staging(final: Path) -> Path:
    """A fresh hidden sibling of ``final`` to write into before :func:`commit`."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.partial-{secrets.token_hex(4)}"
    tmp.mkdir()
    return tmp


def commit(tmp: Path, final: Path) -> Path:
    """Move the complete folder ``tmp`` to ``final``, replacing what :func:`choose` allowed.

    The folder replaced is first renamed aside, and removed only once the new one is in place:
    deleting it where it stands would leave it half deleted under its final name if Ctrl-C or
    SIGTERM came meanwhile (contract: nothing half-written under a run folder's final name)."""
    old = None
    if final.exists():
        old = final.parent / f".{final.name}.replaced-{secrets.token_hex(4)}"
        final.rename(old)
    tmp.rename(final)
    if old is not None:
        if old.is_dir():
            shutil.rmtree(old)
        else:  # pragma: no cover (choose() refuses a file)
            old.unlink()
    return final


def discard(tmp: Path) -> None:
    """Remove a staging folder after a failed or interrupted run."""
    shutil.rmtree(tmp, ignore_errors=True)
