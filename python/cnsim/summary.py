"""summary.json as types (spec/contract.md "summary.json"): the engine's part mirrors the Rust
``metrics::summary::Summary`` field for field (a test compares the keys of a real run with
these), and the front end adds ``scenario``, ``scheme``, ``seed`` and ``fairness``
(:func:`cnsim.results.build_summary`). Values are plain JSON: NaN is ``None``."""

from __future__ import annotations

from typing import TypedDict

__all__ = [
    "Summary",
    "EngineSummary",
    "Throughput",
    "QueueStats",
    "Drops",
    "Count",
    "CmStats",
    "FctStats",
    "Latency",
    "EngineStats",
    "Conservation",
    "Deadlock",
    "Fairness",
    "CmCount",
    "FctGroup",
    "WindowStats",
    "Dynamics",
]


class Throughput(TypedDict):
    aggregate: float
    hot_port: float
    per_node: dict[str, float]
    per_flow: dict[str, float]
    per_source_sent: dict[str, float]


class QueueStats(TypedDict):
    mean: float | None
    std: float | None
    max: float | None


class Count(TypedDict):
    frames: int
    bytes: int


class Drops(TypedDict):
    frames: int
    bytes: int
    control: int
    by_place: dict[str, Count]


class CmCount(TypedDict):
    frames: int
    bytes: int
    mbps: float


class CmStats(CmCount):
    by_kind: dict[str, CmCount]
    by_cp: dict[str, CmCount]


class FctGroup(TypedDict):
    mean: float
    p50: float
    p99: float
    completed: int
    incomplete: int
    adapter_wait_ms: float


class FctStats(FctGroup):
    hot: FctGroup
    cold: FctGroup


class Latency(TypedDict):
    mean: float


class EngineStats(TypedDict):
    events: int


class Conservation(TypedDict):
    generated: int
    delivered: int
    dropped: int
    source_dropped: int
    in_flight: int
    in_flight_counted: int


#: A cycle of transmitters pausing each other for good (``metrics.deadlock_threshold``): when it
#: was detected, the cycle as port names, and the PAUSE class (0: 802.3x PAUSE). Functional
#: syntax, since ``class`` is a keyword.
Deadlock = TypedDict("Deadlock", {"t_s": float, "cycle": list[str], "class": int})


class WindowStats(TypedDict):
    """One named window of targets.md §A (``windows.<name>``, docs/metrics.md)."""

    window_s: list[float]
    throughput_gbps: Throughput
    queue_bytes: dict[str, QueueStats]
    drops: Count
    source_drops: Count
    paused_fraction: float
    paused_fraction_all: float
    cm: CmCount


class EngineSummary(TypedDict):
    """What the engine returns (docs/core-config.md "What the engine returns")."""

    duration_s: float
    window_s: list[float]
    throughput_gbps: Throughput
    queue_bytes: dict[str, QueueStats]
    drops: Drops
    drops_window: Count
    source_drops: Count
    source_blocked_fraction: float
    paused_fraction: float
    paused_fraction_all: float
    pause_frames: int
    cm: CmStats
    fct_ms: FctStats | None
    latency_us: Latency
    underrun: float
    bottleneck_utilisation: float
    engine: EngineStats
    conservation: Conservation
    deadlock: Deadlock | None
    windows: dict[str, WindowStats]


class Fairness(TypedDict):
    jain: float | None
    maxmin_rel_error: float | None


class Dynamics(TypedDict):
    """The hot queue's and hot port's time figures (:func:`cnsim.results.hot_dynamics`)."""

    period_s: float | None
    onset_s: float | None
    settle_s: float | None
    recovery_s: float | None
    flow_cv: dict[str, float | None]


class Summary(EngineSummary):
    """summary.json: the engine's keys and what the front end adds."""

    scenario: str
    scheme: str
    seed: int
    fairness: Fairness
    dynamics: Dynamics
