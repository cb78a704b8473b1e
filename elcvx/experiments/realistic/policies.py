"""The realistic study's policies (Vowpal Wabbit): the logging policy, the reward predictor, the
target policy, and what the evaluations of one (dataset, strategy) share."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidInputError, _require
from .data import Dataset, _splits, bandit_rewards, dataset_rng

__all__ = ["STRATEGIES", "strategy_args", "pmf", "train_logging_policy", "train_reward_predictor",
           "predict_rewards", "draw_actions", "weight_bound", "true_value", "OpeSetup", "ope_setup"]

STRATEGIES = ("epsilon=0.05", "epsilon=0.1", "epsilon=0.25", "bag=10", "bag=32", "cover=10", "cover=32")
#: Passes of the per-action reward regressions over the logging split (the authors' default).
REWARD_PASSES = 4


def strategy_args(strategy: str) -> str:
    """VW arguments of a strategy name: ``epsilon=0.05`` -> ``--epsilon 0.05``, ``bag=10`` -> ``--bag 10``."""
    m = re.fullmatch(r"(epsilon|bag|cover)=([0-9.]+)", str(strategy))
    if not m:
        raise InvalidInputError(f"strategy={strategy!r} is not one of 'epsilon=E', 'bag=N', 'cover=N' "
                                f"(the paper's: {', '.join(STRATEGIES)})")
    kind, val = m.groups()
    if kind == "epsilon":
        e = float(val)
        if not 0 < e <= 1:
            raise InvalidInputError(f"strategy={strategy!r}: epsilon must lie in (0, 1]")
        return f"--epsilon {e:g}"
    if not val.isdigit() or int(val) < 1:
        raise InvalidInputError(f"strategy={strategy!r}: {kind} needs a positive integer")
    return f"--{kind} {int(val)}"


def _features(X) -> list:
    return ["| " + " ".join(f"f{j}:{v:.10g}" for j, v in enumerate(x) if v != 0.0) for x in X]


def pmf(workspace, feats, n_actions) -> np.ndarray:
    """``h(.|x)`` for every row (VW's float32 PMF, clipped at 0 and renormalised)."""
    P = np.array([workspace.predict(f) for f in feats], dtype=float).reshape(len(feats), n_actions)
    P = np.clip(P, 0.0, None)
    return P / P.sum(axis=1, keepdims=True)


def train_logging_policy(X, y, n_actions, strategy, rng, *, log=None):
    """Learn ``h`` on-policy: predict, draw, learn ``a:(1-r):p`` row by row. Returns the Workspace.

    ``log``: a list that receives the logged action of every row, in order (the logging split's
    bandit feedback, from which :func:`train_reward_predictor` learns); ``h`` is the same with
    or without it.
    """
    vw = _require("vowpalwabbit", "vw", "the realistic experiments")
    ws = vw.Workspace(f"--cb_explore {n_actions} {strategy_args(strategy)} --quiet --random_seed 0")
    feats = _features(X)
    u = rng.random(len(feats))
    for f, label, ui in zip(feats, y, u):
        p = np.clip(np.asarray(ws.predict(f), dtype=float), 0, None)
        p /= p.sum()
        a = min(int(np.searchsorted(np.cumsum(p), ui * p.sum(), side="right")), n_actions - 1)
        ws.learn(f"{a + 1}:{1.0 - float(a == label):g}:{p[a]:.10g} {f}")
        if log is not None:
            log.append(a)
    return ws


def train_reward_predictor(X, actions, rewards, n_actions, *, passes: int = REWARD_PASSES) -> list:
    """``r_hat(x, a)``: one Vowpal Wabbit squared-loss regression per action (VW's defaults),
    fitted on the rows where that action was logged, ``passes`` passes in row order.

    Learned from the logging split's bandit feedback ``(x, a, r)`` only (the rewards of the
    other actions are not used), as the authors' cost predictors are. Deterministic: VW's
    linear regression has no randomness, and the rows come in a fixed order. An action never
    logged predicts 0. Returns the ``n_actions`` Workspaces (:func:`predict_rewards`; ``finish``
    each when done).
    """
    vw = _require("vowpalwabbit", "vw", "the realistic experiments")
    feats = _features(X)
    models = [vw.Workspace("--quiet --random_seed 0") for _ in range(n_actions)]
    for _ in range(int(passes)):
        for f, a, r in zip(feats, actions, rewards):
            models[int(a)].learn(f"{float(r):g} {f}")
    return models


def predict_rewards(models, X) -> np.ndarray:
    """``r_hat(x, a)`` for every row and action, clipped to the reward range ``[0, 1]``."""
    feats = _features(X)
    R = np.array([[m.predict(f) for m in models] for f in feats], dtype=float).reshape(len(feats), len(models))
    return np.clip(R, 0.0, 1.0)


def draw_actions(P, rng) -> np.ndarray:
    """One action per row from the rows of ``P``."""
    c = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0])[:, None] * c[:, -1:]
    return np.minimum((u >= c).sum(axis=1), P.shape[1] - 1)


