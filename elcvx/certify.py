r"""One certificate for every EL program, on either solver path: a bound on the error of what the
user reads, computed from a dual point and the sums of one pass over the rows at it,
independently of how the point was found (the fast path's Newton method or Clarabel).

**The likelihood programs** (the MLE, and the profile at ``v``): the dual point ``x`` gives row
masses ``q_n = 1 / (N a_n)``, ``a_n = 1 + d_n x`` (``d``: the features ``w - 1``, ``g - b``
and, for the profile, ``h - v``), and the dual value ``l = sum c log a``, a lower bound on the
optimum ``l*`` wherever ``x`` meets the atoms' constraints (weak duality). The certificate
builds an **exactly feasible** primal point from ``q``: nonnegative atom masses ``mu``
(nonnegative least squares, mass kept off atoms whose dual constraint is slack) and, for what
they leave, a relative correction of each row's mass, ``q~_n = q_n (1 + e_n)`` with ``e_n = z_0
+ N q_n zeta . d_n`` (a Newton step of the dual, ``zeta = -dx``, in the primal; both the least
squares fit and the one of least ``sum c e^2`` are tried, the better kept). Its likelihood
bounds ``l*`` from above, so

.. math:: l^* - l \le \delta = -\textstyle\sum c \log(1 + e)
          \le -\sum c\, e + \sum c\, e^2 / (2 (1 - \tau)),

with ``|e_n| <= tau``; ``sum c e = -N mu . s`` (the atoms' complementarity, ``s`` their
slacks) and ``sum c e^2`` are sums the pass gives (``sum c q^2 (1, d)(1, d)'``), so no second
pass is made. The profile statistic ``2 (l_v - l*)`` is then known to ``2 max(delta_v,
delta)``.

**The estimate** is linear in the rows' masses, ``V = sum c a_n q_n + rho`` with ``|a_n| <=
w_n`` (``a_n = w_n (u_n - rho)``), and the likelihood is strongly concave in ``Q``: with ``s_n
= 1 - Q*_n / q~_n`` (``Q*`` the optimum), ``sum c psi(s_n) <= delta`` for ``psi(s) = s / (1 -
s) + log(1 - s) >= s^2 / (2 (1 + sigma)^2)``, so by Cauchy–Schwarz

.. math:: |V(q) - V(Q^*)| \le (1 + \sigma)(1 + \tau) \sqrt{2 \delta S} + \sqrt{S \textstyle\sum c e^2},
          \qquad S \ge \textstyle\sum c\, q_n^2 a_n^2

(:meth:`LikelihoodCertificate.value_error`: ``Q*`` against the feasible ``q~``, then ``q~``
against the reported ``q``).

**The bound** ``v_lb = min E_Q[h]`` over the ball ``sum c log Q >= phi``: the dual value ``D =
K geomean(a) - lin . y`` at a dual-feasible ``y = (gamma, beta, lambda)`` (``a = F y + h``,
``F = (1, w, g)``) is a lower bound; an exactly feasible primal point an upper bound. That
point is ``q = kappa / a`` (which meets the likelihood constraint with equality) with atom
masses and the correction ``e_n = z . F_n / a_n``, mixed with the true MLE ``Q*`` (exactly
feasible, of likelihood ``l* >= l``) in a fraction ``theta = eta / (eta + quantile/2 -
delta_mle)`` to make up the likelihood ``eta`` that the correction lost (the log-likelihood is
concave). Mixing raises ``E_Q[h]`` by ``theta (E_Q*[h] - E_Q~[h])``: at most ``theta`` times
the range of ``E_Q[h]``, or, where the MLE's estimate is certified, ``theta (top - E_Q~[h])``
with ``top`` that estimate plus its error (``Q*``'s atoms at ``h``'s least). The ball is the
one around the reported ``l*``, at most ``delta_mle`` below the true one, which moves the true
bound by at most ``K geomean (1 - exp(-delta_mle / N))``. With one row the correction is one
number and its likelihood exact, ``eta = -N log(1 + e)``: the row may then carry more than the
ball's least mass (a bound at an LP's vertex, the likelihood constraint slack), ``e`` of any
size above ``-1/2``. The true bound lies in ``[D - that, E_Q'[h]]``: the error of the
reported ``D`` is the larger distance.

A point is **certified** when these bounds are within :data:`VALUE_TOL` (values, unit reward
scale) and :data:`LOGLIK_TOL` (log-likelihoods, relative to ``max(1, |l|)``). The rows' sums
are known to their rounding only: a moment constraint met to :data:`ROUNDING` counts as met.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.optimize import nnls

#: The largest certified error of a value the user reads (an estimate, an end of an interval),
#: on the unit reward scale: the ``1e-6`` of the reward range that results promise. (The bounds
#: are worst cases: certified answers are usually far closer, 1e-10 on the fast path.)
VALUE_TOL = 1e-6
#: The largest certified error of a log-likelihood (``l*``, ``l_v``), relative to ``max(1, |l|)``.
LOGLIK_TOL = 1e-9
#: How far a dual point may violate an atom's constraint (rows of size one): rounding.
SLACK_TOL = 1e-12
#: A moment constraint met to this (rows of size one) is met: the rows' sums are known to their
#: rounding only.
ROUNDING = 1e-10
#: The largest relative correction ``|e_n|`` of a row's mass a certificate allows.
MAX_CORRECTION = 0.5
# Mass at an atom whose dual constraint is slack by s costs (PENALTY s)^2 in the masses' fit: the
# masses are not unique with more atoms than constraints, and mass at a slack atom is a gap.
_PENALTY = 1e4


@dataclass(frozen=True)
class Certificate:
    """A certificate's verdict: ``certified``, and ``reason`` when not; ``error``, the bound on
    the error of the value the program reports (unit scale; a likelihood program's ``gap``
    bounds its log-likelihood's); ``masses``, the atoms' (in rows of size one)."""

    certified: bool
    error: float
    masses: np.ndarray
    reason: str = ""


@dataclass(frozen=True)
class LikelihoodCertificate(Certificate):
    """A likelihood program's certificate: the true maximum lies in ``[l, l + gap]``; ``tau``
    bounds the correction of each row's mass, ``sum_e2`` its sum of squares, ``sigma`` the
    strong concavity's slack (see the module's docstring)."""

    gap: float = math.inf
    tau: float = math.inf
    sum_e2: float = math.inf
    sigma: float = math.inf

    def value_error(self, S: float) -> float:
        """The error bound of ``sum c a_n q_n`` for any ``a`` with ``S >= sum c q_n^2 a_n^2``."""
        if not self.certified or not math.isfinite(self.sigma):
            return math.inf
        S = max(float(S), 0.0)
        return ((1.0 + self.sigma) * (1.0 + self.tau) * math.sqrt(2.0 * self.gap * S)
                + math.sqrt(S * self.sum_e2))


def _masses(residual, columns, slack):
    """Candidates for the atoms' nonnegative masses: those explaining as much of ``residual``
    as they can with mass kept off slack atoms (see :data:`_PENALTY`), and those plus what is
    left (rounding, mostly) by any atom. A mass ``mu`` at an atom of slack ``s`` costs ``mu s``
    in a certificate; what the atoms leave, the rows' correction takes, which can cost far more
    where the rows hold little of a moment (an ``E_Q[1]`` of ``1e-5`` on rows of weight
    ``1e5``): the certificates keep the better."""
    if not columns.shape[1]:
        return [np.zeros(0)]
    rows, atoms = columns.shape
    iters = 50 * atoms + 100
    # (The columns over the penalty's diagonal, written in place: no diagonal matrix made.)
    stacked = np.zeros((rows + atoms, atoms))
    stacked[:rows] = columns
    stacked.reshape(-1)[rows * atoms::atoms + 1] = _PENALTY * np.maximum(slack, 0.0)
    target = np.zeros(rows + atoms)
    target[:rows] = residual
    masses, _ = nnls(stacked, target, maxiter=iters)
    rest = residual - columns @ masses
    out = [masses]
    # The atoms that carry mass, refitted to what is left (the fit's own rounding, which the rows
    # could only take in at a huge relative change where they hold 1e-18 of E_Q[w]).
    on = masses > 0
    if on.any():
        refit = masses.copy()
        refit[on] += np.linalg.lstsq(columns[:, on], rest, rcond=None)[0]
        if all(t >= 0 for t in refit.tolist()):  # (np.all's answer, NaN false, fewer calls)
            out.append(refit)
    more, off = nnls(columns, rest, maxiter=iters)
    if off < math.sqrt(float(rest.dot(rest))):  # (np.linalg.norm's operations, fewer calls)
        out.append(masses + more)
    # (A candidate equal to one before it would give the same certificates again: compared as
    # np.array_equal does, NaN unequal, on lists of floats, at less cost.)
    keys = [mu.tolist() for mu in out]
    return [mu for i, mu in enumerate(out) if keys[i] not in keys[:i]]


def _best(certificates):
    """The certified one of least error, else the first."""
    good = [c for c in certificates if c.certified]
    return min(good, key=lambda c: c.error) if good else certificates[0]


class _Scaled(NamedTuple):
    """A matrix ``M`` with its columns scaled to size one (``M / norms``), for
    :func:`_correction`: made once for the several candidates a certificate fits."""

    M: np.ndarray
    unit: np.ndarray
    norms: np.ndarray


def _scaled(M) -> _Scaled:
    norms = np.sqrt(np.add.reduce(M * M, axis=0))  # (np.linalg.norm's operations, fewer calls)
    norms[~(norms > 0)] = 1.0
    return _Scaled(M, M / norms, norms)


def _correction(M, rest):
    """``(z, off)``: ``M z = rest`` by least squares (``M`` may be singular: redundant features),
    and what it leaves; ``M`` a matrix or its :class:`_Scaled`. The columns are scaled to size
    one first: with weights of ``1e6`` a feature's column can be ``1e-12`` of another's, and an
    unscaled least squares would take its rounding for a direction."""
    M, unit, norms = M if isinstance(M, _Scaled) else _scaled(M)
    z = np.linalg.lstsq(unit, rest, rcond=1e-13)[0] / norms
    return z, rest - M @ z


#: A correction whose ``sum c e^2`` is below this is rounding (``N`` rows' ``e`` of ``1e-16``
#: give ``1e-25`` at ``N = 1e7``), and worth no other fit.
_CHEAP_ENOUGH = 1e-20


def _fits(M, columns, residual, mu, cost):
    """Candidates ``(mu, z, off)`` for the certificates to judge: :func:`_fit`'s and, where
    its correction is more than rounding, :func:`_cheapest`'s (``cost``: the matrix of ``sum c
    e^2 = z' cost z``; ``M`` a :class:`_Scaled`)."""
    fit = _fit(M, columns, residual, mu)
    z = fit[1]
    if not (_met(fit[2]) and float(z @ cost @ z) > _CHEAP_ENOUGH):
        return [fit]
    cheap = _cheapest(M.M, columns, residual, mu, cost)
    return [fit] if cheap is None else [fit, cheap]


