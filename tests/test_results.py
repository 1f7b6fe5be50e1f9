"""Run folders: summary.json, series Parquet files, manifest, figures (results.py, plots.py).

The engine result here is built by the test (tests/_fake_engine.py): this checks the writer,
not the simulator.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from _fake_engine import engine_result
from cnsim import Result, load
from cnsim.results import decode_columns, decode_series, dump_json


def make(sid: str = "kd-symmetric-single-hs", **kw) -> Result:
    scen = load(sid).validate()
    return Result.from_engine(scen, engine_result(scen, **kw), manifest={"wall_s": 1.0})


def test_summary_adds_scenario_scheme_seed_fairness() -> None:
    r = make(per_flow_gbps={"EP0->EP4": 2.5, "EP1->EP4": 2.5, "EP2->EP4": 2.5, "EP3->EP4": 2.5})
    s = r.summary
    assert (s["scenario"], s["scheme"], s["seed"]) == ("kd-symmetric-single-hs", "none", 1)
    assert s["fairness"]["jain"] == pytest.approx(1.0)
    assert s["fairness"]["maxmin_rel_error"] == pytest.approx(0.0)
    assert r.fair_gbps == pytest.approx({f"EP{i}->EP4": 2.5 for i in range(4)})
    unfair = make(per_flow_gbps={"EP0->EP4": 5.0, "EP1->EP4": 5.0, "EP2->EP4": 0.0, "EP3->EP4": 0.0}).summary
    assert unfair["fairness"]["jain"] == pytest.approx(0.5)
    assert unfair["fairness"]["maxmin_rel_error"] == pytest.approx(1.0)


def test_fairness_null_without_selected_flows() -> None:
    scen = load("kd-symmetric-single-hs").set("metrics.per_flow", "none").validate()
    r = Result.from_engine(scen, engine_result(scen))
    assert r.summary["fairness"] == {"jain": None, "maxmin_rel_error": None}


def test_series_long_format() -> None:
    r = make()
    thr = r.series("throughput")
    assert thr.column_names == ["t_s", "entity", "gbps"]
    bins = 200
    assert thr.num_rows == (2 + 4) * bins
    rows = thr.to_pylist()
    assert rows[0] == {"t_s": pytest.approx(0.001), "entity": "aggregate", "gbps": 10.0}
    assert rows[bins] ["entity"] == "port:S1/EP4"
    q = r.series("queue")
    assert q.column_names == ["t_s", "queue", "bytes", "bytes_max", "bytes_mean"]
    assert q.to_pylist()[-1] == {"t_s": pytest.approx(0.2), "queue": "S1/EP4", "bytes": pytest.approx(200.0), "bytes_max": pytest.approx(400.0), "bytes_mean": pytest.approx(300.0)}
    assert r.series("rates").num_rows == 0 and r.series("rates").column_names == ["t_s", "flow", "gbps"]
    with pytest.raises(KeyError):
        r.series("nope")


def test_decode_columns_keeps_each_entitys_block_and_leaves_out_rows_without_a_value() -> None:
    """Entity-major columns: each entity's rows are one block (``rows``), its first bin
    included; a bin end where every value is NaN (a flow without a rate limiter yet) is left
    out; the ``flow:`` prefix of the rates goes, as ``port:`` does for queues."""
    nan = float("nan")
    gbps = np.array([1.0, 2.0, 3.0, nan, nan, 4.0, nan, nan, nan], "<f8")
    raw = {"entities": ["flow:a->b", "flow:c->d", "flow:e->f"], "bins": 3, "bin_s": 0.002, "columns": {"gbps": gbps.tobytes()}}
    long = decode_columns("rates", raw)
    assert long.names == ["a->b", "c->d", "e->f"]
    assert long.t_s.tolist() == [0.002, 0.004, 0.006, 0.006]
    assert long.codes.tolist() == [0, 0, 0, 1] and long.values["gbps"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert long.rows() == {"a->b": slice(0, 3), "c->d": slice(3, 4)}
    table = decode_series("rates", raw)
    assert table.column("flow").to_pylist() == ["a->b"] * 3 + ["c->d"]
    # a column the engine did not return is all NaN, so its rows go; no entities, no rows
    q = decode_columns("queue", {"entities": ["port:S1/1"], "bins": 2, "bin_s": 0.001, "columns": {"bytes": np.array([5.0, 6.0]).tobytes()}})
    assert q.names == ["S1/1"] and q.values["bytes"].tolist() == [5.0, 6.0] and np.isnan(q.values["bytes_max"]).all()
    assert q.rows() == {"S1/1": slice(0, 2)}
    empty = decode_columns("pause", None)
    assert empty.t_s.size == 0 and empty.rows() == {}
    with pytest.raises(KeyError, match="unknown series kind"):
        decode_columns("nope", raw)


def test_decode_rejects_wrong_sizes() -> None:
    with pytest.raises(ValueError, match="values for"):
        decode_series("pause", {"entities": ["a"], "bins": 3, "bin_s": 0.001, "columns": {"fraction": b"\0" * 16}})


def test_save_writes_the_run_folder(tmp_path: Path) -> None:
    r = make()
    out = r.save(tmp_path / "run")
    names = sorted(p.name for p in out.iterdir())
    assert names == ["manifest.json", "per_flow.png", "queue.png", "scenario.toml", "series", "summary.json", "throughput.png"]
    assert sorted(p.name for p in (out / "series").iterdir()) == ["pause.parquet", "queue.parquet", "throughput.parquet"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary == json.loads(dump_json(r.summary))
    assert "wall_s" not in json.dumps(summary)
    assert json.loads((out / "manifest.json").read_text())["wall_s"] == 1.0
    assert tomllib.loads((out / "scenario.toml").read_text())["metrics"]["hot_port"] == "S1/EP4"
    for kind in ("pause", "queue", "throughput"):  # written by cnsim.parquet, read by pyarrow
        assert pq.read_table(out / "series" / f"{kind}.parquet").equals(r.series(kind)), kind
    assert (out / "throughput.png").read_bytes()[:4] == b"\x89PNG"


def test_summary_json_is_deterministic(tmp_path: Path) -> None:
    a = make().save(tmp_path / "a", plots=False)
    b = make().save(tmp_path / "b", plots=False)
    assert (a / "summary.json").read_text() == (b / "summary.json").read_text()
    assert not (a / "throughput.png").exists()
    text = (a / "summary.json").read_text()
    assert list(json.loads(text)) == sorted(json.loads(text))


def test_dump_json_nulls_non_finite() -> None:
    assert json.loads(dump_json({"b": float("nan"), "a": [float("inf"), 1.5]})) == {"a": [None, 1.5], "b": None}


def test_figures_with_hotspots(tmp_path: Path) -> None:
    r = make("zhb-og-single-hop")
    out = r.save(tmp_path / "zhb")
    assert (out / "per_flow.png").stat().st_size > 1000


def test_summary_holds_the_named_windows_and_the_dynamics_of_targets_a() -> None:
    """Issue 12, item 2: windows.{all, ss, tr, rec}, per-source sent throughput, CM frames by
    kind and by CP, and the hot queue's dynamics, from a real run."""
    pytest.importorskip("cnsim._core")
    import cnsim

    s = cnsim.run("zhb-og-single-hop", set={"cm.scheme": "bcn"}, duration="0.3s").summary
    # the hotspot is [0.1, 0.5] s; the run ends at 0.3 s, so there is no recovery window
    assert set(s["windows"]) == {"all", "ss", "tr"}
    assert s["windows"]["all"]["window_s"] == [0.0, 0.3]
    assert s["windows"]["tr"]["window_s"] == [0.1, 0.15]
    ss = s["windows"]["ss"]
    assert ss["window_s"] == s["window_s"] == [0.2, 0.3]
    assert ss["throughput_gbps"]["aggregate"] == s["throughput_gbps"]["aggregate"]
    assert ss["throughput_gbps"]["hot_port"] == s["throughput_gbps"]["hot_port"]
    assert ss["queue_bytes"]["hot"]["mean"] == pytest.approx(s["queue_bytes"]["hot"]["mean"], rel=1e-12)
    assert ss["cm"]["frames"] == s["cm"]["frames"]
    # every node sends 8.5 Gb/s; some of it is held back by BCN during the hotspot
    sent = s["throughput_gbps"]["per_source_sent"]
    assert len(sent) == 16 and all(0 < v <= 8.6 for v in sent.values())
    assert sum(sent.values()) >= s["throughput_gbps"]["aggregate"] - 0.5
    by_kind, by_cp = s["cm"]["by_kind"], s["cm"]["by_cp"]
    assert sum(c["frames"] for c in by_kind.values()) == s["cm"]["frames"]
    assert set(by_cp) == {"S1/1"}, "BCN's only congested CP is the hot port"
    assert by_kind["negative"]["frames"] > 0
    assert 0 < s["dynamics"]["onset_s"] <= 0.05
    assert s["dynamics"]["recovery_s"] is None, "no hotspot end inside the run"
    # the rate CV of each selected flow (the 15 flows into the hot node) over W_ss
    cv = s["dynamics"]["flow_cv"]
    assert set(cv) == set(s["throughput_gbps"]["per_flow"]) and len(cv) == 15
    assert all(v is not None and v >= 0 for v in cv.values())


