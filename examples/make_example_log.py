"""Write the example log bundled with elcvx (elcvx/data/example_log.csv).

A small contextual bandit: 4 actions, a 3-feature context, and a logging policy that is
epsilon-greedy (epsilon = 0.25) around a fixed linear scorer, so every action has probability at
least pmin = 0.25/4 = 1/16 and importance weights are at most 16. The target policy is a
different deterministic linear scorer. Rewards are Bernoulli with a logistic model of the
context and the action. Deterministic: re-running this script rewrites the same file.

    python examples/make_example_log.py            # rewrites elcvx/data/example_log.csv
    python examples/make_example_log.py OUT.csv    # writes the same log elsewhere
"""

import sys
from pathlib import Path

import numpy as np

N, K, EPSILON, SEED = 300, 4, 0.25, 20201206


def main(path=Path(__file__).resolve().parents[1] / "elcvx" / "data" / "example_log.csv"):
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(N, 3))
    logging_scorer = rng.normal(size=(3, K))
    target_scorer = logging_scorer + rng.normal(scale=0.8, size=(3, K))
    greedy = np.argmax(x @ logging_scorer, axis=1)
    probs = np.full((N, K), EPSILON / K)
    probs[np.arange(N), greedy] += 1 - EPSILON
    actions = np.array([rng.choice(K, p=p) for p in probs])
    target = np.argmax(x @ target_scorer, axis=1)
    reward_weights = rng.normal(size=(3, K))
    p_reward = 1 / (1 + np.exp(-(x @ reward_weights)[np.arange(N), actions]))
    reward = (rng.random(N) < p_reward).astype(int)
    logging_prob = probs[np.arange(N), actions]
    target_prob = (target == actions).astype(float)
    lines = ["x1,x2,x3,action,logging_prob,target_prob,reward"]
    for i in range(N):
        lines.append(
            f"{x[i, 0]:.4f},{x[i, 1]:.4f},{x[i, 2]:.4f},{actions[i]},{logging_prob[i]:.4f},"
            f"{target_prob[i]:.0f},{reward[i]}"
        )
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"wrote {path}: {N} rows, pmin = {EPSILON / K}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
