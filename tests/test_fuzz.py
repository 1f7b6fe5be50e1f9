"""Property-based fuzzing of scenario documents and ``--set`` values (issue 13).

Every generated input must end in one of two ways: it is accepted (the scenario resolves, the
engine builds it, and a small enough one runs to the end, its frames accounted for), or it is
refused with a :class:`cnsim.ScenarioError` (exit 2 on the command line). Never another
exception, a Rust panic (pyo3's ``PanicException``), an abort or a hang (Hypothesis' deadline).

A third test runs shipped scenarios with plausible changes (scheme, buffers, PAUSE, rates,
delays, frame sizes, adapters, sampling), their hotspots moved into a few milliseconds, and
checks what must hold of every run: conservation, fractions in [0, 1], ordered queue
statistics, the same summary twice, and no switch drop with PAUSE and the headroom of
docs/decisions.md's "PAUSE headroom" (D12's "auto" watermarks leave a frame too little for
some phases, by the specification's formula).

``CNSIM_FUZZ_EXAMPLES`` sets the number of cases (CI: 1,000 documents and 300 ``--set``
values; docs/robustness.md gives the nightly size). The cases are the same on every run (CI must
not turn red by chance); ``CNSIM_FUZZ_SEED=N`` draws other ones, a different set for each N (a
failure names its seed, so it can be run again).
"""

from __future__ import annotations

import copy
import math
import os
import tomllib
from importlib import resources
from typing import Any

import cnsim
import pytest
from cnsim import budget
from cnsim.cmparams import SCHEMES
from cnsim.errors import ScenarioError
from cnsim.keys import all_keys
from cnsim.scenario import Scenario, parse_set_value
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

_core = pytest.importorskip("cnsim._core")

EXAMPLES = int(os.environ.get("CNSIM_FUZZ_EXAMPLES", "1000"))
#: None: the derandomised cases of every CI run; a number: other cases, drawn from this seed
SEED = int(os.environ["CNSIM_FUZZ_SEED"]) if os.environ.get("CNSIM_FUZZ_SEED") else None
#: Accepted cases up to this many estimated events are also run to the end.
RUN_EVENTS = 3e5

BASES = ["zhb-og-single-hop", "zhb-og-multi-hop", "qcnp-ig-baseline", "kd-symmetric-single-hs", "e2cm-fat-tree-16", "eval-sh-og-2g", "zhb-sweeping-hotspot"]
_DOCS = {sid: tomllib.loads((resources.files("cnsim") / "scenarios" / f"{sid}.toml").read_text(encoding="utf-8")) for sid in BASES}

#: Keys worth mutating besides those each base document has: every key of the reference
#: (cnsim.keys, generated from the validating code; ``[]`` → the first element), and a few that
#: do not exist.
EXTRA_KEYS = sorted(
    {k.name.replace("[]", ".0") for k in all_keys() if "<" not in k.name} | {"hotspots", "traffic.flows", "bogus", "cm.bogus", "switch.bogus"}
)


def _flatten(doc: Any, prefix: str = "") -> list[str]:
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            key = f"{prefix}{k}"
            out.append(key)
            out.extend(_flatten(v, key + "."))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            key = f"{prefix}{i}"
            out.append(key)
            out.extend(_flatten(v, key + "."))
    return out


_units = st.sampled_from(["", "ps", "ns", "us", "ms", "s", "bps", "Kbps", "Gbps", "B", "KB", "MB", "KiB", "x", "%"])
_numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, -1, 0.5, 1e-30, 1e30, 1e308, 2**63, 2**64, 10**20]),
)
_quantities = st.builds(lambda n, u: f"{n}{u}", _numbers, _units)
_words = st.sampled_from(["none", "bcn", "qcn", "auto", "hotspot", "run", "shared", "partitioned", "egress", "S1", "S1/1", "1", "2", "gd0*2", "m/4", "(", "1/0", "gd", "qeq*qeq*1e300", "uniform", "geometric"])
#: Plausible values reach deeper than garbage: they pass the first checks and meet later ones.
_plausible = st.one_of(
    st.integers(min_value=0, max_value=200),
    st.floats(min_value=0.0, max_value=2.0),
    st.builds(lambda n, u: f"{n}{u}", st.sampled_from([0, 1, 2, 10, 64, 150, 1500, 0.5, 1.5, 100]), st.sampled_from(["us", "ms", "s", "Gbps", "Mbps", "KB", "B", "MB"])),
)
_scalars = st.one_of(_plausible, _plausible, _numbers, _quantities, _words, st.text(max_size=20), st.booleans())
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "node", "rate", "start", "end", "src", "dst", "radix", "levels"]), inner, max_size=4)), max_leaves=8)


