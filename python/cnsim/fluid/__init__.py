"""Fluid (delay-differential) models of BCN, QCN and DCQCN and their linear stability.

spec/algorithms.md §11 (§11.1 BCN from the first study deck with the derivative term's sign
corrected, §11.2 QCN re-derived from the algorithm, §11.3 DCQCN), with the schemes' parameters of §3–5 taken
from the same scenario files the packet simulator runs. See docs/fluid.md.

* :mod:`.dde` — fixed-step RK4 method-of-steps solver with a history ring buffer, vectorised
  over a parameter grid; :func:`solve_dde`.
* :mod:`.params` — :func:`fluid_params`: a single-bottleneck scenario → :class:`FluidParams`.
* :mod:`.models` — :func:`simulate`: the BCN and QCN fluid models on a grid of parameters
  (DCQCN's in :mod:`.dcqcn`, reached through :func:`simulate` too, with its fixed point and
  small-signal modes).
* :mod:`.stability` — the characteristic equation s² + K(1 + sT_w)e^{−sτ} = 0: crossover,
  phase margin, τ_max, rightmost root.
* :mod:`.linear` — :func:`bcn_linear` (both sides of the BCN loop), :func:`w_needed`, maps.
* :mod:`.report` — :func:`fluid_study` and :func:`write_outputs` behind ``cnsim fluid``.
"""

from .dcqcn import fixed_point as dcqcn_fixed_point
from .dcqcn import linear_modes as dcqcn_linear
from .dde import DdeSolution, solve_dde
from .grid import FluidRun
from .linear import bcn_linear, bcn_phase_margin_grid, w_needed
from .models import bcn_equilibrium, simulate
from .params import FLUID_SCHEMES, FluidParams, fluid_params
from .report import fluid_study, write_outputs
from .stability import crossover, loop_figures, max_stable_delay, phase_margin, rightmost_root

__all__ = [
    "DdeSolution", "solve_dde", "bcn_linear", "bcn_phase_margin_grid", "w_needed", "FluidRun",
    "bcn_equilibrium", "simulate", "FLUID_SCHEMES", "FluidParams", "fluid_params", "fluid_study",
    "write_outputs", "dcqcn_fixed_point", "dcqcn_linear", "crossover", "loop_figures", "max_stable_delay", "phase_margin", "rightmost_root",
]
