"""The parts of a report page that are computed, not drawn (cnsim.report): an embedded PNG's
size, summary.json as rows with long maps cut, the first thing a page cannot read in a summary,
and a sweep's table of runs. test_report.py renders whole pages."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from cnsim import ScenarioError
from cnsim.errors import missing
from cnsim.report import (
    MAX_MAP_ROWS,
    ensure_run_figures,
    figure,
    missing_scenario_notice,
    run_page,
    summary_problem,
    summary_rows,
    sweep_page,
    sweep_table,
    write_run_reports,
)
from cnsim.report import _png_size as png_size

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png(width: int, height: int) -> bytes:
    """The first 24 bytes of a PNG (signature, the IHDR chunk's length and type, its size)."""
    return SIGNATURE + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)


def test_a_pngs_size_is_read_from_its_header() -> None:
    assert png_size(png(640, 480) + b"rest") == (640, 480)
    assert png_size(png(1, 2)) == (1, 2)  # exactly 24 bytes
    assert png_size(png(640, 480)[:23]) == (800, 450)  # cut short: a default frame
    assert png_size(b"GIF89a" + bytes(30)) == (800, 450)


def test_a_figure_embeds_the_png_scaled_and_titled_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "queue.png"
    path.write_bytes(png(1000, 600) + b"pixels")
    fig = figure(path, caption="the hot queue", scale=0.5)
    assert (fig.title, fig.width, fig.height, fig.caption) == ("queue", 500, 300, "the hot queue")
    assert fig.src.startswith("data:image/png;base64,iVBORw0KGgo")  # the signature, base64
    whole = figure(str(path), title="Queue")
    assert (whole.title, whole.width, whole.height, whole.caption) == ("Queue", 1000, 600, "")
    path.write_bytes(png(3, 4))  # a header alone, 24 bytes: enough to size it
    assert (figure(path).width, figure(path).height) == (3, 4)


@pytest.mark.parametrize(("content", "problem"), [(b"", "empty"), (b"GIF89a" + bytes(30), "not a PNG image"),
                                                  (png(1, 2)[:23], "not a PNG image")])
