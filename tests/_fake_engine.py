"""A stand-in for ``cnsim._core`` that returns a hand-built result (tests the Python plumbing
only: summary/series writing, CLI exit codes; it simulates nothing)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from cnsim import Scenario


def engine_result(scen: Scenario, per_flow_gbps: dict[str, float] | None = None) -> dict[str, Any]:
    """A dict shaped like ``Simulation.run()``'s (docs/core-config.md "What the engine returns")."""
    core = scen.lower()
    bin_s = core["metrics"]["bin_ps"] / 1e12
    bins = int(core["duration_ps"] // core["metrics"]["bin_ps"])
    t0, t1 = (x / 1e12 for x in core["metrics"]["window_ps"])
    flows = [f"{s}->{d}" for s, d in core["metrics"]["per_flow"]]
    per_flow = per_flow_gbps if per_flow_gbps is not None else {f: 1.0 for f in flows}
    summary = {
        "duration_s": core["duration_ps"] / 1e12,
        "window_s": [t0, t1],
        "throughput_gbps": {"aggregate": 10.0, "hot_port": 2.0, "per_node": {}, "per_flow": per_flow},
        "queue_bytes": {"hot": {"mean": 1.5e5, "max": 6.0e5, "std": 2.0e4}},
        "drops": {"frames": 0, "bytes": 0, "control": 0},
        "drops_window": {"frames": 0, "bytes": 0},
        "source_drops": {"frames": 0, "bytes": 0},
        "source_blocked_fraction": 0.0,
        "paused_fraction": 0.25,
        "paused_fraction_all": 0.1,
        "cm": {"frames": 0, "bytes": 0, "mbps": 0.0},
        "underrun": 0.0,
        "bottleneck_utilisation": 1.0,
        "engine": {"events": 123456},
        "conservation": {"generated": 1000, "delivered": 990, "dropped": 0, "source_dropped": 0, "in_flight": 10, "in_flight_counted": 10},
    }
    t = np.arange(1, bins + 1) * bin_s

    def column(rows: list[np.ndarray]) -> bytes:
        return np.concatenate(rows).astype("<f8").tobytes() if rows else b""

    thr_entities = ["aggregate", f"port:{core['metrics']['hot_port']}", *[f"flow:{f}" for f in flows]]
    thr = [np.full(bins, 10.0), np.full(bins, 2.0), *[np.full(bins, per_flow.get(f, 1.0)) for f in flows]]
    queues = core["metrics"]["queues"]
    series = {
        "throughput": {"entities": thr_entities, "bins": bins, "bin_s": bin_s, "columns": {"gbps": column(thr)}},
        "queue": {
            "entities": queues,
            "bins": bins,
            "bin_s": bin_s,
            "columns": {"bytes": column([1000.0 * t for _ in queues]), "bytes_max": column([2000.0 * t for _ in queues]), "bytes_mean": column([1500.0 * t for _ in queues])},
        },
        "pause": {"entities": ["port:S1/1"], "bins": bins, "bin_s": bin_s, "columns": {"fraction": column([np.zeros(bins)])}},
    }
    # the event loop's and the whole call's wall time, as the engine returns them (manifest only)
    return {"summary": json.dumps(summary), "series": series, "loop_s": 0.001, "run_s": 0.002}


class FakeCore:
    """Module-like stand-in: ``Simulation(config)`` (JSON text or a dict, as the binding), ``version()``."""

    refuse: str | None = None
    interrupt_run = False

    class ConfigError(ValueError):
        """As the binding's: args = (message, key, value, expected)."""

    class Interrupted(RuntimeError):
        pass

    class EngineError(RuntimeError):
        pass

    def __init__(self) -> None:
        core = self

        class Simulation:
            def __init__(self, config: str | dict[str, Any]) -> None:
                self.config = json.loads(config) if isinstance(config, str) else config
                if core.refuse and self.config["cm"]["scheme"] == core.refuse:
                    expected = "not implemented by the engine yet"
                    raise core.ConfigError(f'cm.scheme = {core.refuse}: {expected}', "cm.scheme", core.refuse, expected)
                self._progress = 0

            def run(self) -> dict[str, Any]:
                if core.interrupt_run:
                    raise core.Interrupted("interrupted")
                self._progress = self.config["duration_ps"]
                return engine_result(core.scenario)

            def progress_ps(self) -> int:
                return self._progress

            def interrupt(self) -> None:
                pass

        self.Simulation = Simulation
        self.scenario: Scenario | None = None

    @staticmethod
    def version() -> str:
        return "fake-0"