@pytest.mark.parametrize(
    ("sid", "hot"),
    [("zhb-og-single-hop", ["1"]), ("e2cm-non-cm-domain", ["6"]), ("kd-symmetric-single-hs", ["EP4"]),
     ("zhb-ig-single-hop", ["1"]), ("e2cm-fat-tree-16", ["1"])],
)
def test_hot_nodes_are_the_hotspots_and_the_oversubscribed_nodes(sid: str, hot: list[str]) -> None:
    from cnsim.runner import prepare

    assert prepare(sid).resolved.hot_nodes == hot


def _dynamics_from_series(res: Result, t_on: float, t_off: float, end: float, qeq: float | None, port: str) -> dict[str, float | None]:
    """summary.json's dynamics recomputed from the run's own saved series (docs/metrics.md)."""
    import math

    import pyarrow.compute as pc
    from cnsim import signals

    def finite(x: float) -> float | None:
        return round(x, 12) if math.isfinite(x) else None

    def entity(kind: str, column: str, name: str, value: str) -> tuple[np.ndarray, np.ndarray]:
        rows = res.series(kind).filter(pc.equal(pc.field(column), name))
        return rows.column("t_s").to_numpy(), rows.column(value).to_numpy()

    t, v = entity("queue", "queue", port, "bytes_mean")
    out: dict[str, float | None] = {"onset_s": finite(signals.first_peak_time(t, v, t_on, t_on + 0.05))}
    out["settle_s"] = None if qeq is None else finite(signals.settle_time(t[t <= t_off + 1e-12], v[t <= t_off + 1e-12], t_on, qeq))
    tt, g = entity("throughput", "entity", f"port:{port}", "gbps")
    keep = tt <= min(t_off + 0.1, end) + 1e-12
    out["recovery_s"] = finite(signals.sustained_time(tt[keep], g[keep], t_off, 8.5, 0.01))  # 0.85 of 10 Gb/s, held 10 ms
    # W_ss = [t_on + 100 ms, t_off] when the run holds it: the queue's period and the flows' time
    # CV are measured there, the CV over the whole run otherwise
    ss = (t_on + 0.1, min(t_off, end)) if t_on + 0.1 < min(t_off, end) else None
    out["period_s"] = None if ss is None else finite(signals.spectral_period(*signals.samples_in(t, v, ss)))
    cv_window = ss or (0.0, end)
    out["flow_cv"] = {
        name: finite(signals.time_cv(signals.samples_in(*entity("throughput", "entity", f"flow:{name}", "gbps"), cv_window)[1]))
        for name in res.summary["dynamics"]["flow_cv"]
    }
    assert out["flow_cv"], "the run records flows"
    return out