def test_a_figure_that_is_not_a_png_is_refused_naming_it(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "queue.png"
    path.write_bytes(content)
    with pytest.raises(ScenarioError) as err:
        figure(path)
    assert str(err.value) == (f"{path}: damaged: {problem}; expected a PNG figure. Remove or replace it (`cnsim report` "
                              "draws a run folder's missing figures again from its series).")


def test_summary_rows_are_dotted_keys_with_long_maps_cut() -> None:
    flows = {f"{i}->0": float(i) for i in range(MAX_MAP_ROWS + 3)}
    nodes = {f"n{i}": 1.5 for i in range(MAX_MAP_ROWS)}  # exactly the limit: all shown
    rows = summary_rows({"scenario": "x", "throughput_gbps": {"per_flow": flows, "per_node": nodes, "hot_port": 9.5},
                         "drops": {"frames": 12_345}})
    assert rows[0] == ["scenario", "x"]
    flow_rows = [r for r in rows if r[0].startswith("throughput_gbps.per_flow.")]
    assert len(flow_rows) == MAX_MAP_ROWS + 1
    assert flow_rows[:2] == [["throughput_gbps.per_flow.0->0", "0"], ["throughput_gbps.per_flow.1->0", "1"]]
    assert flow_rows[-1] == ["throughput_gbps.per_flow.…", "3 more in summary.json"]
    assert len([r for r in rows if r[0].startswith("throughput_gbps.per_node.")]) == MAX_MAP_ROWS
    assert rows[-2:] == [["throughput_gbps.hot_port", "9.5"], ["drops.frames", "12,345"]]


def test_a_cut_map_counts_thousands_with_separators() -> None:
    rows = summary_rows({"per_flow": {str(i): 0 for i in range(MAX_MAP_ROWS + 1_234)}})
    assert rows[-1] == ["per_flow.…", "1,234 more in summary.json"] and len(rows) == MAX_MAP_ROWS + 1


GOOD: dict[str, Any] = {"scenario": "og", "scheme": "bcn", "seed": 1, "duration_s": 0.6, "window_s": [0.2, 0.5],
                        "throughput_gbps": {"aggregate": 19.0, "hot_port": None, "per_node": {"h1": 1.0, "h2": None}},
                        "queue_bytes": {"hot": {"mean": 1e5, "max": 2e5, "std": None}}, "drops": None}


def test_a_summary_a_page_can_read_has_no_problem() -> None:
    assert summary_problem(GOOD) is None


@pytest.mark.parametrize(("change", "key", "allowed"), [
    ({"scenario": ""}, "scenario", "the scenario id (text)"),
    ({"scheme": 3}, "scheme", 'the scheme name (text, e.g. "bcn")'),
    ({"seed": True}, "seed", "a whole number"),
    ({"seed": 1.0}, "seed", "a whole number"),
    ({"duration_s": "0.6"}, "duration_s", "the simulated time in seconds (a number)"),
    ({"window_s": [0.2]}, "window_s", "the measurement window [start_s, end_s] (two numbers)"),
    ({"window_s": [0.2, "x"]}, "window_s", "the measurement window [start_s, end_s] (two numbers)"),
    ({"throughput_gbps": [1]}, "throughput_gbps", 'a table of throughputs in Gb/s ({"aggregate": …, "hot_port": …, "per_node": {…}, "per_flow": {…}})'),
    ({"queue_bytes": [1]}, "queue_bytes", "a table (JSON object) or null"),
    ({"fairness": "fair"}, "fairness", "a table (JSON object) or null"),
])
def test_the_first_unreadable_key_is_named_with_what_is_allowed(change: dict[str, Any], key: str, allowed: str) -> None:
    value = next(iter(change.values()))
    assert summary_problem({**GOOD, **change}) == (key, value, allowed)


def test_a_required_key_that_is_absent_says_so() -> None:
    summary = {k: v for k, v in GOOD.items() if k != "duration_s"}
    assert summary_problem(summary) == ("duration_s", missing(), "the simulated time in seconds (a number); the key is required")
    assert summary_problem([GOOD])[0:2] == ("(document)", [GOOD])


@pytest.mark.parametrize(("throughput", "problem"), [
    ({"aggregate": "19"}, ("throughput_gbps.aggregate", "19", "a number (Gb/s) or null")),
    ({"hot_port": False}, ("throughput_gbps.hot_port", False, "a number (Gb/s) or null")),
    ({"per_flow": [1.0]}, ("throughput_gbps.per_flow", [1.0], "a table of numbers (Gb/s) by name")),
    ({"per_source_sent": {"h1": "fast"}}, ("throughput_gbps.per_source_sent.h1", "fast", "a number (Gb/s) or null")),
])
def test_throughputs_must_be_numbers_or_null(throughput: dict[str, Any], problem: tuple[str, Any, str]) -> None:
    assert summary_problem({**GOOD, "throughput_gbps": {**GOOD["throughput_gbps"], **throughput}}) == problem


def test_a_headline_metric_must_be_a_number_or_null() -> None:
    summary = {**GOOD, "queue_bytes": {"hot": {"mean": "big"}}}
    assert summary_problem(summary) == ("queue_bytes.hot.mean", "big", "a number or null")
    assert summary_problem({**GOOD, "cm": {"mbps": [1]}}) == ("cm.mbps", [1], "a number or null")


def test_the_sweep_table_shows_parameters_and_headline_metrics_scaled() -> None:
    table = pa.table({
        "run_id": ["a", "b"], "cm.gi": [4.0, 0.5], "seed": [1, 2], "status": ["ok", "failed"], "error": [None, "EngineError: x"],
        "throughput_gbps.aggregate": [19.25, None], "queue_bytes.hot.mean": [150_000.0, None]})
    t = sweep_table(table, ["cm.gi"])
    assert t.title == "Runs (2)"
    assert t.columns == ["run_id", "cm.gi", "seed", "status", "aggregate (Gb/s)", "hot queue mean (KB)"]
    assert t.rows == [["a", "4", "1", "ok", "19.25", "150"], ["b", "0.5", "2", "failed: EngineError: x", "–", "–"]]
    assert t.text_columns == [0, 1, 3]  # the run id, the parameters and the status
    cut = sweep_table(table, ["cm.gi"], limit=1)
    assert cut.title == "Runs (2)" and len(cut.rows) == 1


# ---- a run's page, from folders written here (no figures drawn)


def run_folder(folder: Path, **files: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, doc in files.items():
        (folder / name.replace("_", ".", 1)).write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return folder


def sections(page: Any) -> dict[str, Any]:
    return {s.title: s for s in page.sections}


def test_a_finished_runs_page_has_its_point_metrics_flows_and_files(tmp_path: Path) -> None:
    folder = run_folder(tmp_path / "r1", summary_json={**GOOD, "throughput_gbps": {"aggregate": 19.0, "per_flow": {"2->1": 0.5}}},
                        params_json={"run_id": "r1", "sweep": "gains", "params": {"cm.gi": 4.0}},
                        manifest_json={"wall_s": 0.25}, scenario_toml='duration = "0.6s"\n',
                        error_json={"error": "an earlier attempt"})  # a summary wins over an old error
    page = run_page(folder, draw=False)
    assert page.title == "cnsim run — og"
    assert page.subtitle == ["scheme bcn · seed 1 · window [0.2, 0.5] s · 0.6 s simulated", "sweep gains · run r1 · cm.gi = 4.0"]
    parts = sections(page)
    assert list(parts) == ["Figures", "Summary", "Resolved parameters"]
    assert parts["Figures"].text == ["No figures: the run folder has no series (or figures were not requested)."]
    tables = {t.title: t for t in parts["Summary"].tables}
    assert tables["Per-flow throughput (Gb/s)"].rows == [["2->1", "0.5"]]
    assert tables["Headline metrics (measurement window)"].rows[0] == ["aggregate (Gb/s)", "19"]
    blocks = {b.title: b.text for b in parts["Resolved parameters"].blocks}
    assert blocks == {"scenario.toml (resolved)": 'duration = "0.6s"\n',
                      "manifest.json (wall time, speed, versions)": '{\n  "wall_s": 0.25\n}'}
    assert parts["Resolved parameters"].text == []


def test_a_run_without_flows_or_its_scenario_says_what_is_missing(tmp_path: Path) -> None:
    folder = run_folder(tmp_path / "r2", summary_json=GOOD)
    parts = sections(run_page(folder, draw=False))
    assert [t.title for t in parts["Summary"].tables] == ["Headline metrics (measurement window)", "summary.json"]
    assert parts["Resolved parameters"].blocks == []
    assert parts["Resolved parameters"].text == [missing_scenario_notice(folder)]


def test_a_failed_runs_page_shows_its_error_and_traceback(tmp_path: Path) -> None:
    folder = run_folder(tmp_path / "r3", error_json={"error": "EngineError: boom", "traceback": "Traceback ..."},
                        params_json={"run_id": "r3", "sweep": "gains", "base": "zhb-og-single-hop", "params": {}})
    page = run_page(folder, draw=False)
    assert page.title == "cnsim run — zhb-og-single-hop"
    parts = sections(page)
    assert list(parts) == ["Error", "Resolved parameters"]
    assert (parts["Error"].text, parts["Error"].status) == (["EngineError: boom"], "failed")
    assert [(b.title, b.text) for b in parts["Error"].blocks] == [("traceback", "Traceback ...")]
    assert parts["Resolved parameters"].text == []  # no notice: there are no results to reproduce


def test_a_page_needs_a_summary_or_an_error(tmp_path: Path) -> None:
    folder = run_folder(tmp_path / "r4", params_json={"run_id": "r4"})
    with pytest.raises(ScenarioError, match=r"summary.json: missing: the run did not finish"):
        run_page(folder, draw=False)


def test_no_figures_are_drawn_for_a_run_missing_its_series_or_scenario(tmp_path: Path) -> None:
    """Drawing needs a complete run, its series and its scenario; without one it draws nothing."""
    folder = run_folder(tmp_path / "r5", summary_json=GOOD, scenario_toml='duration = "0.6s"\n')
    assert ensure_run_figures(folder) == []  # no series/
    (folder / "series").mkdir()
    (folder / "scenario.toml").unlink()
    assert ensure_run_figures(folder) == []  # no scenario.toml
    assert ensure_run_figures(run_folder(tmp_path / "r6", scenario_toml="", error_json={"error": "x"})) == []


def test_a_sweep_plan_whose_runs_are_not_a_list_is_refused(tmp_path: Path) -> None:
    (tmp_path / "sweep.json").write_text(json.dumps({"spec": {"name": "s"}, "runs": 5}))
    with pytest.raises(ScenarioError) as err:
        sweep_page(tmp_path)
    assert str(err.value).startswith(f'{tmp_path / "sweep.json"}: damaged: "runs" is 5; expected the list of the sweep\'s runs.')


def test_a_sweeps_page_shows_its_swept_keys_description_and_run_count(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    spec = {"name": "gains", "description": "Gi against W", "base": "zhb-og-single-hop", "seeds": [1],
            "axes": {"cm.gi": [1.0, 4.0]}, "zip": {"cm.w": [2.0, 8.0]}}
    (tmp_path / "sweep.json").write_text(json.dumps({"spec": spec, "runs": [{"run_id": "a"}, {"run_id": "b"}]}))
    pq.write_table(pa.table({"run_id": ["a", "b"], "cm.gi": [1.0, 4.0], "cm.w": [2.0, 8.0], "seed": [1, 1],
                             "status": ["ok", "ok"]}), tmp_path / "sweep.parquet")
    page = sweep_page(tmp_path)
    assert page.title == "cnsim sweep — gains"
    assert page.subtitle == ["Gi against W", "base zhb-og-single-hop · 2 runs · seeds [1]"]
    (runs,) = sections(page)["Sweep table"].tables
    assert runs.columns[:5] == ["run_id", "cm.gi", "cm.w", "seed", "status"]
    assert runs.rows == [["a", "1", "2", "1", "ok"], ["b", "4", "8", "1", "ok"]]


def test_run_pages_are_written_only_where_a_run_has_none(tmp_path: Path) -> None:
    done = run_folder(tmp_path / "runs" / "a", summary_json=GOOD, report_html="<p>kept</p>")
    fresh = run_folder(tmp_path / "runs" / "b", summary_json=GOOD)
    assert write_run_reports(tmp_path) == [fresh / "report.html"]
    assert (done / "report.html").read_text() == "<p>kept</p>" and "cnsim run — og" in (fresh / "report.html").read_text()
