"""Congestion-management parameters per scheme, with cnsim's defaults.

Implements the contract's "cm parameter names, per scheme" and step 2 of "Schemes and presets"
(cnsim's defaults), with values from spec/algorithms.md §10, §3.4, §5.3 (the 802.1Qau MIB
column), §6 (FECN), §7 (DCQCN) and the decisions D2–D5, D8, D9, D17, D18.

Each parameter has a *kind* that fixes its unit:

========  =========================================  ===================================
kind      scenario file                              core config (lowered)
========  =========================================  ===================================
size      bytes, or "150KB"; expression → bytes      ``<name>`` (int bytes)
rate      bit/s, or "10Mbps"                         ``<name>_bps`` (int bit/s)
time      seconds, or "15ms"                         ``<name>_ps`` (int picoseconds)
float     number or expression                       ``<name>`` (float)
int/bool  number / true|false                        ``<name>``
choice    one of the listed strings                  ``<name>`` (str)
========  =========================================  ===================================

A default may be an expression string (``"m/4"``, ``"gd0"``); it is evaluated like a user
expression after every override (contract "Expressions"). Besides the contract's names
(``gd0 gd qeq w ru m rate xoff``) an expression may name any numeric parameter of the selected
scheme and ``fbmax``, the full-scale feedback in the gains' unit: (2w+1)·qeq bytes, or
2^b − 1 quanta when ``fb_bits = b`` > 0 (so ``gd0 = 0.5/fbmax``, or ``1/fbmax`` with
``gd0_rule = "unit"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .units import PS_PER_S, format_rate, format_size, format_time

__all__ = ["Param", "SCHEMES", "SIMULATED_SCHEMES", "params_for", "QCN_FAMILY", "BCN_FAMILY", "DCQCN_FAMILY", "ENGINE_SCHEME"]


@dataclass(frozen=True)
class Param:
    """One parameter: ``kind`` (see the module doc), its cnsim default, allowed range.

    ``lo`` and ``hi`` bound the value in the kind's base unit (bytes, bit/s, picoseconds for
    sizes, rates and times), inclusive unless ``lo_open`` / ``hi_open``; every value must also be
    finite.
    """

    kind: str
    default: Any
    choices: tuple[str, ...] = ()
    lo: float | None = 0.0
    hi: float | None = None
    doc: str = ""
    lo_open: bool = False
    hi_open: bool = False

    def contains(self, value: float) -> bool:
        """``value`` lies in the parameter's range."""
        if self.lo is not None and (value <= self.lo if self.lo_open else value < self.lo):
            return False
        return self.hi is None or (value < self.hi if self.hi_open else value <= self.hi)

    def allowed(self) -> str:
        """What the parameter accepts, for error messages."""
        if self.kind == "choice":
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "int":
            lo = f"{self.lo:g}" if self.lo is not None else None
            return "an integer" + self._bounds(lo, f"{self.hi:g}" if self.hi is not None else None)
        unit = {
            "size": 'a size (bytes, or e.g. "150KB")',
            "rate": 'a rate (bit/s, or e.g. "10Mbps")',
            "time": 'a time (seconds, or e.g. "15ms")',
            "time_or_auto": 'a time (e.g. "100us")',
            "float": "a number",
        }[self.kind]
        auto = ' or "auto"' if self.kind == "time_or_auto" else ""
        # an expression of the names a scheme value may use (gd0, gd, qeq, w, ru, m, rate, xoff),
        # in the parameter's own unit where one exists
        example = {"size": ' such as "m/4"', "rate": ' such as "rate/100"', "float": ' such as "2.5*gd0"'}.get(self.kind, "")
        return unit + self.range_text() + auto + ", or an expression" + example

    def range_text(self) -> str:
        """The range for :meth:`allowed`: ' in [lo, hi]', ' >= lo' or '', in the kind's unit
        (a quantity's floor is shown when it is above 0, the units' own floor, or open)."""
        if self.kind == "float":
            lo = f"{self.lo:g}" if self.lo is not None else None
            return self._bounds(lo, f"{self.hi:g}" if self.hi is not None else None)
        fmt = _FORMAT.get(self.kind)
        if fmt is None:
            return ""
        lo_value = int(self.lo) if self.lo else 0
        hi = fmt(int(self.hi)) if self.hi is not None else None
        return self._bounds(fmt(lo_value) if lo_value > 0 or self.lo_open or hi else None, hi)

    def _bounds(self, lo: str | None, hi: str | None) -> str:
        """' in [lo, hi]' with a parenthesis at an open bound, ' >= lo' or ' > lo', or ''."""
        if hi is not None:
            return f" in {'(' if self.lo_open else '['}{lo}, {hi}{')' if self.hi_open else ']'}"
        if lo is None:
            return ""
        return f" > {lo}" if self.lo_open else f" >= {lo}"


