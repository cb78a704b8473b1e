"""The coordinates a bound's dual is solved in: the same dual, other roundings.

The bound's dual point ``y = (gamma, beta, lambda)`` gives each row ``a = gamma + beta w +
lambda . g + h`` (the user's coordinates, in which results are reported). At a target near the
edge of what the moment constraints allow, ``|lambda|`` reaches ``1e5`` and those terms cancel
to the last digits of ``a``; in centred coordinates, ``a = gamma' + beta (w - 1) + lambda . (g
- b) + h`` with ``gamma' = gamma + beta + lambda . b``, the features are those of the
likelihood and cancel no more than ``a`` itself does. Where two features nearly coincide on the
rows that carry the mass (``g = w`` on most of them), their multipliers grow together with
opposite signs and the Hessian loses the digits of their difference: there the centred features
are mixed by a unit upper triangular ``T`` that decorrelates them under the pass's weights
(:meth:`BoundFrame.decorrelated`), and ``y_c = T y``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import solve_triangular


class BoundFrame(NamedTuple):
    """Coordinates of a bound's dual: the user's (``centred`` False) or centred ones mixed by
    ``T`` (None: not mixed); ``b`` the moment constraints' targets."""

    centred: bool
    b: np.ndarray
    T: np.ndarray | None = None

    def lin(self):
        """The dual's linear term ``lin . y``: ``E_Q[(1, w, g)] = (1, 1, b)``, in centred
        coordinates ``(1, 0, ..., 0)`` (mixed: ``T' (1, 0, ...)``)."""
        if not self.centred:
            return np.concatenate(([1.0, 1.0], self.b))
        e = np.r_[1.0, np.zeros(1 + len(self.b))]
        return e if self.T is None else self.T.T @ e

    def rows(self, data):
        """``(B, floor)``: the atoms' constraints ``B y + floor >= 0`` in these coordinates."""
        B, floor = data.bound_rows(self.centred)
        return (B if self.T is None else B @ self.T), floor

    def from_user(self, y):
        """A point ``(gamma, beta, lambda)`` of the user's coordinates in these."""
        y = np.asarray(y, dtype=float)
        if not self.centred:
            return y
        return self.from_centred(np.r_[y[0] + y[1] + y[2:] @ self.b, y[1:]])

    def from_centred(self, yc):
        """A point of the (unmixed) centred coordinates in these."""
        yc = np.asarray(yc, dtype=float)
        return yc if self.T is None else solve_triangular(self.T, yc, unit_diagonal=True)

    def to_user(self, y):
        """``(gamma, beta, lambda)``: the point ``y`` of these coordinates in the user's."""
        y = np.asarray(y, dtype=float)
        if not self.centred:
            return y
        yc = y if self.T is None else self.T @ y
        return np.r_[yc[0] - yc[1] - yc[2:] @ self.b, yc[1:]]

    def means_to_user(self, mean):
        """``E[(1, w, g) / a]`` from ``E[F / a]`` of these coordinates' features ``F``."""
        mean = np.asarray(mean, dtype=float)
        if not self.centred:
            return mean
        mc = mean if self.T is None else solve_triangular(self.T.T, mean, lower=True,
                                                          unit_diagonal=True)
        return np.r_[mc[0], mc[1] + mc[0], mc[2:] + mc[0] * self.b]

    @classmethod
    def decorrelated(cls, b, sums):
        """Centred coordinates mixed by the unit upper triangular ``T`` under which the
        features' scatter ``sum c r r'`` (``r = F / a``, from a centred pass's
        :class:`~elcvx.passes.kernels.BoundSums`) is diagonal (Gram–Schmidt, in the features'
        order), the features' coefficients rounded to 24 bits (so that a feature that equals
        another on the rows mixes with it exactly); None where the scatter is not positive
        definite."""
        mean = np.asarray(sums.mean)
        # (The features' coefficients rounded, the constant's kept: a shift needs no cancelling.)
        T = decorrelating(np.asarray(sums.scatter) + sums.total * np.outer(mean, mean), rounded=1)
        return None if T is None else cls(True, np.asarray(b, dtype=float), T)


def decorrelating(G, rounded=0):
    """The unit upper triangular ``T`` under which the Gram matrix ``G`` of some features is
    diagonal (``T' G T``: Gram–Schmidt, in the features' order), the coefficients of the rows
    from ``rounded`` on rounded to 24 bits (so that a feature that equals another on the rows
    mixes with it exactly); None where ``G`` is not positive definite."""
    G = np.asarray(G, dtype=float)
    d = np.sqrt(np.diag(G))
    if not (np.all(np.isfinite(G)) and np.all(d > 0)):
        return None
    try:
        R = np.linalg.cholesky(G / np.outer(d, d)).T  # G = D R' R D
    except np.linalg.LinAlgError:
        return None
    U = (R / np.diag(R)[:, None]) * d[None, :] / d[:, None]  # unit upper: G = U' S U
    T = solve_triangular(U, np.eye(len(d)), unit_diagonal=True)
    T[rounded:] = np.triu(T[rounded:].astype(np.float32).astype(float), 0)
    T[np.diag_indices_from(T)] = 1.0
    return T if np.all(np.isfinite(T)) else None