def _fit(M, columns, residual, mu):
    """``(mu, z, off)``: the rows' correction ``z`` for what the atoms' masses ``mu`` leave of
    ``residual``; where the two fitted one after the other leave more than rounding (the atoms
    carry nearly all of a moment of size ``1e6``), both at once on the atoms that carry mass,
    if that keeps every mass nonnegative. ``M``: a :class:`_Scaled`."""
    z, off = _correction(M, residual - columns @ mu)
    best = (mu, z, off)
    if _met(off):
        return best
    M = M.M
    # (Atoms of mass 1e-19 are rounding: moved with the others, they may turn negative.)
    for on in (mu > ROUNDING * mu.max(initial=0.0), mu > 0):
        if not on.any():
            continue
        both, left = _correction(np.column_stack([columns[:, on], M]), residual - columns @ mu)
        joint = mu.copy()
        joint[on] += both[:on.sum()]
        if np.all(joint >= 0) and np.abs(left).max() < np.abs(best[2]).max():
            best = (joint, both[on.sum():], left)
    return best


def _cheapest(M, columns, residual, mu, cost):
    """A fit as :func:`_fit`'s, the one whose correction costs least, ``min z' cost z`` over ``z`` and
    the masses of the atoms that carry mass, or None if it moves a mass below 0 or leaves more
    than rounding. (Mass moved to an atom of slack ``s`` costs ``mu s`` in the certificate,
    which this fit does not weigh: the certificates of both fits are compared.)

    Where the rows hold a moment only at ``1e-11`` (weights within ``1e-11`` of 1), the
    rounding of ``1 - sum c q`` (``1e-16``) that a plain least squares puts on that moment
    asks a correction of relative size ``1e-5`` there, when the rows' mass absorbs it at
    ``1e-16``. Where one row holds nearly all the rows' mass (a target at the feasible set's
    edge), the rows' columns are nearly of rank one and the atoms must take the rest: the
    fit's optimality conditions are solved as one system (scaled; by least squares, as it is
    singular where features are redundant), which keeps the digits that fitting the masses
    after the rows loses."""
    on = mu > ROUNDING * mu.max(initial=0.0)  # (masses of 1e-30 are the fit's rounding)
    C = columns[:, on]
    diag = np.sqrt(np.maximum(np.diag(cost), 0.0))
    if not (np.all(np.isfinite(cost)) and np.all(diag > 0)):
        return None
    # Unit scales first: the cost's entries range over 1e-22 .. 1 (rows of weights near 1).
    Ms = M / diag
    norms = np.linalg.norm(C, axis=0)
    Cs = C / np.where(norms > 0, norms, 1.0)
    m, k, r = M.shape[1], C.shape[1], len(residual)
    # min |z|^2 (z scaled) subject to Ms z + Cs nu = rest, by its optimality conditions:
    # [[I, 0, Ms'], [0, 0, Cs'], [Ms, Cs, 0]] (z, nu, -multipliers) = (0, 0, rest).
    K = np.zeros((m + k + r, m + k + r))
    K[:m, :m] = np.eye(m)
    K[:m, m + k:] = Ms.T
    K[m:m + k, m + k:] = Cs.T
    K[m + k:, :m] = Ms
    K[m + k:, m:m + k] = Cs
    rest = residual - columns[:, ~on] @ mu[~on]
    sol = np.linalg.lstsq(K, np.r_[np.zeros(m + k), rest], rcond=None)[0]
    z = sol[:m] / diag
    fitted = mu.copy()
    fitted[on] = sol[m:m + k] / np.where(norms > 0, norms, 1.0)
    off = rest - C @ fitted[on] - M @ z
    if np.any(fitted < 0) or not _met(off):
        return None
    return fitted, z, off


