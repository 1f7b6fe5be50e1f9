"""Golden results: the summary and a content hash of every series for each shipped scenario at
seed 1, with each scheme it carries a preset for (and none), over a short run.

They guard refactors and hot-path changes that must not change results (bit-identical
summaries and series). A deliberate model change regenerates them:

    python scripts/golden.py --write        # rewrite tests/golden/*.json
    python scripts/golden.py                # compare, print differences (what the test does)

A change of results also raises ``RESULTS_VERSION`` (``python/cnsim/_version.py``): ``--write``
refuses to record changed results under the number they were recorded with, and
``tests/golden/results-version.json`` keeps the number and a digest of the files, which a test
compares with the package and the files.

The case list and the short durations are chosen so that the whole set runs in about a minute
while every scheme and every topology kind is exercised, hotspots included.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import cnsim
import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "tests" / "golden"

#: which version of the results (``cnsim._version.RESULTS_VERSION``) the goldens hold, and a
#: digest of them: ``--write`` keeps it, and a test compares it with the package and the files
RECORD = GOLDEN_DIR / "results-version.json"

#: Scenario sizes beyond the single-switch 16-node scale get shorter runs.
_SHORT = {"zhb-og-n128": "0.02s", "scale-ft-2048": "0.001s", "eval-fat-tree-64": "0.03s", "zhb-ft-5stage": "0.003s",
          "e2cm-fat-tree-32": "0.03s", "qcnp-ig-100-sources": "0.05s", "qcnp-20-stage": "0.05s", "qcnp-20-stage-b": "0.05s"}
_DEFAULT = "0.12s"


def cases() -> list[tuple[str, str, str]]:
    """(scenario id, scheme, duration) for every golden case."""
    out = []
    root = resources.files("cnsim") / "scenarios"
    for sid in cnsim.scenarios():
        doc = tomllib.loads((root / f"{sid}.toml").read_text(encoding="utf-8"))
        duration = _SHORT.get(sid, _DEFAULT)
        schemes = ["none", *sorted(doc.get("cm", {}).get("presets", {}))]
        if sid == "scale-ft-2048":
            schemes = schemes[:2]
        out.extend((sid, scheme, duration) for scheme in schemes)
    return out


def case_name(sid: str, scheme: str) -> str:
    return f"{sid}--{scheme}"


def series_digest(result: Any) -> dict[str, str]:
    """kind → sha256 of every column's values (entity strings and float64 bytes), in order."""
    digests = {}
    for kind in ("throughput", "queue", "drops", "pause", "cm", "rates"):
        table = result.series(kind)
        h = hashlib.sha256()
        for name in table.column_names:
            col = table.column(name).to_pylist()
            if col and isinstance(col[0], str):
                h.update("\0".join(col).encode())
            else:
                h.update(np.asarray(col, dtype=np.float64).tobytes())
        digests[kind] = f"{table.num_rows}:{h.hexdigest()[:32]}"
    return digests


def golden_of(sid: str, scheme: str, duration: str) -> dict[str, Any]:
    r = cnsim.run(sid, set={"cm.scheme": scheme}, seed=1, duration=duration)
    summary = json.loads(json.dumps(r.summary, sort_keys=True, default=float))
    return {"scenario": sid, "scheme": scheme, "duration": duration, "summary": summary, "series": series_digest(r)}


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where two JSON values differ (exact comparison, floats included)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: {'missing' if k not in a else a[k]!r} vs {'missing' if k not in b else b[k]!r}")
            else:
                out.extend(diff(a[k], b[k], f"{path}.{k}"))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


