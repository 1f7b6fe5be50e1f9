"""Linear stability of the BCN loop (spec/algorithms.md §11.1, "Linearisation").

Around q = Qeq, λ = λ0 = μ/N_h the BCN fluid model reduces, on each side of Fb = 0, to the
characteristic equation ::

    s² + K·(1 + s·T_w)·e^{−sτ} = 0,      T_w = w·Δ = w·L/(p_s·μ)

with ``K_MD = p_s·Gd·λ0²·N_h/(8L)`` on the multiplicative-decrease side and
``K_AI = p_s·Gi·Ru·λ0·N_h/(8L)`` on the additive-increase side. The open loop
``K(1 + sT_w)e^{−sτ}/s²`` crosses unity gain at ω_c with ω_c² = K·sqrt(1 + ω_c²T_w²), i.e.
(closed form) ω_c² = (K²T_w² + sqrt(K⁴T_w⁴ + 4K²))/2, and its phase margin is
``PM = atan(ω_c·T_w) − ω_c·τ``. Stable iff PM > 0; the longest stable loop delay at fixed
gains is ``τ_max = atan(ω_c·T_w)/ω_c``.

Besides these figures the module finds the rightmost characteristic root by Newton's method
from a spread of starting points: its real part is the decay (or growth) rate and its imaginary
part the damped oscillation frequency (2π/Im s is the period a lightly damped loop rings at,
the ~2π/ω_c of the spec). Everything is vectorised with numpy (arrays broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "LoopFigures",
    "crossover",
    "phase_margin",
    "max_stable_delay",
    "rightmost_root",
    "loop_figures",
]

Array = NDArray[np.float64]


def crossover(K: ArrayLike, T_w: ArrayLike) -> Array:
    """ω_c (rad/s) of the open loop K(1 + sT_w)/s² (delay does not change the gain)."""
    K = np.asarray(K, dtype=np.float64)
    T = np.asarray(T_w, dtype=np.float64)
    # ω_c² = (K²T² + sqrt(K⁴T⁴ + 4K²))/2 = K·(x + sqrt(x² + 4))/2 with x = K·T²: the same
    # closed form, without the fourth powers that overflow for large gains
    with np.errstate(over="ignore", invalid="ignore"):
        x = K * T * T
        omega: Array = np.sqrt(K) * np.sqrt((x + np.hypot(x, 2.0)) / 2.0)
        # x overflows where T_w is so large that K·T_w² leaves the float range while K·T_w does
        # not: ω_c then tends to K·T_w (for positive K and T_w only: a negative gain has no
        # crossover, NaN)
        return np.where(np.isfinite(omega) | ~((K > 0) & (T > 0)), omega, K * T)


def phase_margin(K: ArrayLike, T_w: ArrayLike, tau: ArrayLike) -> Array:
    """PM = atan(ω_c T_w) − ω_c τ (rad)."""
    wc = crossover(K, T_w)
    return np.arctan(wc * np.asarray(T_w, dtype=np.float64)) - wc * np.asarray(tau, dtype=np.float64)


def max_stable_delay(K: ArrayLike, T_w: ArrayLike) -> Array:
    """τ_max = atan(ω_c T_w)/ω_c (s): the loop delay at which PM reaches 0."""
    wc = crossover(K, T_w)
    return np.arctan(wc * np.asarray(T_w, dtype=np.float64)) / wc


def rightmost_root(K: ArrayLike, T_w: ArrayLike, tau: ArrayLike, *, newton: int = 40) -> NDArray[np.complex128]:
    """The rightmost root of s² + K(1 + sT_w)e^{−sτ} = 0 (the one with Im s ≥ 0).

    Newton's method from a spread of starting points around the crossover (Re s in
    {−1, −0.3, 0, 0.3}·ω_c, Im s in {0, 0.25 … 4}·ω_c) plus the delay-free root; of the
    converged roots (relative residual < 1e-8) the one with the largest real part is returned.
    A root with Re s > 0 exists iff PM < 0 (tests check the two agree). Where no start converges
    (K = 0: s = 0 is a double root, so Newton's residual never falls) both parts are NaN.
    """
    K, T, tau = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (K, T_w, tau)))
    wc = crossover(K, T)[..., None]
    re = np.array([-1.0, -0.3, 0.0, 0.3])
    im = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0])
    grid = (re[:, None] + 1j * im[None, :]).ravel()
    s0 = -K * T / 2.0 + np.sqrt(((K * T) ** 2 / 4.0 - K).astype(np.complex128))
    s = np.concatenate([grid[None, :] * wc + 0j * K[..., None], s0[..., None]], axis=-1) if K.ndim else np.concatenate([grid * wc, [s0]])
    Kx, Tx, dx = K[..., None], T[..., None], tau[..., None]
    with np.errstate(all="ignore"):
        for _ in range(newton):
            e = np.exp(-s * dx)
            f = s * s + Kx * (1.0 + s * Tx) * e
            df = 2.0 * s + Kx * e * (Tx - dx * (1.0 + s * Tx))
            s = s - f / df
        res = np.abs(s * s + Kx * (1.0 + s * Tx) * np.exp(-s * dx)) / np.maximum(np.abs(s * s) + Kx, 1e-300)
    ok = (res < 1e-8) & np.isfinite(s)
    score = np.where(ok, s.real, -np.inf)
    best = np.take_along_axis(s, np.argmax(score, axis=-1)[..., None], axis=-1)[..., 0]
    found = np.any(ok, axis=-1)
    best = np.where(found, best.real + 1j * np.abs(best.imag), complex(np.nan, np.nan))
    return best


@dataclass(frozen=True)
class LoopFigures:
    """The linear figures of one side of the loop (arrays broadcast like the inputs)."""

    K: Array
    T_w: Array
    tau: Array
    crossover_rad_s: Array
    phase_margin_rad: Array
    period_s: Array  # 2π/ω_c (spec §11.1)
    max_stable_delay_s: Array
    root: NDArray[np.complex128]  # rightmost characteristic root
    damped_period_s: Array  # 2π/Im(root)

    def to_dict(self) -> dict[str, float | None]:
        """Scalar figures as a JSON-able dict."""

        def f(v: ArrayLike) -> float | None:
            x = float(np.asarray(v).ravel()[0])
            return x if np.isfinite(x) else None

        root = complex(np.asarray(self.root).ravel()[0])
        return {
            "K_per_s2": f(self.K),
            "T_w_s": f(self.T_w),
            "tau_s": f(self.tau),
            "crossover_rad_s": f(self.crossover_rad_s),
            "phase_margin_rad": f(self.phase_margin_rad),
            "period_s": f(self.period_s),
            "max_stable_delay_s": f(self.max_stable_delay_s),
            "root_real_per_s": f(root.real),
            "root_imag_rad_s": f(root.imag),
            "damped_period_s": f(self.damped_period_s),
        }


def loop_figures(K: ArrayLike, T_w: ArrayLike, tau: ArrayLike) -> LoopFigures:
    """Crossover, phase margin, periods, τ_max and the rightmost root for K, T_w, τ."""
    K, T, tau = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (K, T_w, tau)))
    # K = 0 (no gain on a side: ω_c = 0) or a gain so large that ω_c overflows gives figures that
    # are not finite (JSON null in to_dict), not warnings on stderr
    with np.errstate(all="ignore"):
        wc = crossover(K, T)
        root = rightmost_root(K, T, tau)
        damped = np.where(np.abs(root.imag) > 1e-9 * wc, 2 * np.pi / np.abs(root.imag), np.inf)
        return LoopFigures(
            K=K,
            T_w=T,
            tau=tau,
            crossover_rad_s=wc,
            phase_margin_rad=np.arctan(wc * T) - wc * tau,
            period_s=2 * np.pi / wc,
            max_stable_delay_s=np.arctan(wc * T) / wc,
            root=root,
            damped_period_s=damped,
        )
