"""Write examples/data/shop_log.csv, the log that examples/evaluate_a_log.ipynb evaluates.

A shop's recommender (the production policy) picks one of 3 offers for each visitor: the offer
its model prefers for the visitor's context ``x`` in [0, 1] with probability 0.8, another one
uniformly otherwise (epsilon-greedy with epsilon = 0.3 over 3 offers, so every offer has
probability at least 0.1); the model prefers the middle offer for most visitors. The reward is the visit's basket value, scaled to [0, 1]: its mean
depends on the offer and the context (``mean_reward``), plus noise of +-0.15. The log holds,
per visit, ``x``, the ``action`` shown, its ``logging_prob`` (the production policy's
probability of it) and the ``reward``: what a practitioner's log holds. The mean rewards are
known here, so the notebook's numbers can be set beside the truth.

    python examples/make_shop_log.py [PATH]    # default examples/data/shop_log.csv
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

N = 4000
ACTIONS = 3
EPSILON = 0.3
SEED = 2027


def mean_reward(x):
    """The mean reward of each offer for contexts ``x``: an ``(N, 3)`` array."""
    x = np.asarray(x, dtype=float)
    return np.stack([0.05 + 0.85 * x, 0.45 + 0 * x, 0.90 - 0.85 * x], axis=1)


def production_probs(x):
    """The production policy's probabilities of each offer: epsilon-greedy around its model's
    favourite, offer 0 for x > 0.8, offer 2 for x < 0.2, offer 1 between."""
    x = np.asarray(x, dtype=float)
    favourite = np.where(x > 0.8, 0, np.where(x < 0.2, 2, 1))
    p = np.full((x.size, ACTIONS), EPSILON / ACTIONS)
    p[np.arange(x.size), favourite] += 1 - EPSILON
    return p


def write(path: Path) -> Path:
    rng = np.random.default_rng(SEED)
    x = rng.random(N)
    p = production_probs(x)
    action = (rng.random(N)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    noise = rng.uniform(-0.15, 0.15, N)
    reward = np.clip(mean_reward(x)[np.arange(N), action] + noise, 0.0, 1.0)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("x,action,logging_prob,reward\n")
        for row in zip(x, action, p[np.arange(N), action], reward):
            f.write(f"{row[0]:.4f},{row[1]},{row[2]:.4f},{row[3]:.4f}\n")
    return path


if __name__ == "__main__":
    out = write(Path(sys.argv[1]) if len(sys.argv) > 1 else
                Path(__file__).resolve().parent / "data" / "shop_log.csv")
    print(f"wrote {out}: {N} rows")
