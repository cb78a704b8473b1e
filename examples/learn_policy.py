"""Learn a policy from a synthetic bandit log with each objective and solver; print true values.

The environment (elcvx.learning.SyntheticBandit) has known expected rewards, so every learned
policy's true value is computed, not estimated. The logging policy is epsilon-greedy around a
weak linear policy. For each objective (the EL lower bound, the EL estimate, IPS) the script
learns a linear softmax policy with the paper's alternating method and with the direct L-BFGS
solver (and, when `vowpalwabbit` is installed, a Vowpal Wabbit learner with the alternating
method, as the paper did) and prints the true values side by side with the time each took.

"objective on log" is measured on the log the policy was fitted on: it is in-sample, and a
lower bound there is not a valid bound on the learned policy (it is often above the true value).
"lower bound held out" is the lower end of the learned policy's EL interval (`elcvx.interval`,
same confidence level) on a second log of the same size drawn from the same environment, which
the fit never saw: that one is a valid 95% lower bound. The README's "Learn a policy" snippet is the row
"direct softmax lower_bound" of the default run (same environment, log and held-out log).

    python examples/learn_policy.py                 # one log, N = 1000
    python examples/learn_policy.py --seeds 20      # mean over 20 environments and logs
    python examples/learn_policy.py --n 300 --epsilon 0.1   # small sample, large weights

Without the `vw` extra (`pip install 'elcvx[vw]'`: vowpalwabbit), or with --no-vw, the Vowpal
Wabbit rows are left out, and the script ends by naming them and the extra they need.

(The compiled inner program's timings in docs/learning.md are benchmarks/bench_learning.py's.)
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np

import elcvx
from elcvx.learning import LinearSoftmaxPolicy, SyntheticBandit, VowpalWabbitPolicy, fit

OBJECTIVES = ("lower_bound", "estimate", "ips")
# The seeds of the fitting log and of the held-out log, offset by --seed and the repetition.
LOG_SEED, HELD_OUT_SEED = 10_000, 20_000


def held_out_bound(policy, bandit, log, confidence_level):
    """The EL lower bound of a fitted policy's value on a log it was not fitted on."""
    X, a, p, r = log
    sample = elcvx.Sample(policy.action_probs(X, a) / p, r, wmax=bandit.wmax)
    return elcvx.interval(sample, confidence_level=confidence_level).low


#: The learners that need an extra: learner -> (the extra, the module it installs).
EXTRAS = {"vw": ("vw", "vowpalwabbit")}


def all_learners(args):
    """Every ``(solver, learner, make)`` of the full table (the README's)."""
    yield "alternating", "softmax", lambda: LinearSoftmaxPolicy(args.features, args.actions)
    yield "direct", "softmax", lambda: LinearSoftmaxPolicy(args.features, args.actions)
    yield "alternating", "vw", lambda: VowpalWabbitPolicy(args.actions)


def learners(args, have_vw):
    """The learners this run fits: all but Vowpal Wabbit's when it is not available."""
    for solver, learner, make in all_learners(args):
        if learner != "vw" or have_vw:
            yield solver, learner, make


def left_out(args, have_vw) -> list[str]:
    """The lines that name the full table's rows this run leaves out, grouped by the extra each
    needs (none when every learner ran)."""
    skipped = [(solver, learner) for solver, learner, _ in all_learners(args)
               if learner == "vw" and not have_vw]
    lines = []
    for extra, module in {EXTRAS[learner] for _, learner in skipped}:
        rows = [(solver, learner, objective) for solver, learner in skipped
                if EXTRAS[learner][0] == extra for objective in OBJECTIVES]
        why = (f"{module}, left out on request: --no-vw" if args.no_vw else
               f"{module}, not installed: pip install 'elcvx[{extra}]'")
        lines.append(f"left out: {len(rows)} rows of the full table, which need the '{extra}' "
                     f"extra ({why}):")
        lines += [f"  {solver:<12} {learner:<8} {objective}" for solver, learner, objective in rows]
    return lines


def environment(args, rep):
    """The rep-th environment, the log to fit on and the held-out log (same size)."""
    bandit = SyntheticBandit(n_features=args.features, n_actions=args.actions,
                             epsilon=args.epsilon, seed=args.seed + rep)
    log = bandit.log(args.n, seed=LOG_SEED + args.seed + rep)
    held_out = bandit.log(args.n, seed=HELD_OUT_SEED + args.seed + rep)
    return bandit, log, held_out