#: The engine's own goldens (``crates/cnsim-core/tests/golden``, compared by ``cargo test``): the
#: core config the front end lowers and the engine's summary, so that the engine's suite sees
#: every element and scheme by itself (refactors of the kernel, cargo-mutants). Short runs with
#: the hotspots and flows moved early, since the tests run unoptimised: a few seconds in all.
_EARLY = {"hotspots.0.start": "5ms", "hotspots.0.end": "25ms", "metrics.window": ["5ms", "30ms"]}
_FINITE = {**_EARLY, "traffic.stop": "20ms", "metrics.window": ["5ms", "20ms"]}
ENGINE_CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("zhb-og-single-hop", "none", _EARLY, "30ms"),
    ("zhb-og-single-hop", "bcn", _EARLY, "30ms"),
    ("zhb-og-single-hop", "dcqcn", _EARLY, "30ms"),
    ("zhb-og-single-hop", "fecn", _EARLY, "30ms"),
    ("zhb-og-single-hop", "none", {**_EARLY, "switch.buffer": "shared"}, "30ms"),
    ("zhb-ig-single-hop", "bcn", {"metrics.window": ["5ms", "30ms"]}, "30ms"),
    ("zhb-og-multi-hop", "none", {**_EARLY, "switch.pfc_classes": 2, **{f"traffic.flows.{i}.priority": 1 for i in range(4)}}, "30ms"),
    ("zhb-dual-cp-heavy-light", "bcn", {"traffic.start": "2ms", "traffic.stop": "25ms", "metrics.window": ["5ms", "30ms"]}, "30ms"),
    ("eval-sh-og-0.5g", "qcn", _EARLY, "30ms"),
    ("eval-mh-og-0g", "qcn3pt", _EARLY, "30ms"),
    ("eval-sh-og-0.5g", "qcn", {**_EARLY, "nic.ingress": "shared", "nic.ingress_size": "150KB", "nic.on_full": "block"}, "30ms"),
    ("qcnp-og-single-hop", "qcn-plus", _EARLY, "30ms"),
    ("qcnp-parking-lot", "qcn-sonar", {**{f"traffic.flows.{i}.start": "2ms" for i in range(4)}, "metrics.window": ["5ms", "30ms"]}, "30ms"),
    ("e2cm-mixed-speed-og", "e2cm", _FINITE, "60ms"),
    ("e2cm-mixed-speed-og", "e2cm", {**_FINITE, "traffic.mean_size": "15000B", "nic.ingress": "shared",
                                     "nic.ingress_size": "15KB", "nic.on_full": "block"}, "60ms"),
    ("e2cm-non-cm-domain", "e2cm", {"traffic.stop": "20ms", "metrics.window": ["5ms", "20ms"]}, "60ms"),
    ("e2cm-fat-tree-16", "bcn", _FINITE, "60ms"),
    ("kd-symmetric-single-hs", "bcn", {"metrics.window": ["5ms", "20ms"]}, "20ms"),
    ("dcqcn-incast-2to1", "dcqcn", {"metrics.window": ["5ms", "20ms"]}, "20ms"),
    ("dcqcn-incast-2to1", "dcqcn", {"metrics.window": ["5ms", "20ms"], "cm.cnp_mode": "poll"}, "20ms"),
    ("ring-6-deadlock", "none", {}, "50ms"),
]
ENGINE_GOLDEN_DIR = GOLDEN_DIR.parent.parent / "crates" / "cnsim-core" / "tests" / "golden"


def engine_case_name(sid: str, scheme: str, overrides: dict[str, Any]) -> str:
    """``sid--scheme``, with the settings that make it a variant of that case (not the timing)."""
    variant = [f"{k.split('.')[-1]}-{v}" for k, v in overrides.items() if k in ("switch.buffer", "switch.pfc_classes", "nic.on_full", "cm.cnp_mode")]
    return "--".join([sid, scheme, *variant])


def fnv1a(chunks: list[bytes]) -> str:
    """64-bit FNV-1a of the chunks in order, as hex: the engine's golden test computes the same
    in Rust without a hashing dependency."""
    h = 0xCBF29CE484222325
    for chunk in chunks:
        for b in chunk:
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def engine_series_digest(raw_series: dict[str, Any]) -> dict[str, str]:
    """kind → FNV-1a of its entities (each followed by a 0 byte) and of each column's name (and
    a 0 byte) and values (little-endian float64), as the engine hands them over."""
    out = {}
    for kind, table in raw_series.items():
        chunks = [e.encode() + b"\0" for e in table["entities"]]
        for name, values in table["columns"].items():
            chunks += [name.encode() + b"\0", bytes(values)]
        out[kind] = fnv1a(chunks)
    return out