_FORMAT: Final = {"size": format_size, "rate": format_rate, "time": format_time, "time_or_auto": format_time}

#: Floors of the periodic times of the schemes (a timer that fires every picosecond only
#: multiplies events: FECN's interval = 1 ps never finished a 2 ms run). 1 us is about a frame
#: time at 10 Gb/s and far below every default and catalog value of those times (55 us ...
#: 20 ms); DCQCN's alpha timer, decrease interval and CNP interval, whose defaults go down to
#: 1 us and 4 us (dcqcn-nic), get 100 ns.
PERIOD_FLOOR_PS: Final = PS_PER_S // 1_000_000  # 1 us
FAST_PERIOD_FLOOR_PS: Final = PS_PER_S // 10_000_000  # 100 ns
#: frame sizes of traffic.frame_size (a control frame is a frame too)
FRAME_MIN, FRAME_MAX = 64, 65_536


def _period(default: Any, doc: str, floor: int = PERIOD_FLOOR_PS, kind: str = "time") -> Param:
    """A periodic time: at least ``floor`` ps, which its doc states (docs/keys.md shows it)."""
    return Param(kind, default, lo=floor, doc=f"{doc}; at least {format_time(floor)}")


def _positive_size(default: Any, doc: str) -> Param:
    return Param("size", default, lo=1, doc=doc)


def _positive_rate(default: Any, doc: str) -> Param:
    return Param("rate", default, lo=1, doc=doc)


def _f(default: Any, lo: float | None = 0.0, hi: float | None = None, doc: str = "", lo_open: bool = False) -> Param:
    return Param("float", default, lo=lo, hi=hi, doc=doc, lo_open=lo_open)


def _frac(default: float, doc: str = "", lo_open: bool = False, hi_open: bool = False) -> Param:
    return Param("float", default, lo=0.0, hi=1.0, doc=doc, lo_open=lo_open, hi_open=hi_open)


def _choice(default: str, *choices: str, doc: str = "") -> Param:
    return Param("choice", default, choices=(default, *[c for c in choices if c != default]), doc=doc)


_SAMPLING = ("random", "interval", "jitter", "table", "linear")

#: every scheme but none (contract)
_COMMON: Final[dict[str, Param]] = {
    "cnm_size": Param("size", 64, lo=FRAME_MIN, hi=FRAME_MAX, doc="control frame size, bytes (D6); a frame: 64 B ... 64 KiB, as traffic.frame_size"),
    "feedback": _choice("inband", "oob", doc="CNMs travel back through the network (inband) or out of band after feedback_delay"),
    "feedback_delay": Param("time", 0, doc="fixed delay of out-of-band feedback"),
}