def test_summary_dynamics_are_the_series_measured_as_documented() -> None:
    """Onset, settle and recovery times of summary.json follow the saved series by the rules of
    docs/metrics.md: recovery to 85 % of the hot port's line rate held for 10 ms inside W_rec,
    settling within ±20 % of Qeq before the hotspot ends, or before the run ends when the
    overload has no end."""
    import cnsim

    hot = {"hotspots": [{"node": "1", "rate": 0.2, "start": "10ms", "end": "40ms"}]}
    plain = cnsim.run("zhb-og-single-hop", set=hot, duration="80ms")  # no scheme: the backlog drains at once
    dyn = plain.summary["dynamics"]
    assert dyn["recovery_s"] == 0.001 and dyn["settle_s"] is None
    expected = _dynamics_from_series(plain, 0.01, 0.04, 0.08, None, "S1/1")
    assert dyn["period_s"] is None and all(cv is not None for cv in dyn["flow_cv"].values())
    assert {k: dyn[k] for k in expected if k != "settle_s"} == {k: v for k, v in expected.items() if k != "settle_s"}
    longer = {"cm.scheme": "bcn", "hotspots": [{"node": "1", "rate": 0.2, "start": "10ms", "end": "150ms"}]}
    bcn = cnsim.run("zhb-og-single-hop", set=longer, duration="200ms")
    dyn = bcn.summary["dynamics"]
    assert dyn["settle_s"] is not None and dyn["recovery_s"] is not None and dyn["period_s"] is not None
    expected = _dynamics_from_series(bcn, 0.01, 0.15, 0.2, 150_000.0, "S1/1")
    assert {k: dyn[k] for k in expected} == expected
    # an overload without an end: settling is measured up to the end of the run, and nothing recovers
    open_ended = cnsim.run("kd-symmetric-single-hs", set={"cm.scheme": "bcn", "traffic.start": "30ms"}, duration="120ms")
    dyn = open_ended.summary["dynamics"]
    qeq = float(load("kd-symmetric-single-hs").set("cm.scheme", "bcn").resolved.cm["qeq"])
    expected = _dynamics_from_series(open_ended, 0.03, 0.12, 0.12, qeq, "S1/EP4")
    assert dyn["settle_s"] is not None and dyn["settle_s"] == expected["settle_s"] and dyn["recovery_s"] is None