def engine_config(sid: str, scheme: str, overrides: dict[str, Any], duration: str) -> Any:
    """The engine case's scenario, resolved and validated (its ``core_config()`` is the case's)."""
    from cnsim.runner import prepare

    return prepare(sid, set={"cm.scheme": scheme, **overrides}, seed=1, duration=duration)


def write_engine_goldens() -> None:
    """Lower every engine case, run the engine alone and write its config and summary."""
    from cnsim.runner import engine

    ENGINE_GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for old in ENGINE_GOLDEN_DIR.glob("*.json"):
        old.unlink()
    for sid, scheme, overrides, duration in ENGINE_CASES:
        scen = engine_config(sid, scheme, overrides, duration)
        raw = engine().Simulation(scen.core_json()).run()
        name = engine_case_name(sid, scheme, overrides)
        doc = {"case": name, "overrides": overrides, "duration": duration,
               "config": scen.core_config(), "summary": json.loads(raw["summary"]),
               "series": engine_series_digest(raw["series"])}
        path = ENGINE_GOLDEN_DIR / f"{name}.json"
        path.write_text(json.dumps(doc, sort_keys=True, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(GOLDEN_DIR.parent.parent)}")


def goldens_digest() -> str:
    """sha256 of every golden case file's content (parsed, so that formatting does not count),
    in name order."""
    h = hashlib.sha256()
    for path in sorted(GOLDEN_DIR.glob("*.json")):
        if path == RECORD:
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        h.update(path.name.encode() + b"\0" + json.dumps(doc, sort_keys=True).encode() + b"\0")
    return h.hexdigest()


def recorded_version() -> int | None:
    """The RESULTS_VERSION the goldens were last written under (None before the first record)."""
    if not RECORD.is_file():
        return None
    return int(json.loads(RECORD.read_text(encoding="utf-8"))["results_version"])


def write_record() -> None:
    from cnsim._version import RESULTS_VERSION

    RECORD.write_text(json.dumps({"results_version": RESULTS_VERSION, "digest": goldens_digest()}, indent=1) + "\n",
                      encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the golden files")
    ap.add_argument("--only", default=None, help="substring of the case names to run")
    ap.add_argument("--write-engine", action="store_true",
                    help="rewrite the engine's goldens (crates/cnsim-core/tests/golden) instead")
    args = ap.parse_args()
    if args.write_engine:
        write_engine_goldens()
        return 0
    from cnsim._version import RESULTS_VERSION

    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    changed: dict[Path, dict[str, Any]] = {}
    bad = 0
    for sid, scheme, duration in cases():
        name = case_name(sid, scheme)
        if args.only and args.only not in name:
            continue
        got = golden_of(sid, scheme, duration)
        path = GOLDEN_DIR / f"{name}.json"
        want = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        d = diff(want, got) if want is not None else []
        if args.write:
            if want is None or d:
                changed[path] = got
            if d:
                print(f"changed {name}: {d[0]}")
            continue
        if want is None:
            bad += 1
            print(f"MISSING {name}: no golden file (scripts/golden.py --write writes it)")
        elif d:
            bad += 1
            print(f"DIFF {name}:\n  " + "\n  ".join(d[:20]))
        else:
            print(f"same {name}")
    if not args.write:
        return 1 if bad else 0
    # results a cached run may hold must not change under the same number (a sweep or a check
    # would reuse runs the earlier model made); a new case changes no earlier result
    moved = [p for p in changed if p.is_file()]
    if moved and recorded_version() == RESULTS_VERSION:
        print(f"{len(moved)} golden case(s) changed, but RESULTS_VERSION is still {RESULTS_VERSION} "
              "(python/cnsim/_version.py): raise it, so that no sweep or check reuses a run the "
              "earlier model made, and write again", file=sys.stderr)
        return 1
    for path, got in changed.items():
        path.write_text(json.dumps(got, sort_keys=True, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.name}")
    write_record()
    print(f"wrote {RECORD.name} (RESULTS_VERSION {RESULTS_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