def weight_bound(strategy: str, P, n_actions) -> float:
    """``wmax``, by construction where known, never below the observed ``1/min p``.

    * ``epsilon=e``: every action has probability at least ``e/K``, so ``K/e``.
    * ``bag=n``: VW's bagging PMF counts the bags' votes, so a positive probability is at least
      ``1/n``: ``n`` (an action no bag votes for has probability 0 and never has a weight).
    * ``cover=n``: no simple bound by construction; ``1/min p`` over the positive entries of the
      PMF on the rows at hand (every action of every row, not only the logged ones).
    """
    positive = P[P > 0]
    observed = 1.0 / float(positive.min()) if positive.size else 1.0
    kind, val = str(strategy).split("=")
    if kind == "epsilon":
        return max(n_actions / float(val), observed)
    if kind == "bag":
        return max(float(val), observed)
    return max(observed, 1.0 + 1e-9)


def true_value(pi_probs, y) -> float:
    """The value of a policy with PMF ``pi_probs`` (rows) on labelled rows: mean ``pi(y_i|x_i)``."""
    P = np.asarray(pi_probs, dtype=float)
    y = np.asarray(y)
    return float(np.mean(P[np.arange(y.size), y]))


def _target_policy(ds, sl_learn, P_learn, rng):
    from ...learning import VowpalWabbitPolicy

    a = draw_actions(P_learn, rng)
    y = ds.y[sl_learn]
    pi = VowpalWabbitPolicy(ds.n_classes)
    pi.refit(ds.X[sl_learn], a, P_learn[np.arange(a.size), a], bandit_rewards(y, a), np.ones(a.size))
    return pi


@dataclass(frozen=True, eq=False)
class OpeSetup:
    """What the evaluations of one (dataset, strategy) share (:func:`ope_setup`).

    ``P_eval`` (``h(a|x)``), ``PI`` (``pi(a|x)``) and ``R_hat`` (``r_hat(x, a)``, in [0, 1]) on
    the Evaluate rows, ``y`` their labels, ``truth`` the target's value, ``wmax`` the weight
    bound, ``deterministic`` whether ``PI`` is 0/1, ``logged_init`` the actions logged on the
    Initialize split (what ``h`` and ``r_hat`` learned from).
    """

    dataset: Dataset
    strategy_index: int
    strategy: str
    seed: int
    P_eval: np.ndarray
    PI: np.ndarray
    R_hat: np.ndarray
    y: np.ndarray
    truth: float
    wmax: float
    deterministic: bool
    logged_init: np.ndarray
    n_init: int
    n_learn: int

    @property
    def expected(self) -> np.ndarray:
        """``sum_a pi(a|x) r_hat(x, a)`` per Evaluate row, over the actions ``h`` can log.

        ``E_h[w r_hat(x, a)] = sum_{a: h(a|x) > 0} pi(a|x) r_hat(x, a)``: where the target picks
        an action of logging probability 0 (bagging's support deficit, ``policies.csv``) the
        control variate has mean 0 only without that action. Elsewhere this is the plain
        ``sum_a pi(a|x) r_hat(x, a)``.
        """
        return np.sum(self.PI * self.R_hat * (self.P_eval > 0), axis=1)

    def evaluation(self, replicate: int):
        """``(sample, actions, predicted, expected)`` of one evaluation (its own random stream)."""
        import elcvx

        rng = dataset_rng(self.seed, self.dataset.id, self.strategy_index, 2, replicate)
        a = draw_actions(self.P_eval, rng)
        idx = np.arange(a.size)
        sample = elcvx.Sample.from_probs(self.PI[idx, a], self.P_eval[idx, a],
                                         bandit_rewards(self.y, a), wmax=self.wmax)
        return sample, a, self.R_hat[idx, a], self.expected


def ope_setup(ds, si, strategy, seed) -> OpeSetup:
    """Train ``h`` (and record its log), the reward predictor and ``pi`` for one (dataset, strategy)."""
    init, learn, ev = _splits(ds, "ope")
    K = ds.n_classes
    logged: list[int] = []
    h = train_logging_policy(ds.X[init], ds.y[init], K, strategy, dataset_rng(seed, ds.id, si, 0), log=logged)
    P_learn = pmf(h, _features(ds.X[learn]), K)
    P_eval = pmf(h, _features(ds.X[ev]), K)
    h.finish()
    actions = np.asarray(logged, dtype=np.intp)
    models = train_reward_predictor(ds.X[init], actions, bandit_rewards(ds.y[init], actions), K)
    R_hat = predict_rewards(models, ds.X[ev])
    for m in models:
        m.finish()
    pi = _target_policy(ds, learn, P_learn, dataset_rng(seed, ds.id, si, 1))
    PI = pi.probs(ds.X[ev])
    pi.close()
    y = ds.y[ev]
    return OpeSetup(ds, si, strategy, int(seed), P_eval, PI, R_hat, y, true_value(PI, y),
                    weight_bound(strategy, P_eval, K), bool(np.all((PI == 0) | (PI == 1))), actions,
                    init.stop, learn.stop - learn.start)