_KEYS = {k.name.replace("[]", ".0"): k for k in all_keys()}
_TYPED = {
    "time": st.builds(lambda n, u: f"{n}{u}", st.sampled_from([0, 1, 5, 20, 100, 250, 0.5]), st.sampled_from(["ns", "us", "ms"])),
    "rate": st.builds(lambda n, u: f"{n}{u}", st.sampled_from([1, 5, 10, 40, 100, 0.5]), st.sampled_from(["Mbps", "Gbps"])),
    "size": st.builds(lambda n, u: f"{n}{u}", st.sampled_from([0, 64, 1500, 24, 150, 600, 1.5]), st.sampled_from(["B", "KB", "MB"])),
    "bool": st.booleans(),
    "fraction": st.floats(min_value=0.0, max_value=1.0),
    "number": st.floats(min_value=0.0, max_value=10.0),
    "integer": st.integers(min_value=0, max_value=64),
}


def _typed_value(key: str) -> st.SearchStrategy[Any]:
    """A value of the key's own type (from the key reference): most such values are accepted, so
    the case reaches resolution and the engine rather than stopping at the first check."""
    parts = key.split(".")
    if parts[:2] == ["cm", "presets"] and len(parts) == 4:  # a preset's parameter: the cm key's type
        key = f"cm.{parts[3]}"
    k = _KEYS.get(key)
    if k is None:
        return _values
    if k.type == "choice":
        choices = [c.strip().strip('"') for c in k.allowed.removeprefix("one of ").replace(" | ", ",").split(",")]
        return st.sampled_from(choices)
    return _TYPED.get(k.type.split(" ")[0], _values)


