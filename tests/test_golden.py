"""Results are bit-identical to the golden files (scripts/golden.py): every shipped scenario at
seed 1, with none and each scheme it has a preset for, over a short run. A refactor or a speed-up
must leave them unchanged; a deliberate model change regenerates them (`python
scripts/golden.py --write`, and `--write-engine` for the engine's own) and says why in its
commit."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("cnsim._core")

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("cnsim_golden", ROOT / "scripts" / "golden.py")
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
sys.modules["cnsim_golden"] = golden
_spec.loader.exec_module(golden)

CASES = golden.cases()


def test_every_case_has_a_golden_file() -> None:
    names = {golden.case_name(s, k) + ".json" for s, k, _ in CASES}
    files = {p.name for p in golden.GOLDEN_DIR.glob("*.json")} - {golden.RECORD.name}
    assert names == files


def test_the_goldens_are_recorded_under_this_results_version() -> None:
    """A change of results raises RESULTS_VERSION (a sweep or a check reuses a cached run only
    when the version that made it is this one): `golden.py --write` records the version and a
    digest of the files, so a version raised without rewriting the goldens, or goldens rewritten
    or edited without it, fails here."""
    from cnsim._version import RESULTS_VERSION

    record = json.loads(golden.RECORD.read_text(encoding="utf-8"))
    assert record["results_version"] == RESULTS_VERSION, "RESULTS_VERSION changed: run scripts/golden.py --write"
    assert record["digest"] == golden.goldens_digest(), "the goldens changed without scripts/golden.py --write"


@pytest.mark.parametrize(("sid", "scheme", "duration"), CASES, ids=[golden.case_name(s, k) for s, k, _ in CASES])
def test_results_match_golden(sid: str, scheme: str, duration: str) -> None:
    want = json.loads((golden.GOLDEN_DIR / f"{golden.case_name(sid, scheme)}.json").read_text(encoding="utf-8"))
    got = golden.golden_of(sid, scheme, duration)
    assert golden.diff(want, got) == []


@pytest.mark.parametrize("case", golden.ENGINE_CASES, ids=[golden.engine_case_name(*c[:3]) for c in golden.ENGINE_CASES])
def test_the_engine_goldens_hold_what_the_front_end_lowers(case: tuple) -> None:
    """The engine's goldens (crates/cnsim-core/tests/golden, run by `cargo test`) are configs the
    front end lowers today: a change to a scenario or to the lowering rewrites them too."""
    name = golden.engine_case_name(*case[:3])
    stored = json.loads((golden.ENGINE_GOLDEN_DIR / f"{name}.json").read_text(encoding="utf-8"))
    assert stored["config"] == json.loads(golden.engine_config(*case).core_json())
    assert {p.stem for p in golden.ENGINE_GOLDEN_DIR.glob("*.json")} == {
        golden.engine_case_name(*c[:3]) for c in golden.ENGINE_CASES}


def test_diff_reports_a_changed_float() -> None:
    assert golden.diff({"a": {"b": 1.0}}, {"a": {"b": 1.0000000000000002}}) == [".a.b: 1.0 vs 1.0000000000000002"]


def test_writing_changed_goldens_needs_a_new_results_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`golden.py --write` refuses to record changed results under the version they were recorded
    with (a cached run of the earlier model would pass for a current one), writes them once the
    version is raised, and writes a new case's golden under any version."""
    import cnsim._version

    name = "kd-symmetric-single-hs--bcn"
    (tmp_path / f"{name}.json").write_bytes((golden.GOLDEN_DIR / f"{name}.json").read_bytes())
    monkeypatch.setattr(golden, "GOLDEN_DIR", tmp_path)
    monkeypatch.setattr(golden, "RECORD", tmp_path / "results-version.json")
    golden.write_record()
    stored = (tmp_path / f"{name}.json").read_text(encoding="utf-8")
    real = golden.golden_of

    def changed(sid: str, scheme: str, duration: str) -> dict:
        doc = real(sid, scheme, duration)
        doc["summary"]["throughput_gbps"]["aggregate"] += 1.0  # as a model change would
        return doc

    monkeypatch.setattr(golden, "golden_of", changed)
    monkeypatch.setattr(sys, "argv", ["golden.py", "--write", "--only", name])
    version = cnsim._version.RESULTS_VERSION
    assert golden.main() == 1
    assert (tmp_path / f"{name}.json").read_text(encoding="utf-8") == stored  # nothing written
    assert golden.recorded_version() == version
    monkeypatch.setattr(cnsim._version, "RESULTS_VERSION", version + 1)
    assert golden.main() == 0
    written = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    assert written["summary"]["throughput_gbps"]["aggregate"] == json.loads(stored)["summary"]["throughput_gbps"]["aggregate"] + 1.0
    record = json.loads(golden.RECORD.read_text(encoding="utf-8"))
    assert record == {"results_version": version + 1, "digest": golden.goldens_digest()}
    # a missing golden fails the comparison; a new case changes no earlier result: written under
    # the same version
    (tmp_path / f"{name}.json").unlink()
    monkeypatch.setattr(sys, "argv", ["golden.py", "--only", name])
    assert golden.main() == 1
    monkeypatch.setattr(sys, "argv", ["golden.py", "--write", "--only", name])
    assert golden.main() == 0 and (tmp_path / f"{name}.json").is_file() and golden.recorded_version() == version + 1