#: BCN / ECM (algorithms.md §3, §3.4, D2–D5; contract "Schemes and presets" step 2)
_BCN: Final[dict[str, Param]] = {
    "w": _f(2.0, doc="derivative weight W"),
    "qeq": _positive_size("m/4", doc="equilibrium queue Qeq (M/4)"),
    "gd": _f("gd0", doc="decrease gain, per byte of Fb (per quantum with fb_bits)"),
    "gi": _f("0.1*(rate/ru)/fbmax", doc="increase gain, per byte of Fb (per quantum with fb_bits)"),
    "ru": _positive_rate(1_000_000, doc="rate unit Ru; at most the slowest node's link rate"),
    "rmin": _positive_rate("ru", doc="minimum rate (= Ru); at most the slowest node's link rate"),
    "gd0_rule": _choice("half", "unit", doc="Gd0 = 0.5/((2W+1)·Qeq) (half) or 1/((2W+1)·Qeq) (unit)"),
    "sampling": _choice("random", *_SAMPLING, doc="how the CP picks the frames it samples (§1.2, D5)"),
    "sample_at": _choice("arrival", "departure", doc="where the CP counts and samples frames: as they enter its queue, or as they start to leave it (§1.2)"),
    "ps": _frac(0.02, doc="sampling probability (random)"),
    "sample_bytes": _positive_size(75_000, doc="byte interval (interval, jitter)"),
    "sample_jitter": Param("size", 0, doc="+- uniform jitter of the byte interval; at most sample_bytes"),
    "pmin": _frac(0.01, doc="lowest sampling probability (table, linear); at most pmax"),
    "pmax": _frac(0.1, doc="highest sampling probability (table, linear)"),
    "oversample_factor": _f(1.0, lo=1.0, doc="sampling multiplied by this while q > Qeq (D5)"),
    "fb_bits": Param("int", 0, lo=0, hi=16, doc="0 = unquantised feedback in bytes (D3, D18)"),
    "quantize": _choice("fb", "separate", doc="quantise Fb as a whole, or Qoff and Qdelta separately (D3)"),
    "bcn_max": Param("bool", False, doc="BCN_MAX: Fb = -Fbmax when q >= Qmc (D5)"),
    "qmc": Param("size", "m", doc="BCN_MAX threshold Qmc"),
    "bcn00": Param("bool", False, doc="BCN(0,0): stop the flow when q >= Qsc (D4)"),
    "bcn00_mode": _choice("stop", "fbmax", doc="at q >= Qsc with bcn00: a stop message (D4), or §3.3 step 3's alternative, a negative message with Fb = -Fbmax"),
    "qsc": Param("size", "2*m", doc="BCN(0,0) threshold Qsc"),
    "stop_time": Param("time", "1ms", doc="BCN(0,0) back-off bound (D4)"),
    "drift_rate": Param("rate", 0, doc="self-increase step (0 = off)"),
    "drift_period": _period("20ms", doc="period of the self-increase step"),
    "negative_only_above_qeq": Param("bool", False, doc="D3"),
}

_E2CM_EXTRA: Final[dict[str, Param]] = {
    "bcn": Param("bool", True, doc="false = probing only (D17)"),
    "probe_bytes": _positive_size(75_000, doc="one probe per this many bytes of a flow"),
    "qeq_flow": _positive_size("qeq", doc="per-flow equilibrium queue of the probe feedback"),
    "qmax_flow": Param("size", "m", doc="per-flow queue bound of the probe feedback; at least qeq_flow"),
    "gd_flow": _f("gd", doc="decrease gain of the probe feedback"),
    "gi_flow": _f("gi", doc="increase gain of the probe feedback"),
    "d0": _choice("known", "min_seen", doc="base path delay of a probe: known from the path, or the minimum seen (D17)"),
}

