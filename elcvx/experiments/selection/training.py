r"""The two trained candidates: linear softmax policies fitted by gradient ascent on the log of the
IPS or of the self-normalised IPS estimate of their value (the authors' ``SoftmaxGAPolicy``).

The policy is ``pi_W(a|x) = softmax(x W / T)_a`` with ``W`` a ``d x K`` matrix and no intercept,
``W = 0`` at the start, ``T = 1`` while training and ``T = 0.1`` once trained; ``steps`` steps of
size 0.01 on the training log ``(x_i, a_i, r_i, p_i)``:

* IPS: ``J(W) = log sum_i r_i pi_W(a_i|x_i) / (n p_i)``,
* SNIPS: ``J(W) = log sum_i r_i pi_W(a_i|x_i) / p_i - log sum_i pi_W(a_i|x_i) / p_i``.

With ``g_i = grad_W log pi_W(a_i|x_i) = x_i (e_{a_i} - pi_W(.|x_i))^T / T``, the gradient of
``log sum_i c_i pi_W(a_i|x_i)`` is ``sum_i rho_i g_i`` with ``rho_i`` proportional to ``c_i
pi_W(a_i|x_i)`` and summing to 1, computed from the logs (so a tiny probability neither
underflows nor divides by 0). IPS's gradient is that with ``c_i = r_i / p_i``; SNIPS's, that minus
the same with ``c_i = 1 / p_i``. One step is two matrix products of the rows, in numpy.

The authors differentiate the same objective with jax in single precision (its default); here
it is double precision, so the parameters after 50,000 steps agree with theirs up to rounding,
not bit for bit.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from ...errors import InvalidInputError

#: The objectives, by name.
OBJECTIVES = ("ips", "snips")
#: The authors' gradient-ascent settings.
STEPS, STEP_SIZE, TRAINING_TEMPERATURE = 50_000, 1e-2, 1.0


def softmax_policy(X: np.ndarray, W: np.ndarray, temperature: float) -> np.ndarray:
    """``(n, K)`` probabilities ``softmax(X W / temperature)`` row by row."""
    v = X @ W / temperature
    return np.exp(v - logsumexp(v, axis=1, keepdims=True))


def _weights(log_c: np.ndarray, log_pi_a: np.ndarray) -> np.ndarray:
    """``rho_i = c_i pi_i / sum_j c_j pi_j`` from ``log c`` and ``log pi``."""
    z = log_c + log_pi_a
    z -= z.max()
    np.exp(z, out=z)
    z /= z.sum()
    return z


def train(X, actions, rewards, logging_probs, k: int, objective: str, *, steps: int = STEPS,
          step_size: float = STEP_SIZE, temperature: float = TRAINING_TEMPERATURE) -> np.ndarray:
    """The ``d x K`` parameters after ``steps`` steps of gradient ascent on ``objective`` (``"ips"``
    or ``"snips"``, the log of the estimate; see the module's text) from ``W = 0``.

    Raises
    ------
    InvalidInputError
        An unknown objective, or a training log without a positive reward (the objective is
        then ``log 0`` everywhere).
    """
    if objective not in OBJECTIVES:
        raise InvalidInputError(f"objective={objective!r}: choose among {', '.join(OBJECTIVES)}",
                                field="objective", value=objective)
    X = np.asarray(X, dtype=float)
    a = np.asarray(actions)
    r = np.asarray(rewards, dtype=float)
    p = np.asarray(logging_probs, dtype=float)
    if not np.any(r > 0):
        raise InvalidInputError("the training log has no positive reward: the objective is log 0",
                                field="rewards")
    rewarded = r > 0
    # IPS needs only the rewarded rows; SNIPS needs every row for its denominator.
    rows = slice(None) if objective == "snips" else rewarded
    X, a, r, p = X[rows], a[rows], r[rows], p[rows]
    n = a.size
    idx = np.arange(n)
    with np.errstate(divide="ignore"):
        log_num = np.log(r) - np.log(p)  # -inf where r = 0 (no weight in the numerator)
    log_den = -np.log(p)
    W = np.zeros((X.shape[1], k))
    scale = step_size / temperature
    for _ in range(int(steps)):
        v = X @ W
        if temperature != 1.0:
            v /= temperature
        v -= v.max(axis=1, keepdims=True)
        log_pi_a = v[idx, a]
        np.exp(v, out=v)
        total = v.sum(axis=1)
        log_pi_a -= np.log(total)  # log pi_W(a_i|x_i)
        rho = _weights(log_num, log_pi_a)
        if objective == "snips":
            rho -= _weights(log_den, log_pi_a)
        # sum_i rho_i x_i (e_{a_i} - pi_i)^T = X^T (rho onehot - (rho / total) e^v)
        v *= (-rho / total)[:, None]
        v[idx, a] += rho
        W += scale * (X.T @ v)
    return W