def _met(off):
    """Whether every entry of ``off`` is within :data:`ROUNDING` of 0 (not a NaN)."""
    return all(abs(t) <= ROUNDING for t in off.tolist())


def _sigma(gap, c_min):
    """The strong concavity's slack: ``|s_n| <= sigma`` for ``c_n psi(s_n) <= gap``."""
    r0 = math.sqrt(2.0 * gap / c_min)
    return r0 / (1.0 - r0) if r0 < 0.5 else math.inf


def likelihood(n, c_min, A, h, x, mass, moments, q2, value=None) -> LikelihoodCertificate:
    """The certificate of a likelihood dual point ``x`` (the MLE's, or the profile's at
    ``value``), from one pass at ``x``: ``mass = sum c q``, ``moments = sum c q d``, ``q2 =
    sum c q^2 (1, d)(1, d)'``, ``q = 1 / (N (1 + d x))``. ``A x + h >= 0`` are the atoms'
    constraints (rows of size one, columns of ``A`` per feature), ``n = sum c`` and ``c_min``
    the least count. The certified ``gap`` bounds ``l* - l``."""
    x = np.asarray(x, dtype=float)
    slack = A @ x + h
    if not slack.min(initial=0.0) >= -SLACK_TOL:
        return _rejected(LikelihoodCertificate,
                         f"the dual point violates an atom's constraint by {-slack.min():.2g}")
    moments = np.asarray(moments, dtype=float)
    if not _finite(mass, moments, q2):
        return _rejected(LikelihoodCertificate, _OVERFLOW)
    m = len(moments)
    residual = np.empty(m + 1)
    residual[0], residual[1:] = 1.0 - mass, -moments
    columns = np.empty((m + 1, len(h)))
    columns[0], columns[1:] = h, A.T
    # e = z0 + N q zeta . d moves the sums c q (1, d) by z0 (mass, moments) + N q2[:, 1:] zeta.
    M = np.empty((m + 1, m + 1))
    M[0, 0], M[1:, 0], M[:, 1:] = mass, moments, n * q2[:, 1:]
    cost = np.empty((m + 1, m + 1))  # sum c e^2 = z' cost z
    cost[0, 0], cost[0, 1:], cost[1:, 0], cost[1:, 1:] = 1.0, moments, moments, n * q2[1:, 1:]
    cost *= n
    scaled = _scaled(M)
    return _best([_likelihood_at(fit, n, c_min, slack, moments, q2)
                  for mu in _masses(residual, columns, slack)
                  for fit in _fits(scaled, columns, residual, mu, cost)])