def test_the_dynamics_at_the_edges_of_their_windows() -> None:
    """The edges of the measurements, on series built for them (1 ms bins, hotspot from 0.1
    to 0.5 s, W_rec = [0.5, 0.6] s): a queue inside Qeq ± 20 % over exactly the last 5 ms of the
    hotspot has settled, its bin ending at 0.5 s included; a port back at line rate for exactly
    the last 10 ms of W_rec has recovered, its bin ending at 0.6 s included, and so has one back
    for less that lasts to the window's end (nothing breaks it; results version 3); the onset's
    peak is looked for in W_tr only."""
    from cnsim.results import hot_dynamics

    scen = load("zhb-og-single-hop").set("cm.scheme", "bcn").set("duration", "0.7s").validate()
    assert scen.resolved.windows_ps["rec"] == (500_000_000_000, 600_000_000_000)
    t = np.round(np.arange(1, 701) * 1e-3, 12)
    queue = np.where(t >= 0.495 - 1e-12, 150_000.0, 0.0)  # inside the band from the bin ending at 0.495 s on
    port = np.where(t >= 0.591 - 1e-12, 10.0, 0.0)  # at line rate from the bin ending at 0.591 s on

    def raw(entity: str, column: str, values: np.ndarray) -> dict[str, object]:
        return {"entities": [entity], "bins": 700, "bin_s": 0.001, "columns": {column: values.astype("<f8").tobytes()}}

    dyn = hot_dynamics(scen, {"queue": raw("port:S1/1", "bytes_mean", queue), "throughput": raw("port:S1/1", "gbps", port)})
    assert dyn["settle_s"] == 0.395 and dyn["recovery_s"] == 0.091
    # flows these series do not hold have no samples, so no CV (not another entity's rows)
    assert dyn["flow_cv"] and all(cv is None for cv in dyn["flow_cv"].values())
    # the onset is looked for in W_tr only: a queue that grows for 60 ms peaks, there, at its end
    rising = np.where(t <= 0.16 + 1e-12, np.maximum(t - 0.1, 0.0) * 1e7, 0.0)
    assert hot_dynamics(scen, {"queue": raw("port:S1/1", "bytes_mean", rising)})["onset_s"] == 0.05
    # one bin less on either side: the queue has not settled; the port's return, 9 ms up to the
    # end of W_rec, counts, while a return of 9 ms that falls back inside the window does not
    late = hot_dynamics(scen, {"queue": raw("port:S1/1", "bytes_mean", np.where(t >= 0.496 - 1e-12, 150_000.0, 0.0)),
                               "throughput": raw("port:S1/1", "gbps", np.where(t >= 0.592 - 1e-12, 10.0, 0.0))})
    assert late["settle_s"] is None and late["recovery_s"] == 0.092
    brief = np.where((t >= 0.582 - 1e-12) & (t <= 0.590 + 1e-12), 10.0, 0.0)
    assert hot_dynamics(scen, {"throughput": raw("port:S1/1", "gbps", brief)})["recovery_s"] is None


def test_summary_json_is_written_in_one_byte_format() -> None:
    """Identical summaries must be identical files: sorted keys, two-space indent, a final newline."""
    assert dump_json({"b": 1, "a": [1.5, None]}) == '{\n  "a": [\n    1.5,\n    null\n  ],\n  "b": 1\n}\n'


def test_a_result_carries_the_fair_shares_of_its_flows_in_gbps() -> None:
    import cnsim

    res = cnsim.run("zhb-og-single-hop", duration="2ms")
    assert res.fair_gbps["2->1"] == pytest.approx(8.5 / 15, rel=1e-12)  # before the hotspot: 85 % of 10 Gb/s over 15 senders
    assert set(res.fair_gbps) == {f"{s}->1" for s in range(2, 17)}
