"""The LS paper's tightness protocol: the policies, the logs, the true values and the weight range.

Every number here is what ``ope_ops/policy_evaluation.py`` of ``otmhi/offpolicy_ls`` (with
``ope_ops/data.py`` and ``ope_ops/policies.py``) computes, in closed form where it is one:

* a context is a row of a classification dataset and only its label ``y`` matters: both policies
  are softmaxes of a one-hot vector (the authors' ``SoftmaxDataPolicy``);
* the target ``pi`` puts ``e^(1/tau)`` on ``y`` and 1 on each other action (normalised by ``Z =
  e^(1/tau) + K - 1``); the logging policy ``h`` does the same at ``tau0`` around the *altered*
  label, ``y + 1 mod K`` for ``y`` in ``{0, 1}`` (its "faulty actions") and ``y`` otherwise;
* the reward of action ``a`` is ``1[a == y]``, flipped with probability ``eta``;
* so every context has the same value, ``V = (1 - eta) p + eta (1 - p)`` with ``p = e^(1/tau) /
  Z``, the authors' ``get_true_value`` (an average of this constant over their test rows);
* ``w = pi(a|x) / h(a|x)`` takes one of four values (``pi`` and ``h`` each give ``a`` the peak or
  the rest), whose least and largest are the known weight range ``[wmin, wmax]``;
* the log: 98% of the rows (``Dataset(train_frac=0.01, log_frac=0.98)``: scikit-learn's two
  ``train_test_split`` calls keep ``n_log(n)`` rows), here drawn afresh for each replicate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: The grid of the authors' script: logging temperatures, target temperatures, reward noises.
LOGGING_TEMPERATURES = (0.3, 0.25, 0.2)
TARGET_TEMPERATURES = (0.1, 0.2, 0.3, 0.4, 0.5)
REWARD_NOISES = (0.0, 0.1, 0.2)
#: The labels whose logging peak is shifted by one (the authors' ``faulty_actions=[0, 1]``).
FAULTY = (0, 1)
#: The OpenML ids of the five datasets of the study (their names as in the published table).
DATASETS = {181: "yeast", 54: "vehicle", 30: "page-blocks", 28: "optdigits", 184: "kropt"}


class Config(NamedTuple):
    """One cell of the grid, in the authors' loop order (noise, then target, then logging)."""

    eta: float
    tau: float
    tau0: float


def configs() -> list:
    """The 45 configurations, in the order of the authors' results file."""
    return [Config(eta, tau, tau0) for eta in REWARD_NOISES for tau in TARGET_TEMPERATURES
            for tau0 in LOGGING_TEMPERATURES]


def n_log(n: int) -> int:
    """Rows logged out of ``n``: scikit-learn's ``train_test_split(train_size=0.01 + 0.98)`` keeps
    ``floor(0.99 n)``, and its second split, ``train_size=0.01/0.99``, gives
    ``floor(0.01/0.99 * kept)`` of those to training; the rest is the log."""
    kept = math.floor((0.01 + 0.98) * n)
    return kept - math.floor(0.01 / (0.01 + 0.98) * kept)


def true_value(cfg: Config, k: int) -> float:
    """``V = (1 - eta) p + eta (1 - p)``, ``p = e^(1/tau) / (e^(1/tau) + K - 1)``."""
    peak = math.exp(1.0 / cfg.tau)
    p = peak / (peak + k - 1)
    return (1.0 - cfg.eta) * p + cfg.eta * (1.0 - p)


def softmax_probabilities(tau: float, k: int) -> tuple:
    """A softmax of a one-hot vector at temperature ``tau``: ``(peak, rest)`` probabilities."""
    peak = math.exp(1.0 / tau)
    return peak / (peak + k - 1), 1.0 / (peak + k - 1)


def weight_range(cfg: Config, k: int) -> tuple:
    """``(wmin, wmax)``: the least and largest of the four ratios ``pi(a|x) / h(a|x)``, computed
    as the rows' weights are (so every weight lies in the range exactly)."""
    target, logging = softmax_probabilities(cfg.tau, k), softmax_probabilities(cfg.tau0, k)
    ratios = [t / h for t in target for h in logging]
    return min(ratios), max(ratios)


@dataclass(frozen=True)
class Log:
    """One logged dataset: weights, rewards, the logging probabilities of the logged actions."""

    w: np.ndarray
    r: np.ndarray
    p: np.ndarray
    value: float
    wmin: float
    wmax: float
    #: Whether each row's logged action is its label (``a == y``): any target's probability of it
    #: is then the target's peak, else its rest (the validity suite's other targets).
    hit: np.ndarray | None = None


def draw_log(labels: np.ndarray, k: int, cfg: Config, rng: np.random.Generator) -> Log:
    """A log of ``n_log(len(labels))`` rows drawn without replacement, actions from ``h``, rewards
    flipped with probability ``eta``."""
    return log_of_labels(labels[rng.permutation(labels.size)[:n_log(labels.size)]], k, cfg, rng)


def log_of_labels(y: np.ndarray, k: int, cfg: Config, rng: np.random.Generator) -> Log:
    """A log of one row per label in ``y``: the action from ``h``, the reward flipped with
    probability ``eta``."""
    n = y.size
    alt = np.where(np.isin(y, FAULTY), (y + 1) % k, y)  # the logging policy's peak
    t_peak, t_rest = softmax_probabilities(cfg.tau, k)
    h_peak, h_rest = softmax_probabilities(cfg.tau0, k)
    # a = the peak with probability h_peak, else one of the other K - 1 actions uniformly.
    other = rng.integers(0, k - 1, n)
    a = np.where(rng.random(n) < h_peak, alt, other + (other >= alt))
    p = np.where(a == alt, h_peak, h_rest)
    w = np.where(a == y, t_peak, t_rest) / p
    r = ((a == y) ^ (rng.random(n) < cfg.eta)).astype(float)
    wmin, wmax = weight_range(cfg, k)
    return Log(w=w, r=r, p=p, value=true_value(cfg, k), wmin=wmin, wmax=wmax, hit=a == y)
