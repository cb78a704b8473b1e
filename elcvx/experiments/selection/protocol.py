"""The LS paper's selection protocol: the splits, the label policies, the logs, the true values and
the scoring of a trial.

Every number here is what ``ope_ops/policy_selection.py`` of ``otmhi/offpolicy_ls`` (with
``ope_ops/experiments.py``, ``data.py``, ``policies.py`` and ``evaluators.py``) computes, written
from its definitions:

* **features** standardised over all the rows (mean 0, population standard deviation 1; a
  constant feature is centred only), *before* the split; a missing value is kept out of a
  feature's mean and deviation and then replaced by 0, that feature's mean (the authors' code
  does not impute: scikit-learn's scaler keeps the ``nan``, which then makes the trained policies'
  parameters ``nan``; none of the five datasets of the study has a missing value);
* **splits** (:func:`split_indices`): scikit-learn's ``train_test_split(train_size=0.2 + 0.5,
  shuffle=True, random_state=0)``, then ``train_test_split(train_size=0.2 / (0.2 + 0.5),
  random_state=0)`` of the rows kept: 20% of the rows train the policies, 50% are logged, the
  rest (the held-out rows) give the true values;
* **label policies** (:func:`label_policy`): a softmax of the one-hot label at a temperature, the
  logging policy's label shifted by one on the faulty classes 0 and 1;
* **actions** (:func:`draw_actions`) and **rewards** (:func:`draw_rewards`) drawn as
  ``np.random.choice(K, p=row)`` row after row and ``np.random.binomial(1, eta, n)`` draw them
  from the legacy generator, so a log seeded as the authors' is their log;
* **true value** (:func:`true_value`): the mean over the held-out rows of ``sum_a pi(a|x) E[r |
  x, a]``, ``E[r] = 1 - eta`` on the label and ``eta`` elsewhere (their ``get_true_value``);
* **score** (:func:`score`): their ``interpret_results``.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidInputError
from ..pessimism.protocol import FAULTY

#: The fractions of the rows that train the policies and that are logged (the rest is held out).
TRAIN_FRAC, LOG_FRAC = 0.2, 0.5
#: ``random_state`` of both scikit-learn splits.
SPLIT_SEED = 0
#: The logging policy's temperature, the candidates' temperature once trained, the reward noise.
LOGGING_TEMPERATURE, TARGET_TEMPERATURE, REWARD_NOISE = 0.2, 0.1, 0.2
#: The seed of the legacy generator before the training log is drawn (``np.random.seed(1)``).
TRAINING_SEED = 1
#: The outcomes of a trial, best first.
OUTCOMES = ("BEST", "BETTER", "WORSE")


def _split(n: int, train_size: float, seed: int) -> tuple:
    """scikit-learn's ``ShuffleSplit`` of ``range(n)`` with a float ``train_size`` and no
    ``test_size``: ``floor(train_size n)`` rows train, the rest test; the permutation of the
    legacy generator seeded ``seed``, test rows first. ``(train, test)`` positions."""
    n_train = math.floor(train_size * n)
    perm = np.random.RandomState(seed).permutation(n)
    return perm[n - n_train:], perm[:n - n_train]


def split_indices(n: int, train_frac: float = TRAIN_FRAC, log_frac: float = LOG_FRAC,
                  seed: int = SPLIT_SEED) -> tuple:
    """``(train, log, held_out)``: the row numbers of each part, in the order the authors'
    arrays hold them (their ``Dataset``: two ``train_test_split`` calls)."""
    if not (0 < train_frac and 0 < log_frac and train_frac + log_frac < 1):
        raise InvalidInputError(f"train_frac={train_frac!r}, log_frac={log_frac!r}: each must be "
                                "> 0 and their sum < 1", field="train_frac", value=train_frac)
    kept, held_out = _split(n, train_frac + log_frac, seed)
    train, log = _split(kept.size, train_frac / (train_frac + log_frac), seed)
    if min(train.size, log.size, held_out.size) == 0:
        raise InvalidInputError(f"{n} rows leave an empty split (train {train.size}, log "
                                f"{log.size}, held out {held_out.size})", field="rows", value=n)
    return kept[train], kept[log], held_out


def standardise(X: np.ndarray) -> np.ndarray:
    """Each feature centred and scaled over the rows present (population deviation; 1 for a
    constant feature), missing values then set to 0 (the feature's mean)."""
    X = np.asarray(X, dtype=float)
    present = ~np.isnan(X)
    count = present.sum(axis=0)
    if np.any(count == 0):
        j = int(np.argmin(count))
        raise InvalidInputError(f"feature {j} has no value (every row is missing)",
                                field="feature", value=j)
    filled = np.where(present, X, 0.0)
    mean = filled.sum(axis=0) / count
    centred = np.where(present, X - mean, 0.0)
    sd = np.sqrt((centred ** 2).sum(axis=0) / count)
    return centred / np.where(sd == 0.0, 1.0, sd)


def label_policy(y: np.ndarray, k: int, temperature: float, faulty=()) -> np.ndarray:
    """``(n, K)`` probabilities: ``exp(onehot / temperature)`` normalised, the one-hot of the
    label, or of ``label + 1 mod K`` where the label is in ``faulty`` (the authors'
    ``SoftmaxDataPolicy``)."""
    y = np.asarray(y)
    alt = np.where(np.isin(y, list(faulty)), (y + 1) % k, y)
    e = np.exp((np.arange(k)[None, :] == alt[:, None]).astype(float) / temperature)
    return e / e.sum(axis=1)[:, None]


def logging_policy(y: np.ndarray, k: int) -> np.ndarray:
    """The logging policy: :func:`label_policy` at 0.2, classes 0 and 1 faulty."""
    return label_policy(y, k, LOGGING_TEMPERATURE, FAULTY)


def perfect_policy(y: np.ndarray, k: int) -> np.ndarray:
    """The "perfect" candidate: :func:`label_policy` of the true label at 0.1."""
    return label_policy(y, k, TARGET_TEMPERATURE)


def draw_actions(probs: np.ndarray, rs: np.random.RandomState) -> tuple:
    """``(actions, probabilities of the actions)``, one action per row, as ``rs.choice(K,
    p=row)`` draws them row after row (one uniform each, against the normalised cumulative
    sums), in one pass."""
    cdf = np.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    u = rs.random_sample(int(probs.shape[0]))
    a = (cdf <= u[:, None]).sum(axis=1)
    return a, probs[np.arange(a.size), a]


def draw_rewards(actions: np.ndarray, labels: np.ndarray, eta: float,
                 rs: np.random.RandomState) -> np.ndarray:
    """``1[a = y]`` flipped where a Bernoulli(``eta``) draw is 1 (their ``get_reward``)."""
    hit = (np.asarray(actions) == np.asarray(labels)).astype(int)
    return ((hit + rs.binomial(1, eta, size=hit.size)) % 2).astype(float)


def true_value(probs: np.ndarray, labels: np.ndarray, eta: float = REWARD_NOISE) -> float:
    """The mean over the rows of ``sum_a pi(a|x) E[r|x,a]``, ``E[r] = 1 - eta`` on the label and
    ``eta`` elsewhere; ``probs`` the policy's ``(n, K)`` probabilities on the held-out rows."""
    onehot = np.arange(probs.shape[1])[None, :] == np.asarray(labels)[:, None]
    expected = np.where(onehot, 1.0 - eta, eta)
    return float((probs * expected).sum(axis=1).mean())


def score(value: float, logging_value: float, perfect_value: float) -> str:
    """``BEST`` when the chosen candidate's true value is the perfect policy's (exactly: the same
    number, computed the same way), else ``BETTER`` when it is at least the logging policy's,
    else ``WORSE`` (their ``interpret_results``)."""
    if value == perfect_value:
        return "BEST"
    return "BETTER" if value >= logging_value else "WORSE"