#: QCN 2-point (algorithms.md §5.2, §5.3 MIB defaults, D8, D9, D17, D18)
_QCN: Final[dict[str, Param]] = {
    "w": _f(2.0, doc="derivative weight W"),
    "qeq": _positive_size("m/4", doc="equilibrium queue Qeq (M/4)"),
    "gd": _f(0.0078125, doc="per quantum of QntzFb (1/128)"),
    "rmin": _positive_rate(5_000_000, doc="minimum rate; at most the slowest node's link rate"),
    "fb_bits": Param("int", 6, lo=1, hi=16, doc="bits of QntzFb"),
    "sampling": _choice("table", *_SAMPLING, doc="how the CP picks the frames it samples (§5.1)"),
    "sample_at": _choice("arrival", "departure", doc="where the CP counts and samples frames: as they enter its queue, or as they start to leave it (§1.2)"),
    "ps": _frac(0.01, doc="sampling probability (random)"),
    "sample_bytes": _positive_size(150_000, doc="byte interval (interval, jitter)"),
    "pmin": _frac(0.01, doc="lowest sampling probability (table, linear); at most pmax"),
    "pmax": _frac(0.1, doc="highest sampling probability (table, linear)"),
    "drift_rate": Param("rate", 0, doc="self-increase step (0 = off)"),
    "drift_period": _period("20ms", doc="period of the self-increase step"),
    "bc": _positive_size(150_000, doc="byte-counter cycle BC"),
    "timer": _period("15ms", doc="timer cycle T"),
    "f": Param("int", 5, lo=1, hi=1000, doc="fast-recovery threshold F"),
    "r_ai": Param("rate", 5_000_000, doc="active-increase step R_AI"),
    "r_hai": Param("rate", 50_000_000, doc="hyper-active-increase step R_HAI"),
    "hai": Param("bool", True, doc="hyper-active increase stage on"),
    "min_dec": _frac(0.5, doc="bound of one multiplicative decrease (MIB min dec factor)"),
    "efr": Param("bool", True, doc="TR/8 clamp of §5.3 step 4.2 (D9)"),
    "efr_first_cycle": _f(1.0, lo=0.01, hi=1.0, doc="experimental EFR reading (b) of §5.4: the first byte cycle and timer period after a decrease, as a fraction of BC and T (1 = off)"),
    "ai_byte_count": _positive_size("bc", doc="byte-counter cycle in active increase (D9)"),
    "target_update": _choice("after_increase", "always", doc="when a CNM sets TR := CR (D8)"),
    "halving": _choice("own", "hai", doc="counter cycles halve when their own stage reaches F, or only in HAI (§5.3)"),
    "jitter": _frac(0.15, doc="byte counter and timer jitter U(1-j, 1+j)", hi_open=True),
}

#: QCN "w/ (0,0)" (S1; §5.4, §3.2 step 4, §3.3 step 3): two-point only
_QCN_00: Final[dict[str, Param]] = {
    "bcn00": Param("bool", False, doc='QCN "w/ (0,0)": a sample at q >= Qsc stops the source for U(0, stop_time); it resumes at half its rate'),
    "qsc": Param("size", "2*m", doc="(0,0) threshold Qsc"),
    "stop_time": Param("time", "1ms", doc="(0,0) back-off bound"),
}

_QCN3PT_EXTRA: Final[dict[str, Param]] = {
    "refp": _frac(0.04, doc="reflection probability RefP of the end node"),
    "de_rule": _choice("q_above_qeq", "last_fb_negative", doc="when a CP sets DE (D17)"),
}
_SONAR_EXTRA: Final[dict[str, Param]] = {
    # SONAR's recovery has no FR1 adjustment (§5.6), so QCN's TR/8 clamp never applies
    "efr": Param("bool", True, doc="no effect: SONAR's recovery has no TR/8 clamp (§5.6)"),
    "wp": _period("10ms", doc="quiet time without CNMs before pinging (WP timer)"),
    "we": _period("2ms", doc="time an answer may take (WE timer)"),
    "sf": _period("0.5ms", doc="ping period (SF timer)"),
    "nc_threshold": Param("size", 15_000, doc='"not congested" queue threshold'),
    "nc_interval": _period("10ms", doc='"not congested" interval'),
    "recovery": _choice("cr_to_tr", "release", doc="accelerated recovery: jump CR to TR, or release the limiter (D17)"),
}
_PLUS_EXTRA: Final[dict[str, Param]] = {
    "base_w": _f("w", doc="baseW of W = baseW + RTT_ms·factor/N"),
    "factor": _f(1.0, doc="factor of W = baseW + RTT_ms·factor/N"),
    "gi_plus": _f("0.1*(rate/1Mbps)/fbmax", doc="gain of positive feedback from probe echoes"),
    "probe_period": _period("auto", doc='"auto" = max(measured RTT, 100 us) (D17)', kind="time_or_auto"),
    "to_threshold": _positive_size("bc", doc="ToThreshold (max(this, RTT·2·rate))"),
    # QCN+'s RP runs QCN with BC replaced by ToThreshold, so the active-increase cycle that
    # defaults to BC (D9) defaults to ToThreshold here: otherwise a ToThreshold other than BC
    # would turn on the separate active-increase cycle (a full BC, never halved) unasked
    "ai_byte_count": _positive_size("to_threshold", doc="byte-counter cycle in active increase (D9; default ToThreshold)"),
}

