"""Passes and time of the constrained EL interval: the active-set method against the barrier.

One control variate (k = 1), N = 1e5 continuous weights: the MLE and both bounds of the 95%
interval, by elcvx.fast.solve's active-set Newton method and by the barrier method it replaced
(tests/barrier_reference.py, which shares the oracles). Each time is the median of
``--repeats`` runs, each on a fresh sample; both methods run on the same samples in the same
run, and the table gives their ratios. "passes" counts the evaluations of an objective with its
derivatives (one pass over the rows each); the active-set side includes its certificate.

    python benchmarks/bench_moment.py            # N = 1e5
    python benchmarks/bench_moment.py --n 10000 --k 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

import elcvx
from elcvx import fast
from elcvx import model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import barrier_reference as barrier  # noqa: E402

CHI2_95 = stats.chi2.ppf(0.95, 1)


def make_model(n, k, seed):
    """Continuous weights with E[w] about 1, and ``k`` control variates ``w f`` with ``f`` a
    noisy copy of the reward (target: their sample mean), atoms' range ``(0, wmax)``."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 1.0, n)
    w = np.where(rng.random(n) < 0.4, 1.0 / p, 0.0)
    r = rng.random(n)
    sample = elcvx.Sample(w, r, wmax=10.0)
    cons = []
    for j in range(k):
        g = w * np.clip(r + rng.normal(0.0, 0.3, n), 0.0, 1.0)
        cons.append(elcvx.MomentConstraint(g, float(np.mean(g)), atom_range=(0.0, 10.0),
                                           name=f"cv{j}"))
    return sample, cons


def active_set(sample, cons):
    mle = fast.mle(sample, cons)
    ends = [fast.lower_bound(sample, cons, mle.loglik, CHI2_95, side=side, mle_sol=mle)
            for side in ("lower", "upper")]
    assert all(s.status == "optimal" for s in (mle, *ends))
    return (ends[0].value, 1.0 - ends[1].value), mle.work[0] + sum(e.work[0] for e in ends)


def barrier_method(sample, cons):
    data = model.Moments(sample, cons)
    loglik, x, passes = barrier.mle(data)
    ends = []
    for side in ("lower", "upper"):
        value, _, p = barrier.lower_bound(model.Moments(sample, cons, side=side), loglik,
                                          CHI2_95, x)
        ends.append(value)
        passes += p
    return (ends[0], 1.0 - ends[1]), passes


def timed(solver, cases):
    times, passes, ends = [], [], []
    for sample, cons in cases:
        t0 = time.perf_counter()
        interval, p = solver(sample, cons)
        times.append(time.perf_counter() - t0)
        passes.append(p)
        ends.append(interval)
    return statistics.median(times), statistics.median(passes), np.array(ends)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    cases = [make_model(args.n, args.k, seed) for seed in range(args.repeats)]
    t_new, p_new, new = timed(active_set, cases)
    t_old, p_old, old = timed(barrier_method, cases)
    print(f"constrained interval, N = {args.n:.0e}, k = {args.k}, median of {args.repeats}")
    print(f"{'method':<12} {'passes':>7} {'time':>10}")
    print(f"{'barrier':<12} {p_old:>7.0f} {t_old * 1e3:>8.1f}ms")
    print(f"{'active set':<12} {p_new:>7.0f} {t_new * 1e3:>8.1f}ms")
    print(f"ratio (barrier / active set): passes {p_old / p_new:.1f}, time {t_old / t_new:.1f}; "
          f"largest difference of the ends {np.max(np.abs(new - old)):.1e}")


if __name__ == "__main__":
    main()
