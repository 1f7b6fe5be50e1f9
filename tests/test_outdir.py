"""Output folders (cnsim.outdir): a default name per run, a given --out checked before any work,
results written under a hidden name and renamed into place only when complete."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from cnsim import ScenarioError
from cnsim.outdir import choose, clear, commit, default_name, discard, staging


def refusal(out: Path | None, **kw: object) -> str:
    with pytest.raises(ScenarioError) as err:
        choose(out, "stem", **kw)  # type: ignore[arg-type]
    return str(err.value)


def test_a_default_name_is_the_stem_a_timestamp_and_a_random_suffix() -> None:
    name = default_name("kd-symmetric-single-hs")
    assert re.fullmatch(r"kd-symmetric-single-hs-20\d{6}-\d{6}-[0-9a-f]{6}", name), name


def test_without_out_a_new_folder_under_the_root_is_chosen_but_not_made(tmp_path: Path) -> None:
    root = tmp_path / "results" / "deep"  # not there yet: the nearest existing folder must be writable
    folder = choose(None, "og", root=root)
    assert folder.parent == root and folder.name.startswith("og-")
    assert not root.exists()
    assert choose(None, "og", root=root) != folder


def test_a_new_or_empty_folder_is_accepted(tmp_path: Path) -> None:
    assert choose(tmp_path / "new", "x") == tmp_path / "new"
    assert choose(tmp_path / "a" / "b" / "c", "x") == tmp_path / "a" / "b" / "c"
    (tmp_path / "empty").mkdir()
    assert choose(tmp_path / "empty", "x") == tmp_path / "empty"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]  # the probes leave nothing behind


def test_a_non_empty_folder_needs_force_or_resume(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "summary.json").write_text("{}", encoding="utf-8")
    assert refusal(tmp_path / "full") == (
        f"--out {tmp_path / 'full'}: the folder exists and is not empty; pass --force to replace it, or choose another folder")
    assert choose(tmp_path / "full", "x", force=True) == tmp_path / "full"
    assert choose(tmp_path / "full", "x", resume=True) == tmp_path / "full"


def test_a_file_is_refused_even_with_force(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    assert refusal(tmp_path / "afile", force=True) == (
        f"--out {tmp_path / 'afile'}: is a file, not a folder; give a folder path for the results")
    assert refusal(tmp_path / "afile" / "under") == (
        f"--out {tmp_path / 'afile' / 'under'}: {tmp_path / 'afile'} is not a folder; give a folder path for the results")


def test_the_current_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert "names the current folder itself" in refusal(Path("."), force=True)
    assert "names the current folder itself" in refusal(Path(""), force=True)
    assert refusal(tmp_path, force=True).startswith(f"--out {tmp_path}: is the current folder or holds it")
    assert choose(Path("sub"), "x") == Path("sub")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_folder_nothing_can_be_written_into_is_refused() -> None:
    message = refusal(Path("/proc/cnsim-results"))
    # the system's words for the error, not Python's "[Errno 2] ...: '/proc/tmpabc'"
    assert re.fullmatch(r"--out /proc/cnsim-results: cannot write into /proc \([A-Z][a-z ]+\); choose another folder", message), message


def test_a_run_is_written_under_a_hidden_name_and_renamed_when_complete(tmp_path: Path) -> None:
    final = tmp_path / "out" / "run"
    tmp = staging(final)
    assert tmp.is_dir() and tmp.parent == final.parent
    assert re.fullmatch(r"\.run\.partial-[0-9a-f]{8}", tmp.name) and tmp != staging(final)
    (tmp / "summary.json").write_text("{}", encoding="utf-8")
    assert commit(tmp, final) == final
    assert not tmp.exists() and os.listdir(final) == ["summary.json"]


def test_commit_replaces_the_folder_force_allowed(tmp_path: Path) -> None:
    final = tmp_path / "run"
    (final / "series").mkdir(parents=True)
    (final / "old.json").write_text("{}", encoding="utf-8")
    tmp = staging(final)
    (tmp / "new.json").write_text("{}", encoding="utf-8")
    commit(tmp, final)
    assert os.listdir(final) == ["new.json"]


def test_an_interrupted_replacement_never_leaves_a_half_deleted_folder_under_the_final_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while ``--force`` removes the old run: the final name holds a whole run (here the
    new one), not the old one with some of its files gone."""
    final = tmp_path / "run"
    final.mkdir()
    for name in ("summary.json", "manifest.json"):
        (final / name).write_text("{}", encoding="utf-8")
    tmp = staging(final)
    (tmp / "new.json").write_text("{}", encoding="utf-8")

    def interrupted_rmtree(path: Path, *args: object, **kwargs: object) -> None:
        (Path(path) / "summary.json").unlink()  # the deletion got this far ...
        raise KeyboardInterrupt  # ... when the signal came

    monkeypatch.setattr("cnsim.outdir.shutil.rmtree", interrupted_rmtree)
    with pytest.raises(KeyboardInterrupt):
        commit(tmp, final)
    assert os.listdir(final) == ["new.json"]


def test_discard_removes_a_staging_folder_and_tolerates_a_missing_one(tmp_path: Path) -> None:
    tmp = staging(tmp_path / "run")
    (tmp / "half.json").write_text("{", encoding="utf-8")
    discard(tmp)
    assert not tmp.exists()
    discard(tmp)


def test_clear_empties_a_folder_without_following_links(tmp_path: Path) -> None:
    keep = tmp_path / "elsewhere"
    keep.mkdir()
    (keep / "precious").write_text("x", encoding="utf-8")
    folder = tmp_path / "check"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "file").write_text("x", encoding="utf-8")
    (folder / "link").symlink_to(keep, target_is_directory=True)
    clear(folder)
    assert folder.is_dir() and list(folder.iterdir()) == []
    assert (keep / "precious").exists()