def _likelihood_at(fit, n, c_min, slack, moments, q2):
    """:func:`likelihood`'s certificate with the atoms' masses and the rows' correction of
    ``fit`` (:func:`_fits`)."""
    mu, z, off = fit
    if not _met(off):
        return _rejected(LikelihoodCertificate,
                         f"the moment constraints are off by {np.abs(off).max():.2g}", mu)
    z0, zeta = z[0], z[1:]
    spread = n * n * max(float(zeta @ q2[1:, 1:] @ zeta), 0.0)  # sum c (N q zeta . d)^2
    sum_e2 = max(n * z0 * z0 + 2.0 * n * z0 * float(zeta @ moments) + spread, 0.0)
    tau = abs(z0) + math.sqrt(spread / c_min)
    if not tau <= MAX_CORRECTION:
        return _rejected(LikelihoodCertificate,
                         f"the correction to a feasible point is too large ({tau:.2g})", mu)
    # sum c e = N (sum c q~ a - 1) = -N mu . s for the exactly feasible q~ (sum c q a = 1):
    # computed so, it carries none of the rows' sums' rounding.
    sum_e = -n * float(mu @ slack)
    gap = max(0.0, -sum_e + sum_e2 / (2.0 * (1.0 - tau)))
    return LikelihoodCertificate(True, gap, mu, gap=gap, tau=tau, sum_e2=sum_e2,
                                 sigma=_sigma(gap, c_min))