def _set_path(doc: dict[str, Any], key: str, value: Any, delete: bool) -> None:
    parts = key.split(".")
    node: Any = doc
    for p in parts[:-1]:
        if isinstance(node, list):
            if not p.isdigit() or int(p) >= len(node):
                return
            node = node[int(p)]
        elif isinstance(node, dict):
            node = node.setdefault(p, {})
        else:
            return
    last = parts[-1]
    if isinstance(node, dict):
        if delete:
            node.pop(last, None)
        else:
            node[last] = value
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        if delete:
            node.pop(int(last))
        else:
            node[int(last)] = value


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    sid = draw(st.sampled_from(BASES))
    doc = copy.deepcopy(_DOCS[sid])
    keys = sorted(set(_flatten(doc)) | set(EXTRA_KEYS))
    if draw(st.booleans()):  # half the cases run a scheme, so that cm parameters apply
        doc.setdefault("cm", {})["scheme"] = draw(st.sampled_from(sorted(SCHEMES)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        key = draw(st.sampled_from(keys))
        value = draw(st.one_of(_typed_value(key), _typed_value(key), _values))
        _set_path(doc, key, value, draw(st.booleans()) and draw(st.booleans()))
    # keep most cases short enough to run; the duration is mutated like any other key too
    if draw(st.integers(0, 9)) < 8:
        doc["duration"] = draw(st.sampled_from(["0.2ms", "1ms", "3ms"]))
    return sid, doc


def _exercise(scen: Scenario) -> None:
    """Resolve, estimate, build in the engine and (when small) run — or raise ScenarioError."""
    scen.validate()
    core = scen.lower()
    est = budget.estimate(core)
    if est.events <= RUN_EVENTS and est.memory_bytes < 2**31:
        _check_invariants(cnsim.run(scen).summary, scen)
    else:
        _core.Simulation(scen.core_json())


_fuzz = settings(max_examples=EXAMPLES, deadline=20_000, suppress_health_check=list(HealthCheck), derandomize=SEED is None, database=None)


@_fuzz
@seed(SEED)
@given(documents())
def test_fuzzed_documents_are_accepted_or_refused(case: tuple[str, dict[str, Any]]) -> None:
    sid, doc = case
    try:
        _exercise(Scenario(doc, f"fuzz-{sid}", "fuzz"))
    except ScenarioError:
        pass


@settings(max_examples=max(EXAMPLES // 3, 10), deadline=20_000, suppress_health_check=list(HealthCheck), derandomize=SEED is None, database=None)
@seed(SEED)
@given(st.sampled_from(BASES), st.sampled_from(sorted(EXTRA_KEYS)), st.one_of(st.text(max_size=30), _quantities, _words))
def test_fuzzed_set_values_are_accepted_or_refused(sid: str, key: str, text: str) -> None:
    try:
        scen = cnsim.load(sid)
        scen.set("duration", "0.5ms")
        scen.set(key, parse_set_value(text))
        _exercise(scen)
    except ScenarioError:
        pass


def _check_invariants(s: Any, scen: Scenario) -> None:
    """What holds of every run's summary.json, whatever the scenario."""
    c = s["conservation"]
    assert c["in_flight"] == c["in_flight_counted"], c
    assert c["generated"] == c["delivered"] + c["dropped"] + c["source_dropped"] + c["in_flight"], c
    for k in ("paused_fraction", "paused_fraction_all", "source_blocked_fraction", "underrun"):
        assert 0.0 <= s[k] <= 1.0, (k, s[k])
    for name, q in s["queue_bytes"].items():
        assert 0.0 <= q["mean"] <= q["max"] * (1 + 1e-12) and q["std"] >= 0.0, (name, q)
    jain = s["fairness"]["jain"]
    assert jain is None or 0.0 < jain <= 1.0 + 1e-12, jain
    # bytes count when their last bit leaves: a frame that straddles the window's start, or a
    # hotspot's start (begun at the old rate, D16), counts inside it (docs/metrics.md)
    doc, net, (t0, t1) = scen.resolved.doc, scen.resolved.network, s["window_s"]
    frame_bits = int(doc.traffic.frame_size) * 8
    for kind in ("per_node", "per_source_sent"):
        for node, gbps in s["throughput_gbps"][kind].items():
            assert gbps * 1e9 * (t1 - t0) <= net.node_rate(node) * (t1 - t0) + frame_bits, (kind, node, gbps)
    util = s["bottleneck_utilisation"]
    assert util >= 0.0, util
    if util > 1.0:
        served = s["throughput_gbps"]["hot_port"] * 1e9 * (t1 - t0)
        assert served - served / util <= (1 + len(doc.hotspots)) * frame_bits, (util, served)


#: Shipped scenarios a few milliseconds of which run in well under a second.
RUN_BASES = [
    "dcqcn-incast-2to1", "e2cm-fat-tree-16", "e2cm-mixed-speed-ig", "e2cm-mixed-speed-og", "e2cm-non-cm-domain", "eval-baseline",
    "eval-mh-og-0.5g", "eval-mh-og-0g", "eval-sh-og-0g", "eval-sh-og-2g", "kd-symmetric-single-hs", "qcnp-20-stage", "qcnp-ig-100-sources",
    "qcnp-ig-baseline", "qcnp-og-single-hop", "qcnp-parking-lot", "ring-6-deadlock", "zhb-dual-cp-heavy-light", "zhb-dual-cp-light-heavy",
    "zhb-ig-single-hop", "zhb-og-multi-hop-bg", "zhb-og-multi-hop", "zhb-og-single-hop", "zhb-sweeping-hotspot",
]
#: Plausible values of the keys that shape a run; a case changes up to four of them. "hotspot
#: rate" sets every hotspot's rate.
PERTURB: dict[str, list[Any]] = {
    "switch.memory_per_port": ["30KB", "100KB", "150KB", "1MB"],
    "switch.buffer": ["shared", "partitioned", "egress"],
    "switch.pause": [True, False],
    "switch.pfc_classes": [0, 2],
    "switch.processing_delay": ["0us", "1us"],
    "links.delay": ["0us", "1us", "10us", "100us"],
    "links.rate": ["1Gbps", "10Gbps", "40Gbps"],
    "traffic.load": [0.3, 0.85, 1.0],
    "traffic.frame_size": ["64B", "1500B", "9000B"],
    "nic.ingress": ["per_voq", "shared", "unlimited"],
    "nic.ingress_size": ["30KB", "150KB"],
    "nic.on_full": ["block", "drop"],
    "nic.egress_buffer": ["1500B", "9000B", "30KB"],
    "cm.feedback": ["oob"],
    "cm.sample_at": ["departure"],
    "cm.sampling": ["random", "interval", "jitter", "table", "linear"],
    "cm.fb_bits": [0, 6],
    "cm.w": [0, 2, 16],
    "cm.ps": [0.01, 0.2, 1.0],
    "cm.qeq": ["5KB", "33KB", "300KB"],
    "hotspot rate": [0.0, 0.2, 1.0],
}


@st.composite
def perturbed_runs(draw: st.DrawFn) -> tuple[str, dict[str, Any], bool]:
    sid = draw(st.sampled_from(RUN_BASES))
    sets: dict[str, Any] = {"duration": "4ms", "metrics.bin": "100us", "metrics.window": "run", "cm.scheme": draw(st.sampled_from(sorted(SCHEMES)))}
    for key in draw(st.lists(st.sampled_from(sorted(PERTURB)), max_size=4, unique=True)):
        sets[key] = draw(st.sampled_from(PERTURB[key]))
    return sid, sets, draw(st.booleans())


def _lossless_xoff(scen: Scenario) -> str:
    """An XOFF whose headroom provably suffices (docs/decisions.md, "PAUSE headroom"): D12's
    "auto" less, per input, a frame at the slowest hotspot rate and the PAUSE frame."""
    doc = scen.resolved.doc
    f = min([h.rate for h in doc.hotspots if 0.0 < h.rate < 1.0] + [1.0])
    extra = math.ceil(int(doc.traffic.frame_size) / f) + 64
    return f"auto - {extra}B*ports" if doc.switch.buffer == "shared" else f"auto - {extra}B"


@settings(max_examples=max(EXAMPLES // 5, 10), deadline=60_000, suppress_health_check=list(HealthCheck), derandomize=SEED is None, database=None)
@seed(SEED)
@given(perturbed_runs())
def test_perturbed_runs_keep_the_invariants(case: tuple[str, dict[str, Any], bool]) -> None:
    sid, sets, margin = case
    lossless = False  # PAUSE on, and the margin applied to "auto" watermarks

    def scenario() -> Scenario:
        nonlocal lossless
        scen = cnsim.load(sid)
        rate = sets.get("hotspot rate")
        for h in range(len(scen.resolved.doc.hotspots)):  # into the run, one after another
            scen.set(f"hotspots.{h}.start", f"{0.5 + 0.3 * h}ms")
            scen.set(f"hotspots.{h}.end", f"{0.8 + 0.3 * h}ms")
            if rate is not None:
                scen.set(f"hotspots.{h}.rate", rate)
        for key, value in sets.items():
            if key != "hotspot rate":
                scen.set(key, value)
        lossless = margin and scen.resolved.doc.switch.pause and scen.resolved.doc.switch.xoff == "auto"
        if lossless:
            scen.set("switch.xoff", _lossless_xoff(scen))
        scen.validate()
        return scen

    try:
        scen = scenario()
    except ScenarioError:
        event("refused")
        return  # a combination the scenario refuses (a parameter of another scheme, …)
    if budget.estimate(scen.lower()).events > 3e6:
        event("too long")
        return
    s = cnsim.run(scen).summary
    _check_invariants(s, scen)
    assert cnsim.run(scenario()).summary == s, "the same scenario and seed give the same summary"
    if lossless:
        event("run with PAUSE and enough headroom")
        assert s["conservation"]["dropped"] == 0, (s["drops"], s["pause_frames"])
    else:
        event("run")
