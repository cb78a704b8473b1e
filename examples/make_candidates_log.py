"""Write the example log of candidate policies bundled with elcvx (elcvx/data/example_candidates.csv).

The contextual bandit of ``make_example_log.py`` with more rows: 4 actions, a 3-feature context,
logging epsilon-greedy (epsilon = 0.25, so every action has probability at least pmin = 1/16)
around a fixed linear scorer; rewards Bernoulli with a logistic model of the context and the
action. Beside the logging probability of each logged action, four candidates' probabilities of
it (what ``elcvx select`` chooses among):

* ``greedy``: the argmax of a scorer fitted to the reward model's mean (a good policy);
* ``soft``: a softmax of the same scores at temperature 1;
* ``other``: the argmax of a random scorer;
* ``uniform``: every action with probability 1/4.

Deterministic: re-running this script rewrites the same file.

    python examples/make_candidates_log.py            # rewrites elcvx/data/example_candidates.csv
    python examples/make_candidates_log.py OUT.csv    # writes the same log elsewhere
"""

import sys
from pathlib import Path

import numpy as np

N, K, EPSILON, SEED = 2000, 4, 0.25, 20261128
NAMES = ("greedy", "soft", "other", "uniform")


def main(path=Path(__file__).resolve().parents[1] / "elcvx" / "data" / "example_candidates.csv"):
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(N, 3))
    logging_scorer = rng.normal(size=(3, K))
    reward_weights = rng.normal(size=(3, K))
    greedy = np.argmax(x @ logging_scorer, axis=1)
    logging = np.full((N, K), EPSILON / K)
    logging[np.arange(N), greedy] += 1 - EPSILON
    actions = (rng.random(N)[:, None] > np.cumsum(logging, axis=1)).sum(axis=1)
    scores = x @ reward_weights
    p_reward = 1 / (1 + np.exp(-scores[np.arange(N), actions]))
    reward = (rng.random(N) < p_reward).astype(int)
    soft = np.exp(scores - scores.max(axis=1, keepdims=True))
    policies = {
        "greedy": np.eye(K)[np.argmax(scores, axis=1)],
        "soft": soft / soft.sum(axis=1, keepdims=True),
        "other": np.eye(K)[np.argmax(x @ rng.normal(size=(3, K)), axis=1)],
        "uniform": np.full((N, K), 1 / K),
    }
    lines = ["action,logging_prob," + ",".join(NAMES) + ",reward"]
    for i in range(N):
        a = actions[i]
        probs = ",".join(f"{policies[name][i, a]:.6f}" for name in NAMES)
        lines.append(f"{a},{logging[i, a]:.4f},{probs},{reward[i]}")
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"wrote {path}: {N} rows, pmin = {EPSILON / K}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