def bound(n, c_min, B, floor, y, sums, K, lin, quantile, mle_gap, width,
          top=math.inf) -> Certificate:
    """The certificate of a bound's dual point ``y = (gamma, beta, lambda)``: ``B y + floor >= 0``
    are the atoms' constraints, ``sums`` the pass's at ``y``
    (:class:`~elcvx.passes.kernels.BoundSums`), ``K = exp(-(l + quantile/2) / N)`` with ``l`` the
    reported MLE, ``mle_gap`` its certified gap, ``lin = (1, 1, b)``, ``width`` the range of
    ``E_Q[h]`` (1 for a policy's value), ``top`` an upper bound on ``E_Q[h]`` at the true MLE
    where one is certified (the estimate plus its error), else inf. ``error`` bounds the
    distance of the reported dual value to the true bound."""
    y = np.asarray(y, dtype=float)
    slack = B @ y + floor
    if not slack.min(initial=0.0) >= -SLACK_TOL:
        return _rejected(Certificate,
                         f"the dual point violates an atom's constraint by {-slack.min():.2g}")
    kg = K * math.exp(sums.log_sum / n)
    kappa = kg / n
    dual = kg - float(lin @ y)
    mean = np.asarray(sums.mean)
    with np.errstate(over="ignore", invalid="ignore"):
        # sum c r r', r = F / a (np.outer's product, without its call)
        rr = np.asarray(sums.scatter) + sums.total * (mean[:, None] * mean[None, :])
        residual = lin - kappa * sums.total * mean
    if not _finite(dual, rr, residual):
        return _rejected(Certificate, _OVERFLOW)
    # (A correction e = z . r moves sum c q F by kappa rr z, at a price sum c e^2 = z' rr z.)
    M = _scaled(kappa * rr)
    return _best([_bound_at(fit, n, c_min, floor, slack, rr, sums, kappa, kg, dual, quantile,
                            mle_gap, width, top)
                  for mu in _masses(residual, B.T, slack)
                  for fit in _fits(M, B.T, residual, mu, rr)])