def learn(args, bandit, log, held_out, policy, solver, objective):
    """Fit one policy on the log; (true value, objective on log, seconds, steps, held-out bound)."""
    X, a, p, r = log
    start = time.perf_counter()
    res = fit(policy, X, a, p, r, objective=objective, solver=solver, passes=args.passes,
              wmax=bandit.wmax, confidence_level=args.confidence_level)
    seconds = time.perf_counter() - start
    return (bandit.value(policy), res.value, seconds, len(res.history) - 1,
            held_out_bound(policy, bandit, held_out, args.confidence_level))


def run(args):
    have_vw = importlib.util.find_spec("vowpalwabbit") is not None and not args.no_vw
    rows = {}
    logging_values, optimal_values = [], []
    for rep in range(args.seeds):
        bandit, log, held_out = environment(args, rep)
        logging_values.append(bandit.logging_value)
        optimal_values.append(bandit.optimal_value)
        for solver, learner, make in learners(args, have_vw):
            for objective in OBJECTIVES:
                policy = make()
                rows.setdefault((solver, learner, objective), []).append(
                    learn(args, bandit, log, held_out, policy, solver, objective))
                if learner == "vw":
                    policy.close()

    print(f"synthetic bandit: {args.features} features, {args.actions} actions, epsilon-greedy "
          f"logging (epsilon={args.epsilon}, wmax={args.actions / args.epsilon:g}), N={args.n}, "
          f"{args.seeds} seed(s) from {args.seed}")
    print(f"true value of the logging policy: {np.mean(logging_values):.4f}   "
          f"best possible: {np.mean(optimal_values):.4f}")
    print()
    paired = args.seeds > 1
    head = (f"{'solver':<12} {'learner':<8} {'objective':<12} {'true value':>10} "
            f"{'objective on log':>17} {'lower bound held out':>21} {'steps':>6} {'time (s)':>9}")
    if paired:
        head += f" {'true - ips (paired, +- se)':>27}"
    print(head)
    print("-" * len(head))
    for (solver, learner, objective), vals in rows.items():
        v = np.array(vals)
        line = (f"{solver:<12} {learner:<8} {objective:<12} {v[:, 0].mean():>10.4f} "
                f"{v[:, 1].mean():>17.4f} {v[:, 4].mean():>21.4f} {v[:, 3].mean():>6.0f} "
                f"{v[:, 2].mean():>9.2f}")
        if paired:
            diff = v[:, 0] - np.array(rows[(solver, learner, "ips")])[:, 0]
            se = diff.std(ddof=1) / np.sqrt(diff.size)
            line += f" {diff.mean():>+17.4f} +- {se:.4f}" if objective != "ips" else f" {'':>27}"
        print(line.rstrip())
    fits = np.concatenate([np.array(vals) for vals in rows.values()])
    bounds = np.concatenate([np.array(vals) for (_, _, objective), vals in rows.items()
                             if objective == "lower_bound"])
    print()
    print(f"'objective on log' is in-sample (the log the policy was fitted on): the lower bound "
          f"there is above\nthe true value in {int((bounds[:, 1] > bounds[:, 0]).sum())} of "
          f"{len(bounds)} fits. 'lower bound held out' is the {args.confidence_level:.0%} EL lower "
          f"bound on a second log\nof {args.n} examples, below the true value in "
          f"{int((fits[:, 4] <= fits[:, 0]).sum())} of {len(fits)} fits.")
    if paired:
        print()
        print("means over the seeds; 'true - ips' pairs each objective with IPS on the same log "
              "and learner")
    skipped = left_out(args, have_vw)
    if skipped:
        print()
        print("\n".join(skipped))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="logged examples")
    parser.add_argument("--features", type=int, default=5)
    parser.add_argument("--actions", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=0.3, help="logging exploration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=1, help="environments and logs to average over")
    parser.add_argument("--passes", type=int, default=4)
    parser.add_argument("--confidence-level", type=float, default=0.95)
    parser.add_argument("--no-vw", action="store_true", help="skip Vowpal Wabbit even if installed")
    return parser.parse_args(argv)


def main(argv=None):
    run(parse_args(argv))


if __name__ == "__main__":
    main()