#: DCQCN (algorithms.md §7; defaults §10 and, where §10 is silent, [CODE:ns3-rdma]'s sample
#: configuration: R_HAI, Rmin). CP §7.1, NP §7.2, RP §7.3 (``rp = "paper"``) or §7.4 (``"nic"``).
_DCQCN: Final[dict[str, Param]] = {
    "kmin": Param("size", 5_000, doc="RED Kmin: no marking at or below"),
    "kmax": Param("size", 200_000, doc="RED Kmax: every data frame marked above"),
    "pmax": _frac(0.01, doc="marking probability at Kmax"),
    "k_scale": _choice("fixed", "link", doc='"fixed": every port marks at kmin/kmax bytes; "link": kmin/kmax are for a port of links.rate, other ports scale them by their rate'),
    "mark": _choice("dequeue", "enqueue", doc="CP: ECN-mark a frame as it leaves the queue or as it enters it (§7.1)"),
    "cnp_interval": _period("50us", doc="NP: at most one CNP per flow per interval (N)", floor=FAST_PERIOD_FLOOR_PS),
    "cnp_mode": _choice("suppress", "poll", doc="NP: a CNP at once unless one went within cnp_interval (paper), or a check every cnp_interval (ns3-rdma) (§7.2)"),
    "rp": _choice("paper", "nic", doc="RP: the paper's byte counter and timer (§7.3) or the NIC's timer-only version (§7.4)"),
    "g": _frac(0.00390625, doc="alpha gain g (1/256)"),
    "alpha_init": _frac(1.0, doc="alpha at a flow's first CNP (a limiter re-created after a release keeps the flow's alpha)"),
    "alpha_timer": _period("55us", doc="K: alpha decay period (nic: alpha update period)", floor=FAST_PERIOD_FLOOR_PS),
    "timer": _period("55us", doc="T: rate-increase timer"),
    "bc": _positive_size(10_000_000, doc="B: byte counter (paper RP)"),
    "f": Param("int", 5, lo=1, hi=1000, doc="F: fast-recovery stages"),
    "r_ai": Param("rate", 40_000_000, doc="active-increase step R_AI"),
    "r_hai": Param("rate", 200_000_000, doc="hyper-active-increase step R_HAI"),
    "rmin": _positive_rate(100_000_000, doc="minimum rate; at most the slowest node's link rate"),
    "clamp_target": Param("bool", True, doc="RT := RC on every decrease (else only after an increase)"),
    "phase_rule": _choice("fired", "joint", doc="paper RP: the phase from the stage of the counter that fired (ns3-rdma) or from both stages (the paper's description: FR while both are below F; QCN's FR lasts through stage F) (§7.3)"),
    "efr": Param("bool", True, doc="TR/8 clamp of an increase at which either stage is 1 (paper RP)"),
    "rate_on_first_cnp": _frac(1.0, doc="nic RP: RC = RT = this x RC at the first CNP", lo_open=True),
    "decrease_interval": _period("4us", doc="nic RP: rate-decrease check period", floor=FAST_PERIOD_FLOOR_PS),
}