def _bound_at(fit, n, c_min, floor, slack, rr, sums, kappa, kg, dual, quantile, mle_gap,
              width, top):
    """:func:`bound`'s certificate with the atoms' masses and the rows' correction of ``fit``
    (:func:`_fits`)."""
    mu, z, off = fit
    if not _met(off):
        return _rejected(Certificate, f"the moment constraints are off by {np.abs(off).max():.2g}",
                         mu)
    sum_e2 = max(float(z @ rr @ z), 0.0)
    tau = math.sqrt(sum_e2 / c_min)
    one_row = c_min >= n  # (counts are positive: the least is N only with one row)
    e = float(z @ np.asarray(sums.mean)) if one_row else math.nan  # (r of the row: its mean)
    if not (tau <= MAX_CORRECTION or (one_row and e >= -MAX_CORRECTION)):
        return _rejected(Certificate,
                         f"the correction to a feasible point is too large ({tau:.2g})", mu)
    primal = kappa * (sums.h_sum + float(z @ sums.h_r)) + float(mu @ floor)  # E_Q~[h]
    # sum c e = sum c (q~ - q) a / kappa = (E_Q~[h] - D - mu . s) / kappa for the exactly
    # feasible q~ (sum c q a = N kappa, sum c q~ F = lin - B' mu): free of the rows' rounding.
    sum_e = (primal - dual - float(mu @ slack)) / kappa
    if not z.any():
        # The atoms take the whole residual: q~ is q (e = 0 on every row), whose likelihood is
        # the ball's. (The identity above divides the rounding of E_Q~[h] - D by kappa, which
        # is 1e-14 where the bound is reached only as a row's a -> 0: an end of the range.)
        sum_e = 0.0
    # (kappa makes sum c log q = phi; its log-sum's rounding is the likelihood's too.)
    if one_row:
        # One row: q~ = q (1 + e) exactly, a likelihood change of N log(1 + e) (no bound on
        # |e| needed: the row may carry more than the ball's least mass, as where the bound is
        # an LP's vertex with the likelihood constraint slack).
        lost = -n * math.log1p(e)
    else:
        lost = -sum_e + sum_e2 / (2.0 * (1.0 - tau))
    eta = max(0.0, lost) + 1e-15 * (abs(sums.log_sum) + n)
    room = 0.5 * quantile - mle_gap
    if not room > 0:
        return _rejected(Certificate, "the MLE's gap exceeds the ball's radius", mu)
    theta = eta / (eta + room)
    # The partner's E_Q[h] exceeds E_Q~[h] by at most the range, or by top - E_Q~[h] where the
    # MLE's value is certified: at N = 1e7 eta is 1e-6 at f's rounding, which times the range
    # is an error of 2.5e-6 (one more pass), times top - E_Q~[h] (the interval's half) 1e-9.
    reach = width if not top < math.inf else max(0.0, min(width, top - primal))
    above = primal + theta * reach - dual
    below = -kg * math.expm1(-mle_gap / n)
    error = max(above, below, 0.0)
    if not error <= VALUE_TOL:
        why = (f"the bound's error bound is {error:.2g}: a primal point above by "
               f"{primal - dual:.2g}, its likelihood made up at {theta * reach:.2g}, the MLE's "
               f"gap {below:.2g}")
        return Certificate(False, error, mu, why)
    return Certificate(True, error, mu)


#: Why a point is refused whose pass's sums left the floats (another solver's point far out).
_OVERFLOW = "the pass's sums overflow at the dual point"


def _finite(*values):
    """Whether every number of ``values`` (floats, or the certificates' small arrays) is
    finite (a list's floats checked one by one: fewer calls than numpy's on a few entries)."""
    for v in values:
        if not (math.isfinite(v) if isinstance(v, float)
                else all(map(math.isfinite, v.ravel().tolist()))):
            return False
    return True


def _rejected(kind, reason, masses=np.zeros(0)):
    return kind(False, math.inf, masses, reason)
