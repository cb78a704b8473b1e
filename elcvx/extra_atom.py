"""The extra atom: the mass the maximum-likelihood ``Q`` leaves off the sample, and its reward.

Where the MLE's constraint ``E_Q[w] = 1`` binds at ``wmin`` or ``wmax``, ``Q`` puts mass on an
unobserved weight there (docs/primal-dual.md, section 1): :func:`extra_atom` measures it, and
:func:`choose_rho` gives it a reward ``rho`` by one of :data:`RHO_RULES` (docs/rho.md). The
estimate, the interval and the bootstrap read the atom from here.
"""

from __future__ import annotations

import numpy as np

from . import _validation as iv
from .errors import InvalidInputError
from .sample import Sample

# Below this, an extra atom's importance-weighted mass is solver noise, not mass.
_MASS_TOL = 1e-10

#: The named rules for the extra atoms' reward ``rho`` (see :func:`elcvx.estimate`).
RHO_RULES = ("midpoint", "snips", "self-consistent")
#: The rule used when ``rho`` is not given (chosen from the studies in docs/rho.md).
DEFAULT_RHO = "self-consistent"


def extra_atom(sample: Sample, sol, with_value: bool = False):
    """Mass, importance-weighted mass and weight of the extra atom given a solution's primal
    ``q`` (``sol``: the MLE's or a bound's, with ``q``, ``beta`` and ``sums``).

    ``mass = 1 - sum c q``, ``wmass = 1 - sum c q w``; the atom sits at ``wmin`` when
    ``beta > 0`` and at ``wmax`` when ``beta < 0`` (docs/primal-dual.md, section 1); None when it
    carries nothing. ``with_value``: also returns ``sum c q w u``, the value of the mass on the
    sample. The sums the fast path's last pass computed (``sol.sums``) are used where it gives
    them (always where ``q`` is None: a log scanned in chunks), else sums over ``q``.
    """
    beta = sol.beta
    if len(sol.sums) >= (3 if with_value else 2):  # (the fast path's: q is not read)
        mass, wmass = 1.0 - sol.sums[0], 1.0 - sol.sums[1]
        tail = (sol.sums[2],) if with_value else ()
    else:
        q = sol.q
        cqw = np.multiply(q, sample.w) if sample.counts is None else sample.counts * q * sample.w
        mass = 1.0 - float(q.sum() if sample.counts is None else np.dot(sample.counts, q))
        wmass = 1.0 - float(cqw.sum())
        tail = (float(np.dot(cqw, sample.u)),) if with_value else ()
    if abs(wmass) <= _MASS_TOL and abs(mass) <= _MASS_TOL:
        return (0.0, 0.0, None) + tail
    w_ex = sample.wmin if beta > 0 else sample.wmax
    return (max(mass, 0.0), max(wmass, 0.0), w_ex) + tail


def choose_rho(sample: Sample, rho, base: float, wmass: float, snips=None) -> tuple:
    """The extra atoms' reward: ``(rho on the unit scale, rho on the user's scale, rule)``.

    ``base`` and ``wmass`` are those of ``V(rho_u) = base + wmass rho_u`` (unit scale):
    ``base = sum c q w u`` is the value of the maximum-likelihood mass on the rows and ``wmass =
    1 - sum c q w`` the importance-weighted mass on the extra atoms. ``rule`` is one of
    :data:`RHO_RULES`, or ``"number"`` for a ``rho`` given as a number. ``snips``: the SNIPS
    estimator (:func:`elcvx.baselines.snips`, given by the caller: the estimators are above
    this module), which the rule ``"snips"`` reads.
    """
    rule = DEFAULT_RHO if rho is None else rho
    valid = (f"give a number in [rmin, rmax] = [{sample.rmin}, {sample.rmax}] or one of "
             + ", ".join(map(repr, RHO_RULES)))
    if isinstance(rule, str) and rule not in RHO_RULES or isinstance(rule, (list, tuple, np.ndarray)):
        raise InvalidInputError(f"rho={rho!r} is not valid; {valid}")
    if not isinstance(rule, str):
        x = iv.finite_scalar("rho", rho)
        if not sample.rmin <= x <= sample.rmax:
            raise InvalidInputError(f"rho={rho!r} is outside [rmin, rmax]; {valid}")
        return sample.to_unit(x), x, "number"
    if rule == "midpoint":
        return 0.5, 0.5 * (sample.rmin + sample.rmax), rule
    if rule == "snips":  # the midpoint when every weight is 0 (SNIPS is then 0/0); a scan too
        # (Without `snips`: a check of the rule alone, before any solve.)
        rho_u = sample.to_unit(snips(sample).value) if snips is not None else 0.5
    else:
        # V(rho) = rho  <=>  rho (1 - wmass) = base; with no weight on the rows (every w = 0)
        # every rho is a fixed point, and the midpoint is taken. (A weight on the rows within
        # rounding of 0 is none: the sums of the rows and of their compression round apart.)
        on_rows = 1.0 - wmass
        rho_u = base / on_rows if on_rows > _MASS_TOL else 0.5
    rho_u = min(max(rho_u, 0.0), 1.0)
    return rho_u, sample.to_user(rho_u), rule