#: the §7.4 NIC-style preset (``dcqcn-nic``): [CODE:hpcc]'s configuration, its per-speed ECN
#: table (25/50/100 G: 100/400, 200/800, 400/1600 KB) written as the bytes a link drains in
#: 32 us / 128 us, and NVIDIA's 4 us between CNPs.
_DCQCN_NIC: Final[dict[str, Param]] = {
    **_DCQCN,
    "kmin": Param("size", "rate*32us/8", doc="RED Kmin (32 us of a links.rate link; each port scales it, k_scale)"),
    "kmax": Param("size", "rate*128us/8", doc="RED Kmax (128 us of a links.rate link; each port scales it, k_scale)"),
    "k_scale": _choice("link", "fixed", doc='"link": kmin/kmax are for a port of links.rate, other ports scale them by their rate; "fixed": every port marks at the same bytes'),
    "pmax": _frac(0.2),
    "cnp_interval": _period("4us", doc="NP: min_time_between_cnps", floor=FAST_PERIOD_FLOOR_PS),
    "rp": _choice("nic", "paper", doc="RP: the paper's byte counter and timer (§7.3) or the NIC's timer-only version (§7.4)"),
    "alpha_timer": _period("1us", doc="alpha update period", floor=FAST_PERIOD_FLOOR_PS),
    "timer": _period("900us", doc="rate-increase timer"),
    "f": Param("int", 1, lo=1, hi=1000),
    "r_ai": Param("rate", 50_000_000),
    "r_hai": Param("rate", 100_000_000),
    "clamp_target": Param("bool", False),
    "efr": Param("bool", False),
}

#: FECN (algorithms.md §6: the published switch pseudo-code's defaults; cnsim's readings of its
#: UNCERTAIN parts in docs/models/fecn.md)
_FECN: Final[dict[str, Param]] = {
    "n0": _f(200.0, lo=1.0, hi=1e6, doc="initial rate divider N0: sources start and idle ports advertise C0/N0"),
    "interval": _period("1ms", doc="T: switch measurement interval and source probe interval"),
    "qeq": _positive_size(24_000, doc="queue equilibrium Qeq (192,000 bits)"),
    "a": _f(1.1, lo=1.0, doc="queue control: f(0) = a", lo_open=True),
    "b": _f(1.002, lo=1.0, doc="queue control above Qeq", lo_open=True),
    "c": _f(0.1, doc="queue control floor", lo_open=True),
    "ewma": _frac(0.5, doc="weight of the new rate in the exponential average", lo_open=True),
    "max_increase": _f(1.0, doc="largest relative rise of the advertised rate per interval while q <= Qeq (cnsim's reading)"),
    "rmin": _positive_rate(1_000_000, doc="lowest advertised rate (the seeds' Rmin, §1.4); at most the slowest node's link rate"),
    "start": _choice("n0", "line", doc="a source starts at C0/N0 or at line rate"),
    "efecn": Param("bool", False, doc="E-FECN: backward messages from queues above qsc"),
    "qsc": Param("size", "4*qeq", doc="E-FECN severe-congestion queue Qsc"),
}

SCHEMES: Final[dict[str, dict[str, Param]]] = {
    "none": {},
    "bcn": {**_BCN, **_COMMON},
    "e2cm": {**_BCN, **_E2CM_EXTRA, **_COMMON},
    "qcn": {**_QCN, **_QCN_00, **_COMMON},
    "qcn3pt": {**_QCN, **_QCN3PT_EXTRA, **_COMMON},
    "qcn-sonar": {**_QCN, **_SONAR_EXTRA, **_COMMON},
    "qcn-plus": {**_QCN, **_PLUS_EXTRA, **_COMMON},
    "dcqcn": {**_DCQCN, **_COMMON},
    "dcqcn-nic": {**_DCQCN_NIC, **_COMMON},
    "fecn": {**_FECN, **_COMMON},
}

#: schemes the engine simulates today (the others validate and lower; the engine refuses them)
SIMULATED_SCHEMES: Final = ("none", "bcn", "e2cm", "qcn", "qcn3pt", "qcn-sonar", "qcn-plus", "dcqcn", "dcqcn-nic", "fecn")
BCN_FAMILY: Final = ("bcn", "e2cm")
QCN_FAMILY: Final = ("qcn", "qcn3pt", "qcn-sonar", "qcn-plus")
DCQCN_FAMILY: Final = ("dcqcn", "dcqcn-nic")
#: schemes that are presets of another engine scheme (their parameter table differs only in defaults)
ENGINE_SCHEME: Final[dict[str, str]] = {"dcqcn-nic": "dcqcn"}


def params_for(scheme: str) -> dict[str, Param]:
    """The parameter table of ``scheme`` (KeyError if unknown)."""
    return SCHEMES[scheme]
