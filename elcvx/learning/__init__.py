r"""Lower-bound policy learning: the distributionally robust game of the paper, solved two ways.

The paper (section "Offline Contextual Bandit Learning", appendix "Learning from Logged Bandit
Feedback") learns a policy ``pi`` from a log ``(x_n, a_n, p_n, r_n)`` by maximising the EL lower
bound of its value,

.. math:: \max_{\pi} v_{lb}(\pi), \qquad v_{lb}(\pi) = \min_{Q \in \mathcal Q(\pi)}
          \sum_n Q_n w_n(\pi) u_n, \qquad w_n(\pi) = \pi(a_n | x_n) / p_n,

with ``Q(pi)`` the likelihood ball of the confidence interval (rewards ``u`` on ``[0, 1]``). Two
solvers of this max-min game:

* ``solver="alternating"`` -- the paper's: fix ``pi``, solve the inner problem (its duals give
  the minimising ``Q``); fix ``Q``, let a learner improve ``pi`` on examples weighted by
  ``N Q_n`` (:func:`lower_bound_weights`); repeat for ``passes`` passes. Any learner that
  honours the :class:`Learner` protocol can play: :class:`LinearSoftmaxPolicy` (numpy/scipy)
  and :class:`VowpalWabbitPolicy` (the ``vw`` extra, as the paper used) are provided.
* ``solver="direct"`` -- L-BFGS on ``v_lb(pi(theta))`` itself for a differentiable policy
  (:class:`DifferentiablePolicy`), with the exact gradient that the envelope theorem gives from
  the optimal ``Q`` and duals (:func:`value_and_grad`).

The EL point estimate (``objective="estimate"``) and IPS (``objective="ips"``) are offered as
objectives too, so that the three can be compared (``examples/learn_policy.py``;
:class:`SyntheticBandit`, :mod:`~elcvx.learning.bandit`, has known true values). See
``docs/learning.md``.

The package: :mod:`~elcvx.learning.policies` (the protocols and the learners),
:mod:`~elcvx.learning.objective` (the objectives and their gradients in ``w``, solved through
:mod:`elcvx.dispatch`), :mod:`~elcvx.learning.fitting` (:func:`fit`, the two solvers),
:mod:`~elcvx.learning.bandit` (:class:`SyntheticBandit`).
"""

from __future__ import annotations

# In the order of the API reference (members in source order).
from .policies import Learner, DifferentiablePolicy, LinearSoftmaxPolicy, VowpalWabbitPolicy
from .fitting import fit, FitResult, FitStep
from .objective import lower_bound_weights, value_and_grad
from .bandit import SyntheticBandit

__all__ = [
    "Learner",
    "DifferentiablePolicy",
    "LinearSoftmaxPolicy",
    "VowpalWabbitPolicy",
    "lower_bound_weights",
    "value_and_grad",
    "fit",
    "FitResult",
    "FitStep",
    "SyntheticBandit",
]
