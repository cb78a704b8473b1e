"""EL in other libraries' estimator interfaces.

:class:`EmpiricalLikelihood` has the interface of Open Bandit Pipeline's off-policy estimators
(``obp.ope.BaseOffPolicyEstimator``): ``estimator_name``, ``estimate_policy_value`` and
``estimate_interval`` returning obp's ``{"mean", "95.0% CI (lower)", "95.0% CI (upper)"}``
dictionary, with obp's argument names (``reward``, ``action``, ``action_dist``, ``pscore``,
``position``, ``alpha``). It is duck-typed: obp is not imported, nor needed, so EL can be listed
in ``obp.ope.OffPolicyEvaluation(bandit_feedback, ope_estimators=[IPW(), EmpiricalLikelihood(...)])``
beside obp's own estimators. No extra of elcvx installs obp: ``pip install obp`` pulls in
PyTorch, several GB.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validation as iv
from .errors import InvalidInputError
from .sample import Sample

__all__ = ["EmpiricalLikelihood"]


@dataclass
class EmpiricalLikelihood:
    """The EL estimate and interval as an Open Bandit Pipeline estimator.

    Parameters
    ----------
    wmax : float, optional
        Upper bound on the importance weights ``action_dist[a] / pscore``.
    pmin : float, optional
        Instead of ``wmax``: the smallest probability the logging policy gives any action
        (``wmax = 1/pmin``). Without either, ``wmax = inf`` (valid, but the interval is wider).
    wmin : float
        Lower bound on the weights, default 0.
    rmin, rmax : float
        The reward range, default ``[0, 1]`` (obp's clicks).
    calibration : {"chi2", "f"}
        As for :func:`elcvx.interval`.
    method : {"auto", "fast", "cvxpy"}
        As for :func:`elcvx.estimate`.
    use_estimated_pscore : bool
        Use obp's ``estimated_pscore`` argument instead of ``pscore`` (as obp's IPW does).
    estimator_name : str
        The key of this estimator in obp's result dictionaries; default ``"el"``.

    Notes
    -----
    ``alpha`` is obp's significance level: the interval's confidence level is ``1 - alpha``.
    obp's bootstrap arguments (``n_bootstrap_samples``, ``random_state``) are accepted and
    ignored: the EL interval is a likelihood-ratio interval, not a bootstrap one, and its
    ``"mean"`` entry is the EL point estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx.adapters import EmpiricalLikelihood
    >>> action = np.array([0, 1, 1, 0])
    >>> reward = np.array([1.0, 0.0, 1.0, 1.0])
    >>> pscore = np.array([0.5, 0.5, 0.5, 0.5])
    >>> action_dist = np.zeros((4, 2, 1)); action_dist[:, 0, 0] = 1.0   # always action 0
    >>> el = EmpiricalLikelihood(pmin=0.5)
    >>> round(el.estimate_policy_value(reward=reward, action=action, action_dist=action_dist,
    ...                                pscore=pscore), 4)
    1.0
    >>> sorted(el.estimate_interval(reward=reward, action=action, action_dist=action_dist,
    ...                             pscore=pscore, alpha=0.1))
    ['90.0% CI (lower)', '90.0% CI (upper)', 'mean']
    """

    wmax: float | None = None
    pmin: float | None = None
    wmin: float = 0.0
    rmin: float = 0.0
    rmax: float = 1.0
    calibration: str = "chi2"
    method: str = "auto"
    use_estimated_pscore: bool = False
    estimator_name: str = "el"

    def __post_init__(self):
        iv.option("calibration", self.calibration, iv.CALIBRATIONS)
        iv.option("method", self.method, iv.METHODS)
        if self.wmax is not None and self.pmin is not None:
            raise InvalidInputError("give wmax or pmin, not both")

    # -- obp's inputs -> a Sample -----------------------------------------------------------------
    def sample(self, reward, action, action_dist, pscore=None, position=None,
               estimated_pscore=None, **kwargs) -> Sample:
        """The :class:`~elcvx.Sample` of obp-style inputs.

        ``w_i = action_dist[i, action[i], position[i]] / pscore[i]``.
        """
        pscore = estimated_pscore if self.use_estimated_pscore else pscore
        which = "estimated_pscore" if self.use_estimated_pscore else "pscore"
        if pscore is None:
            raise InvalidInputError(f"{which} is needed: the logging policy's probability of each "
                                    "logged action")
        dist = np.asarray(action_dist, dtype=float)
        if dist.ndim != 3:
            raise InvalidInputError("action_dist must be 3-dimensional (n_rounds, n_actions, "
                                    f"len_list), got shape {dist.shape}")
        n = dist.shape[0]
        action = np.asarray(action)
        if action.shape != (n,) or not np.issubdtype(action.dtype, np.integer):
            raise InvalidInputError(f"action must be {n} integers (one per round of action_dist), "
                                    f"got shape {action.shape} of {action.dtype}")
        if position is None:
            if dist.shape[2] != 1:
                raise InvalidInputError("position is needed when action_dist has len_list > 1")
            position = np.zeros(n, dtype=int)
        position = np.asarray(position)
        if position.shape != (n,) or not np.issubdtype(position.dtype, np.integer):
            raise InvalidInputError(f"position must be {n} integers, got shape {position.shape}")
        bad = (action < 0) | (action >= dist.shape[1])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(f"action[{i}]={int(action[i])} is not in [0, {dist.shape[1]})")
        bad = (position < 0) | (position >= dist.shape[2])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(f"position[{i}]={int(position[i])} is not in [0, {dist.shape[2]})")
        target = dist[np.arange(n), action, position]
        return Sample.from_probs(target, pscore, reward, pmin=self.pmin, wmax=self.wmax,
                                 wmin=self.wmin, rmin=self.rmin, rmax=self.rmax)

    # -- obp's estimator interface ------------------------------------------------------------------
    def estimate_policy_value(self, reward, action, action_dist, pscore=None, position=None,
                              estimated_pscore=None, **kwargs) -> float:
        """The EL estimate of the evaluation policy's value (:func:`elcvx.estimate`)."""
        from .estimate import estimate

        s = self.sample(reward, action, action_dist, pscore, position, estimated_pscore)
        return float(estimate(s, method=self.method).value)

    def estimate_interval(self, reward, action, action_dist, pscore=None, position=None,
                          estimated_pscore=None, alpha: float = 0.05, n_bootstrap_samples=None,
                          random_state=None, **kwargs) -> dict:
        """The EL interval at confidence level ``1 - alpha``, as obp's dictionary.

        Returns
        -------
        dict
            ``{"mean": estimate, f"{100 * (1. - alpha)}% CI (lower)": low,
            f"{100 * (1. - alpha)}% CI (upper)": high}``, obp's keys (``"95.0% CI (lower)"``
            at ``alpha = 0.05``).
        """
        from .estimate import estimate
        from .interval import interval

        alpha = iv.finite_scalar("alpha", alpha)
        if not 0.0 < alpha < 1.0:
            raise InvalidInputError(f"alpha={alpha!r} must lie strictly between 0 and 1")
        s = self.sample(reward, action, action_dist, pscore, position, estimated_pscore)
        est = estimate(s, method=self.method)
        low, high = interval(s, confidence_level=1.0 - alpha, calibration=self.calibration,
                             method=self.method)
        return {
            "mean": float(est.value),
            f"{100 * (1. - alpha)}% CI (lower)": float(low),
            f"{100 * (1. - alpha)}% CI (upper)": float(high),
        }
