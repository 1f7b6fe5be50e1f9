"""Input validation (audit s30): non-finite cm numbers, the ranges and relations of the schemes'
parameters, floors of periodic times, switch memory against one frame, fat-tree shapes, error
keys of union fields, the star's port limit and numbers of other numeric types (numpy).

Each bad value is refused as a :class:`ScenarioError` (exit 2 on the command line) whose
problem names the key; nothing here simulates, except the CLI check that a NaN no longer
reaches the engine.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _scenarios import BASE, refused, scen
from cnsim import load
from cnsim.cmparams import FAST_PERIOD_FLOOR_PS, PERIOD_FLOOR_PS, SCHEMES, Param
from cnsim.keys import all_keys
from cnsim.scenario import Scenario
from cnsim.scenario.schema import ScenarioDoc


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cnsim.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# ---- H1: NaN and infinities ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "key", "value"),
    [
        ("bcn", "cm.ps", float("nan")),
        ("bcn", "cm.w", float("inf")),
        ("bcn", "cm.w", float("-inf")),
        ("bcn", "cm.gd", float("nan")),
        ("qcn", "cm.gd", float("nan")),
        ("qcn", "cm.pmax", float("nan")),
        ("qcn", "cm.jitter", float("nan")),
        ("qcn", "cm.min_dec", float("nan")),
        ("dcqcn", "cm.g", float("nan")),
        ("fecn", "cm.a", float("inf")),
        ("fecn", "cm.ewma", float("nan")),
        ("qcn-plus", "cm.factor", float("inf")),
        ("e2cm", "cm.gd_flow", float("nan")),
        ("bcn", "cm.presets.qcn.gd", float("nan")),
    ],
)
def test_non_finite_cm_numbers_are_refused_by_name(scheme: str, key: str, value: float) -> None:
    refused(scen(scheme, **{key: value}), key, "not a finite number")


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_integer_is_a_message_not_a_traceback(value: float) -> None:
    refused(scen("bcn", cm__fb_bits=value), "cm.fb_bits", "an integer")


def test_a_nan_w_is_blamed_on_w_not_on_the_gains_computed_from_it() -> None:
    err = refused(scen("bcn", cm__w=float("nan")), "cm.w")
    assert [p.key for p in err.problems] == ["cm.w"]


def test_a_nan_no_longer_reaches_the_engine(tmp_path: Path) -> None:
    res = cli("run", BASE, "--set", "cm.scheme=bcn", "--set", "cm.ps=nan", "--duration", "2ms", "--no-plots", "--quiet", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "cm.ps" in res.stderr and "not a finite number" in res.stderr and "Traceback" not in res.stderr
    assert "internal error" not in res.stderr


# ---- M7: the control frame's size --------------------------------------------------------


def test_cnm_size_has_the_range_of_a_data_frame() -> None:
    frame = ScenarioDoc.model_fields["traffic"].annotation.model_fields["frame_size"]  # type: ignore[union-attr]
    bounds = {type(m).__name__: m for m in frame.metadata}
    lo, hi = bounds["Ge"].ge, bounds["Le"].le
    param = SCHEMES["bcn"]["cnm_size"]
    assert (param.lo, param.hi) == (lo, hi) == (64, 65_536)
    for bad in ("0B", "63B", "65537B", "1000MB"):
        refused(scen("bcn", cm__cnm_size=bad), "cm.cnm_size", "out of range")
    # an expression's result is checked too (m = 150 KB)
    refused(scen("bcn", cm__cnm_size="m"), "cm.cnm_size", "out of range")
    for ok in ("64B", "65536B"):
        assert scen("bcn", cm__cnm_size=ok).resolved.cm["cnm_size"] == int(ok[:-1])


# ---- M8: ranges and relations of scheme parameters ------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "overrides", "key", "fragment"),
    [
        ("bcn", {"cm.rmin": "20Gbps"}, "cm.rmin", "link rate"),
        ("bcn", {"cm.ru": "20Gbps", "cm.rmin": "1Mbps"}, "cm.ru", "link rate"),
        ("qcn", {"cm.rmin": "11Gbps"}, "cm.rmin", "link rate"),
        ("dcqcn", {"links.rate": "50Mbps"}, "cm.rmin", "link rate"),  # the 100 Mb/s default
        ("bcn", {"cm.pmin": 0.5, "cm.pmax": 0.1}, "cm.pmin", "at most cm.pmax"),
        ("qcn", {"cm.pmin": 0.2}, "cm.pmin", "at most cm.pmax"),
        ("bcn", {"cm.sampling": "jitter", "cm.sample_bytes": "5KB", "cm.sample_jitter": "6KB"}, "cm.sample_jitter", "at most cm.sample_bytes"),
        ("bcn", {"cm.sampling": "interval", "cm.sample_bytes": 0}, "cm.sample_bytes", "out of range"),
        ("qcn", {"cm.sampling": "interval", "cm.sample_bytes": 0}, "cm.sample_bytes", "out of range"),
        ("e2cm", {"cm.probe_bytes": 0}, "cm.probe_bytes", "out of range"),
        ("e2cm", {"cm.qeq_flow": 0}, "cm.qeq_flow", "out of range"),
        ("e2cm", {"cm.qeq_flow": "qeq - qeq"}, "cm.qeq_flow", "out of range"),
        ("e2cm", {"cm.qeq_flow": "10KB", "cm.qmax_flow": "5KB"}, "cm.qmax_flow", "at least cm.qeq_flow"),
        ("bcn", {"cm.qeq": 0, "cm.fb_bits": 8}, "cm.qeq", "out of range"),
        ("bcn", {"cm.qeq": 0}, "cm.qeq", "out of range"),
        ("qcn", {"cm.drift_rate": "4Mbps", "cm.drift_period": 0}, "cm.drift_period", ">= 1us"),
        ("bcn", {"cm.drift_rate": "4Mbps", "cm.drift_period": "1ns"}, "cm.drift_period", ">= 1us"),
        ("qcn-sonar", {"cm.wp": 0}, "cm.wp", ">= 1us"),
        ("qcn-sonar", {"cm.nc_interval": 0}, "cm.nc_interval", ">= 1us"),
        ("qcn-plus", {"cm.probe_period": "1ps"}, "cm.probe_period", ">= 1us"),
        ("dcqcn", {"cm.kmin": "300KB", "cm.kmax": "200KB"}, "cm.kmin", "at most cm.kmax"),
    ],
)
def test_nonsensical_scheme_parameters_are_refused(scheme: str, overrides: dict[str, Any], key: str, fragment: str) -> None:
    s = scen(scheme)
    for k, v in overrides.items():
        s.set(k, v)
    refused(s, key, fragment)


def test_the_relations_accept_their_boundaries() -> None:
    s = scen("bcn", cm__rmin="10Gbps", cm__pmin=0.1, cm__pmax=0.1, cm__sample_bytes="5KB", cm__sample_jitter="5KB")
    assert s.resolved.cm["rmin"] == 10**10
    assert scen("e2cm", cm__qeq_flow="5KB", cm__qmax_flow="5KB").resolved.cm["qmax_flow"] == 5000
    assert scen("qcn-plus", cm__probe_period="1us").resolved.cm["probe_period"] == 10**6


# ---- open bounds (stop 31): what the engine used to be the first to refuse ------------------


@pytest.mark.parametrize(
    ("scheme", "key", "value", "allowed"),
    [
        ("qcn", "cm.jitter", 1.0, "in [0, 1)"),
        ("qcn-sonar", "cm.jitter", 1.0, "in [0, 1)"),
        ("fecn", "cm.a", 1.0, "> 1"),
        ("fecn", "cm.b", 0.5, "> 1"),
        ("fecn", "cm.c", 0.0, "> 0"),
        ("fecn", "cm.ewma", 0.0, "in (0, 1]"),
        ("dcqcn", "cm.rate_on_first_cnp", 0.0, "in (0, 1]"),
        ("fecn", "cm.c", "b - b", "> 0"),  # an expression is held to the same range
    ],
)
def test_open_bounds_are_refused_by_the_front_end(scheme: str, key: str, value: Any, allowed: str) -> None:
    s = scen(scheme)
    s.set(key, value)
    refused(s, key, "out of range", allowed)


def test_open_bounds_accept_what_is_inside() -> None:
    assert scen("qcn", cm__jitter=0.999).resolved.cm["jitter"] == 0.999
    assert scen("fecn", cm__a=1.0001, cm__c=1e-9, cm__ewma=1.0).resolved.cm["ewma"] == 1.0
    assert scen("dcqcn", cm__rate_on_first_cnp=1.0).resolved.cm["rate_on_first_cnp"] == 1.0


@pytest.mark.parametrize(
    ("param", "text"),
    [
        (Param(kind="rate", default=1, lo=0, lo_open=True), 'a rate (bit/s, or e.g. "10Mbps") > 0bps'),
        (Param(kind="size", default=1, lo=1500, hi=10**6, hi_open=True), "in [1500B, 1MB)"),
        (Param(kind="int", default=1, lo=1, hi=8, hi_open=True), "an integer in [1, 8)"),
        (Param(kind="int", default=1, lo=0, lo_open=True), "an integer > 0"),
    ],
)
def test_every_kind_states_its_open_bounds(param: Param, text: str) -> None:
    """No shipped quantity or integer has an open bound yet; the message must still say it."""
    assert text in param.allowed()
    bound = param.lo if param.lo_open else param.hi
    assert bound is not None and not param.contains(bound)


def test_rmin_is_checked_against_the_slowest_node() -> None:
    """A graph whose node 2 has a 100 Mb/s link: rmin = 1 Gb/s is too fast for it."""
    s = Scenario(
        {
            "duration": "2ms",
            "topology": {
                "kind": "graph",
                "nodes": ["1", "2"],
                "switches": ["S1"],
                "links": [{"a": "1", "b": "S1"}, {"a": "2", "b": "S1", "rate": "100Mbps"}],
            },
            "traffic": {"flows": [{"src": "1", "dst": "2", "rate": "50Mbps"}]},
            "cm": {"scheme": "qcn", "rmin": "1Gbps"},
        },
        "two-speeds",
    )
    err = refused(s, "cm.rmin", "node 2", "100Mbps")
    assert "100Mbps" in str(err)


# ---- H8: floors of periodic times ---------------------------------------------------------


def test_fecn_interval_has_a_physical_floor() -> None:
    refused(scen("fecn", cm__interval="1ps"), "cm.interval", ">= 1us")
    refused(scen("fecn", cm__interval="1ns"), "cm.interval", ">= 1us")
    assert scen("fecn", cm__interval="1us").resolved.cm["interval"] == 10**6


PERIODS = {
    "bcn": ["drift_period"],
    "e2cm": ["drift_period"],
    "qcn": ["timer", "drift_period"],
    "qcn-sonar": ["wp", "we", "sf", "nc_interval"],
    "qcn-plus": ["probe_period", "timer"],
    "dcqcn": ["alpha_timer", "timer", "cnp_interval", "decrease_interval"],
    "dcqcn-nic": ["alpha_timer", "timer", "cnp_interval", "decrease_interval"],
    "fecn": ["interval"],
}


@pytest.mark.parametrize(("scheme", "name"), [(s, n) for s, names in PERIODS.items() for n in names])
def test_periodic_times_have_floors_below_every_default(scheme: str, name: str) -> None:
    param = SCHEMES[scheme][name]
    assert param.lo in (PERIOD_FLOOR_PS, FAST_PERIOD_FLOOR_PS)
    assert "at least" in param.doc  # docs/keys.md shows the floor
    default = load(BASE).set("cm.scheme", scheme).resolved.cm[name]
    assert default == "auto" or default >= 10 * param.lo  # well below the default
    refused(scen(scheme, **{f"cm.{name}": "1ps"}), f"cm.{name}", "out of range")


def test_the_key_reference_states_the_floors() -> None:
    by_name = {k.name: k for k in all_keys()}
    assert ">= 1us" in by_name["cm.interval"].allowed and "at least 1us" in by_name["cm.interval"].doc
    assert ">= 1us" in by_name["metrics.deadlock_threshold"].allowed
    assert "[64B, 65536B]" in by_name["cm.cnm_size"].allowed


# ---- H9: the deadlock threshold -----------------------------------------------------------


def test_deadlock_threshold_has_a_floor() -> None:
    refused(scen(metrics__deadlock_threshold="1ps"), "metrics.deadlock_threshold", "at least 1us")
    refused(scen(metrics__deadlock_threshold="999ns"), "metrics.deadlock_threshold", "at least 1us")
    assert scen(metrics__deadlock_threshold="1us").resolved.doc.metrics.deadlock_threshold == 10**6


# ---- M9: switch memory holds one frame ----------------------------------------------------


@pytest.mark.parametrize(
    ("base", "overrides"),
    [
        ("kd-symmetric-single-hs", {"switch.memory_per_port": "1B"}),
        ("kd-symmetric-single-hs", {"switch.memory_per_port": "1B", "switch.buffer": "partitioned"}),
        ("kd-symmetric-single-hs", {"switch.memory_per_port": "1B", "switch.buffer": "shared"}),
        (BASE, {"switch.pause": False, "switch.memory_per_port": "100B"}),
        (BASE, {"traffic.frame_size": "9000B", "switch.memory_per_port": "5KB"}),
    ],
)
def test_switch_memory_must_hold_one_frame(base: str, overrides: dict[str, Any]) -> None:
    s = load(base)
    for k, v in overrides.items():
        s.set(k, v)
    refused(s, "switch.memory_per_port", "at least one frame")


def test_switch_memory_of_one_frame_is_enough_without_pause() -> None:
    assert scen(switch__pause=False, switch__memory_per_port="1500B").resolved.memory_per_port == 1500


# ---- M10 and L1: fat trees, stars ----------------------------------------------------------


def test_a_fat_tree_needs_two_hosts() -> None:
    s = scen(topology__kind="fat_tree", topology__fat_tree={"radix": 2, "levels": 8})
    err = refused(s, "topology.fat_tree.radix", "at least 2 nodes")
    assert [p.key for p in err.problems] == ["topology.fat_tree.radix"]  # no node-name follow-ups
    # radix 2 with a merged top has two hosts
    assert ScenarioDoc.model_validate({"duration": "1ms", "topology": {"kind": "fat_tree", "fat_tree": {"radix": 2, "levels": 2, "merged_top": True}}})


def test_a_bad_radix_is_the_only_message() -> None:
    err = refused(load("e2cm-fat-tree-16").set("topology.fat_tree.radix", 3), "topology.fat_tree.radix", "even")
    assert [p.key for p in err.problems] == ["topology.fat_tree.radix"]
    assert "hotspots" not in str(err)


def test_fat_tree_without_its_shape_is_one_message() -> None:
    err = refused(scen(topology__kind="fat_tree"), "topology.fat_tree", "needs")
    assert [p.key for p in err.problems] == ["topology.fat_tree"]


def test_a_fat_tree_switch_within_the_engines_port_limit() -> None:
    s = scen(topology__kind="fat_tree", topology__fat_tree={"radix": 131_072, "levels": 1}, hotspots=[])
    refused(s, "topology.fat_tree.radix", "65534")


def test_a_star_larger_than_a_switch_is_refused_up_front() -> None:
    started = time.perf_counter()
    refused(scen(topology__nodes=65_535, hotspots=[]), "topology.nodes", "at most 65534 nodes")
    assert time.perf_counter() - started < 5


def test_fecn_n0_has_an_upper_bound() -> None:
    refused(scen("fecn", cm__n0=1e300), "cm.n0", "out of range")
    assert scen("fecn", cm__n0=1e6).resolved.cm["n0"] == 1e6


def test_qcn_plus_to_threshold_is_refused_under_its_own_name() -> None:
    refused(scen("qcn-plus", cm__to_threshold=0), "cm.to_threshold", "out of range")


def test_union_member_names_stay_out_of_the_key() -> None:
    err = refused(scen(switch__cp_ports="some"), "switch.cp_ports", '"all" or a list')
    assert [p.key for p in err.problems] == ["switch.cp_ports"]
    assert "literal" not in str(err) and "list[str]" not in str(err)
    # a list with a bad item: the item is named
    err = refused(scen(switch__cp_ports=["S1/1", 5]), "switch.cp_ports.1")
    assert "literal" not in str(err)


# ---- L6: numbers of other numeric types ------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "plain"),
    [
        ("topology.nodes", np.int64(8), 8),
        ("traffic.frame_size", np.int64(1000), 1000),
        ("links.rate", np.int64(10**9), 10**9),
        ("cm.fb_bits", np.int64(8), 8),
        ("cm.w", np.int64(3), 3),
        ("cm.qeq", np.int64(30_000), 30_000),
        ("cm.ps", np.float32(0.5), 0.5),
    ],
)
def test_numpy_numbers_are_numbers(key: str, value: Any, plain: Any) -> None:
    a = scen("bcn", hotspots=[]).set(key, value)
    b = scen("bcn", hotspots=[]).set(key, plain)
    assert a.lower() == b.lower()


def test_a_boolean_is_not_a_node_count() -> None:
    refused(scen(hotspots=[], topology__nodes=True), "topology.nodes")


@pytest.mark.parametrize("value", [True, [8], {"bits": 8}, "8 bits"])
def test_an_integer_parameter_refuses_booleans_lists_and_words(value: Any) -> None:
    refused(scen("bcn", cm__fb_bits=value), "cm.fb_bits", "an integer")


def test_an_integer_parameter_takes_a_whole_number_in_any_spelling() -> None:
    for value in (8, 8.0, "8"):
        assert scen("bcn", cm__fb_bits=value).resolved.cm["fb_bits"] == 8
    refused(scen("bcn", cm__fb_bits=8.5), "cm.fb_bits", "an integer")


def test_a_boolean_parameter_takes_true_false_and_their_words_only() -> None:
    assert scen("qcn", cm__efr="true").resolved.cm["efr"] is True
    assert scen("qcn", cm__efr="false").resolved.cm["efr"] is False
    assert scen("qcn", cm__efr=False).resolved.cm["efr"] is False
    for value in ("yes", 1, "True"):
        refused(scen("qcn", cm__efr=value), "cm.efr", "true or false")
