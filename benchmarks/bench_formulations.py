"""How often one Clarabel solve of each cvxpy program fails, per formulation and settings.

:mod:`elcvx.cvx` tries one formulation of each computation first (``MLE_ORDER``,
``PROFILE_ORDER``, ``LOWER_BOUND_ORDER``) and the lower bound with shorter interior-point steps
first (:data:`elcvx.programs.base.BOUND_ATTEMPTS`); this measures the evidence for that order.
On ``--samples`` fresh random samples (tests/cvx/test_programs.py's ``make_sample``: rows
log-uniform in 10 ... 1e4, counts of 1 ... 3 or none; epsilon-greedy, continuous or
heavy-tailed weights; ``wmax`` tight, loose or infinite; binary or continuous rewards), each of
the six programs of :mod:`elcvx.programs.empirical_likelihood` is solved once at each of two
settings, without the certificate or any fallback:

* "tight": :data:`~elcvx.programs.base.CLARABEL_SETTINGS` (tolerances of 1e-10);
* "shorter steps": ``BOUND_ATTEMPTS[0]`` (step fraction 0.7, no iterative refinement).

A solve fails unless Clarabel says ``optimal`` with the right value: the fast path's (the
certified active-set method of :mod:`elcvx.fast.solve`) to 1e-6 on the programs' scale (the
averaged log-likelihood ``l/N``, or the bound on the unit scale). The profile is solved at the
fast path's 95% lower bound (where the cvxpy path's last resort looks for its root), the lower
bound at the 95% quantile. Each cell is the share of samples that failed, and in brackets the
share that said ``optimal`` with a wrong value.

    python benchmarks/bench_formulations.py                 # 50 samples
    python benchmarks/bench_formulations.py --samples 100 --write-docs
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np

from elcvx import fast
from elcvx import programs as P
from elcvx.errors import SolverError
from elcvx.programs.base import BOUND_ATTEMPTS, CLARABEL_SETTINGS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from _docs import ROOT, machine, write_between_markers  # noqa: E402
from test_programs import make_sample  # noqa: E402

DOCS = ROOT / "docs" / "performance.md"
CHI2_95 = 3.841458820694124  # scipy.stats.chi2.ppf(0.95, 1)
SETTINGS = {"tight": CLARABEL_SETTINGS, "shorter steps": BOUND_ATTEMPTS[0]}
# (computation, form): builder, and the program's value on the fast path's scale from N.
PROGRAMS = {
    ("mle", "primal"): (P.mle_primal, lambda value: -value),
    ("mle", "dual"): (P.mle_dual, lambda value: value),
    ("profile", "primal"): (P.profile_primal, lambda value: -value),
    ("profile", "dual"): (P.profile_dual, lambda value: value),
    ("lower_bound", "primal"): (P.lower_bound_primal, lambda value: value),
    ("lower_bound", "dual"): (P.lower_bound_dual, lambda value: value),
}
ORDER = {"mle": "MLE_ORDER", "profile": "PROFILE_ORDER", "lower_bound": "LOWER_BOUND_ORDER"}


def random_sample(seed):
    rng = np.random.default_rng([seed, 15])
    n = int(round(10 ** rng.uniform(1, 4)))
    return make_sample(seed, n, rng.choice(["egreedy", "continuous", "heavy"]),
                       rng.choice(["tight", "loose", "inf"]), rng.choice(["binary", "continuous"]),
                       bool(rng.integers(2)))


def references(sample):
    """The fast path's values on the programs' scale, and the parameters of the solves."""
    N = sample.n
    mle = fast.mle(sample, ())
    bound = fast.lower_bound(sample, (), mle.loglik, CHI2_95, mle_sol=mle)
    v = min(max(bound.value, 1e-6), 1 - 1e-6)
    prof = fast.profile(sample, (), np.array([v]), mle_sol=mle)
    phi = -N * math.log(N) - mle.loglik - CHI2_95 / 2.0
    return {"mle": (mle.loglik / N, {}), "profile": (float(prof.loglik[0]) / N, {"v": v}),
            "lower_bound": (bound.value, {"phi": phi})}


def outcomes(sample):
    """``{(computation, form, settings): "ok" | "failed" | "wrong optimal"}`` on one sample."""
    refs = references(sample)
    out = {}
    for (what, form), (build, scale) in PROGRAMS.items():
        program = build(sample)
        ref, params = refs[what]
        for name, settings in SETTINGS.items():
            try:
                value = scale(program.solve(attempts=(settings,), **params))
            except SolverError:
                out[what, form, name] = "failed"
                continue
            right = abs(value - ref) <= 1e-6 * max(1.0, abs(ref))
            out[what, form, name] = "ok" if right else "wrong optimal"
    return out


def table(results):
    """A markdown table: per program, the share of failed solves at each settings."""

    k = len(results)
    lines = ["| computation | formulation | tried | " + " | ".join(SETTINGS) + " |",
             "|---|---|---|" + "---:|" * len(SETTINGS)]
    for (what, form) in PROGRAMS:
        order = getattr(cvx_solve, ORDER[what])
        cells = []
        for name in SETTINGS:
            seen = [r[what, form, name] for r in results]
            bad, wrong = sum(s != "ok" for s in seen), seen.count("wrong optimal")
            cells.append(f"{bad / k:.0%} ({wrong / k:.0%})")
        lines.append(f"| {what.replace('_', ' ')} | `{what}_{form}` | "
                     f"{'first' if order[0] == form else 'second'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table into docs/performance.md")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    results = []
    for seed in range(args.samples):
        sample = random_sample(seed)
        results.append(outcomes(sample))
        bad = sorted(f"{w}_{f} ({s})" for (w, f, s), o in results[-1].items() if o != "ok")
        print(f"sample {seed:>3}: N = {sample.n:>6.0f}; failed: {', '.join(bad) or 'none'}",
              flush=True)
    print(table(results))
    if args.write_docs:
        body = f"{table(results)}\n\nShares of {args.samples} random samples. {machine()}"
        write_between_markers(DOCS, "bench_formulations.py", body)


if __name__ == "__main__":
    main()
