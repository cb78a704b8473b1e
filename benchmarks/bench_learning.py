"""Time the compiled inner program of policy learning, as ratios to the fast path's solve.

:func:`elcvx.programs.learning.dro_inner` declares the policy's weights ``w`` as a vector
parameter, so that a fit compiles the program once and re-substitutes ``w`` at each inner
solve. This measures, per size ``N`` and form, what that costs against the alternatives:

* ``dpp_compile``: the first ``get_problem_data`` of the parametrised program;
* ``dpp_substitute``: a later one, with new ``w`` (the cached path);
* ``const_build``: building and compiling the same program with ``w`` as constants;
* ``solve``: one Clarabel solve (the median of ``--repeats``);
* ``pays_after``: ``dpp_compile / (const_build - dpp_substitute)``, the number of inner solves
  after which compiling once is cheaper than rebuilding each time.

The baseline is the fast path's MLE and lower bound together at the same ``N`` (what
:mod:`elcvx.learning` solves instead above :data:`~elcvx.programs.learning.DPP_MAX_ROWS`),
measured in the same run (the median of five times ``--repeats``); the times are printed as ratios to it, which are comparable across
machines. ``--write-docs`` writes the tables into ``docs/learning.md`` (between its
``bench_learning`` markers).

    python benchmarks/bench_learning.py                       # dual form, N = 100 ... 10000
    python benchmarks/bench_learning.py --form primal --sizes 100 1000
    python benchmarks/bench_learning.py --write-docs          # both forms, the docs' sizes
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np

from elcvx import Sample
from elcvx import fast
from elcvx.programs.empirical_likelihood import lower_bound_problem
from elcvx.learning.objective import dro_phi
from elcvx.programs.learning import dro_inner

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import write_between_markers  # noqa: E402

CHI2_95 = 3.841459
WMAX = 20.0
DOCS = Path(__file__).resolve().parents[1] / "docs" / "learning.md"
DOCS_SIZES = {"dual": (100, 300, 1000, 2000, 3000, 5000, 10000), "primal": (100, 1000, 3000, 10000)}
COLUMNS = ("dpp_compile", "dpp_substitute", "const_build", "solve")


def seconds(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def constant_program(sample, w, phi, form):
    """The inner program with ``w`` and ``phi`` as constants: what a fit would rebuild each time."""
    u, c = np.asarray(sample.u, dtype=float), np.asarray(sample.c, dtype=float)
    return lower_bound_problem(np.asarray(w, dtype=float), u, c, float(sample.n),
                               float(sample.wmin), float(sample.wmax), float(phi), form=form)[0]


def fast_solve(w, u):
    one = Sample(w, u, wmin=0.0, wmax=WMAX)
    mle = fast.mle(one, ())
    fast.lower_bound(one, (), mle.loglik, CHI2_95, mle_sol=mle)


def compile_times(sizes=(100, 1000, 10000), *, form="dual", seed=0, repeats=3):
    """One row per size ``N``: the seconds of each column above, ``fast`` (the baseline) and
    ``pays_after``.

    The log: weights ``U(0, 1)/U(0.1, 0.9)``, rewards ``U(0, 1)``, ``wmax = 20``; the ``w`` of
    the later solves are the first ones shrunk by 1%, 2%, ...
    """
    rows = []
    for n in sizes:
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.1, 0.9, n)
        w0 = rng.uniform(0.0, 1.0, n) / p
        u = rng.uniform(0.0, 1.0, n)
        sample = Sample(w0, u, wmax=WMAX)
        prog = dro_inner(sample, form=form)
        prog.parameters["phi"].value = dro_phi(w0, wmax=WMAX, quantile=CHI2_95)
        compile_ = seconds(lambda: prog.problem.get_problem_data(cp.CLARABEL))
        subs, builds, solves, fasts = [], [], [], []
        for k in range(repeats):
            wk = w0 * (1.0 - 0.01 * (k + 1))
            phi = dro_phi(wk, wmax=WMAX, quantile=CHI2_95)
            prog.parameters["w"].value, prog.parameters["phi"].value = wk, phi
            subs.append(seconds(lambda: prog.problem.get_problem_data(cp.CLARABEL)))
            builds.append(seconds(lambda: constant_program(sample, wk, phi, form)
                                  .get_problem_data(cp.CLARABEL)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                solves.append(seconds(prog.solve) - subs[-1])
            # The baseline takes a millisecond: more repetitions steady its median.
            fasts += [seconds(lambda: fast_solve(wk, u)) for _ in range(5)]
        sub, build = statistics.median(subs), statistics.median(builds)
        rows.append(dict(N=n, form=form, dpp_compile=compile_, dpp_substitute=sub,
                         const_build=build, solve=statistics.median(solves),
                         fast=statistics.median(fasts),
                         pays_after=compile_ / (build - sub) if build > sub else math.inf))
    return rows


def table(rows):
    """A markdown table of the rows: each time as a ratio to the fast path's solve."""
    head = ("|     N | fast path (ms) | DPP compile | re-substitute | const build | Clarabel solve "
            "| pays after |")
    rule = "|" + "|".join("-" * (len(cell) - 1) + ":" for cell in head.split("|")[1:-1]) + "|"
    lines = [head, rule]
    for row in rows:
        ratios = " | ".join(f"{row[c] / row['fast']:>{len(h)}.1f}" for c, h in
                            zip(COLUMNS, ("DPP compile", "re-substitute", "const build",
                                          "Clarabel solve")))
        lines.append(f"| {row['N']:>5} | {row['fast'] * 1e3:>14.3f} | {ratios} | "
                     f"{row['pays_after']:>10.1f} |")
    return "\n".join(lines)


def write_docs(tables):
    """Replace the text between the markers of docs/learning.md by the tables."""
    body = "\n\n".join(f"{title}:\n\n{tab}" for title, tab in tables)
    write_between_markers(DOCS, "bench_learning.py", body)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DOCS_SIZES["dual"]))
    parser.add_argument("--form", choices=["dual", "primal"], default="dual")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true",
                        help="both forms at the docs' sizes, written into docs/learning.md")
    args = parser.parse_args(argv)
    runs = DOCS_SIZES.items() if args.write_docs else [(args.form, args.sizes)]
    tables = []
    for form, sizes in runs:
        rows = []
        for n in sizes:  # one size at a time, printed as it is measured
            (row,) = compile_times((n,), form=form, repeats=args.repeats)
            rows.append(row)
            print(table([row]).splitlines()[-1] if len(rows) > 1 else
                  f"{form} form (dro_inner_{form}); times as multiples of the fast path's\n"
                  f"{table([row])}", flush=True)
        tables.append((f"{form.capitalize()} form (`dro_inner_{form}`)", table(rows)))
    if args.write_docs:
        write_docs(tables)


if __name__ == "__main__":
    main()
