"""Standing random tests ("fuzz") of the moment-constrained model, the constraint helpers and
``elcvx.difference`` (issue 24), on all three methods.

Every case is drawn by :func:`model_cases.draw` from its own integer seed in one of the regimes
of :data:`model_cases.REGIMES` (``seed % 13``): random columns, a constant column, duplicate and
linearly dependent columns (with atoms that know it: redundant constraints, or the vertices:
constraints on the atoms), ``g = w - 1``, ``g = w f`` with weights up to 1.6e7, targets at the
edge of and outside the feasible set, listed (and duplicate) atoms, ``wmax = inf``, one to three
rows with counts, the helpers of :mod:`elcvx.constraints` (and input they must refuse), and
differences of two policies (random, near-identical, identical, disjoint deterministic
policies with and without ``atoms=``, an infinite ``wmax`` on either side).

The reference (:mod:`reference_models`, written from the definitions, sharing no code with the
package) decides feasibility by an LP and, for a feasible model, computes the MLE's ``l*``, the
estimate and its range, both interval ends and the profile statistic at two points, each
certified to 1e-9 (primal residuals, dual feasibility, gap). Each case asserts:

* **feasible model**: ``fast`` and ``auto`` answer (a ``SolverError`` of ``cvxpy`` is counted,
  not failed); wherever the status says optimal, the estimate, its range, both interval ends
  (1e-6 of the reward range, :data:`elcvx.testing.AGREEMENT`) and the profile statistics
  (1e-6 of ``max(1, l*)``) agree with the reference ("accuracy"); any other exception is the
  failure "raised";
* **infeasible model**: every method's ``estimate`` and ``interval`` raise
  :class:`elcvx.InvalidInputError` whose message names one of the constraints (issue 24,
  item 3) ("infeasible");
* **helpers**: input they must refuse raises ``InvalidInputError``; valid input builds
  ("helper");
* always: no NaN, nothing outside the reward range, ``low <= estimate <= high`` ("sane").

Failures are collected, shrunk (rows dropped while the same check on the same method still
fails) and listed with a pasteable reproducer. ``test_fuzz_models_quick`` (default ``make
test``) runs 26 seeds (2 per regime) and the seeds of :data:`FIXED`, each its own test (in the
slow suite: 26 more seeds, 2 per regime, and the fixed seeds that only repeat an earlier one's
failure, :data:`REPEATS`); those that fail on today's code are
``xfail(strict=True)`` with the item of issue 24 they hit (:data:`KNOWN`), so that a fix turns
them into errors to remove. ``test_fuzz_models_full`` (``make test-fuzz-models``, ``slow``):
3,250 cases, printing a summary with ``-s``, in about 8 minutes of CPU (7 minutes of cases and
up to 4 of shrinking, 10-12 minutes on a shared 2-core machine); the reference takes about a
third of it.
"""

from __future__ import annotations

import math
import re
import time
import traceback
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy import stats

import elcvx
import model_cases as M
import reference_models as R
from elcvx import InvalidInputError, SolverError
from elcvx.testing import AGREEMENT
from fast2d_reference import reference_estimate
from fuzz_support import array_repr, num_repr, sample_repr, shrink_rows
from sample_cases import draw

METHODS = ("fast", "cvxpy", "auto")
CHECKS = ("raised", "accuracy", "sane", "infeasible", "helper")


# ---------------------------------------------------------------------------------------------
# The reference's numbers for a case (unit reward scale)
# ---------------------------------------------------------------------------------------------
@dataclass
class Reference:
    feasible: bool
    why: str = ""
    loglik: float = math.nan
    base: float = math.nan  # estimate at rho = 0 (a difference: at the atoms' reward 0)
    wmass: float = math.nan  # coefficient of rho
    low: float = math.nan
    high: float = math.nan
    v: tuple = ()  # profile points
    stats: tuple = ()  # the profile statistic at each


def reference(case: M.Case) -> Reference:
    """The reference's numbers, or :class:`reference_models.NotCertified`."""
    data = M.reference_data(case)
    try:
        mle = R.mle(data.likelihood())
    except R.Infeasible as exc:
        return Reference(False, str(exc))
    cq = data.c * mle.q
    quantile = float(stats.chi2.ppf(case.level, 1))
    low = R.lower_bound(data.bound("lower"), mle.loglik, quantile)
    high = -R.lower_bound(data.bound("upper"), mle.loglik, quantile)
    if isinstance(data, R.DifferenceData):
        base = float(cq @ ((data.wa - data.wb) * data.u))
        return Reference(True, "", mle.loglik, base, float(cq @ data.wb - cq @ data.wa), low, high)
    base = float(cq @ (data.w * data.u))
    wmass = 1.0 - float(cq @ data.w)
    # two points inside the interval, away from the range's ends (where the profile's model
    # has an implicit equality: no atom may carry weight at the other reward)
    v = tuple(x for x in (0.5 * (low + base), 0.5 * (base + wmass + high)) if 1e-6 < x < 1 - 1e-6)
    st = tuple(2.0 * (R.mle(data.profile(x)).loglik - mle.loglik) for x in v)
    return Reference(True, "", mle.loglik, base, wmass, low, high, v, st)


def rho_unit(case: M.Case, ref: Reference) -> float:
    """The atoms' reward on the unit scale by the case's rule (docs/rho.md): a number, the
    midpoint, or the self-consistent ``rho = V(rho)`` (the midpoint when no weight is on the
    rows)."""
    s = case.sample
    if case.rho == "midpoint" or (case.rho is None and case.kind == "difference"):
        return 0.5
    if case.rho is not None:
        return (case.rho - s.rmin) / (s.rmax - s.rmin)
    on_rows = 1.0 - ref.wmass
    return min(max(ref.base / on_rows, 0.0), 1.0) if on_rows > 0 else 0.5


# ---------------------------------------------------------------------------------------------
# Running a case
# ---------------------------------------------------------------------------------------------
class Fail(Exception):
    """One failed check: ``(check, message)``."""

    def __init__(self, check, message):
        super().__init__(message)
        self.check = check


@dataclass
class Outcome:
    """What one case gave: failures ``(method, check, message)``, the largest error per check
    (as a fraction of its tolerance), the cvxpy path's SolverErrors, statuses that were not
    optimal, and whether the reference skipped the case."""

    failures: list = field(default_factory=list)
    worst: dict = field(default_factory=dict)  # (method, what) -> error / tolerance
    cvxpy_errors: list = field(default_factory=list)
    not_optimal: list = field(default_factory=list)
    skipped: str = ""
    feasible: bool | None = None


def _unit(s, x):
    return (np.asarray(x, dtype=float) - s.rmin) / (s.rmax - s.rmin)


def _names(case: M.Case, constraints) -> list:
    names = [c.name for c in constraints]
    return names + ["w_b"] if case.kind == "difference" else names


def _call(case: M.Case, method, constraints, atoms):
    """The package's answers ``(estimate, interval, keywords)``, the keywords for the profile's
    call (a difference: ``(result, result, None)``)."""
    s = case.sample
    if case.kind == "difference":
        kw = {} if case.diff_atoms is None else {"atoms": case.diff_atoms}
        d = elcvx.difference(s, case.sample_b, confidence_level=case.level, rho=case.rho,
                             method=method, **kw)
        return d, d, None
    kw = dict(constraints=constraints, atoms=atoms, method=method)
    est = elcvx.estimate(s, rho=case.rho, **kw)
    ci = elcvx.interval(s, confidence_level=case.level, **kw)
    return est, ci, kw


def _check_sane(case, est, ci):
    s = case.sample
    lo, hi = (s.rmin, s.rmax)
    if case.kind == "difference":
        span = s.rmax - s.rmin
        lo, hi = -span, span
        vals = {"estimate": est.estimate, "range.low": est.estimate_range.low,
                "range.high": est.estimate_range.high, "low": est.low, "high": est.high}
    else:
        vals = {"estimate": est.value, "range.low": est.value_range.low,
                "range.high": est.value_range.high, "low": ci.low, "high": ci.high}
    bad = {k: v for k, v in vals.items() if not lo <= v <= hi}  # (NaN too)
    if bad:
        raise Fail("sane", f"outside [{lo}, {hi}] or NaN: {bad}")
    slack = AGREEMENT * (s.rmax - s.rmin)
    order = ["low", "range.low", "estimate", "range.high", "high"]
    for a, b in zip(order, order[1:]):
        if not vals[a] <= vals[b] + slack:
            raise Fail("sane", f"{a} = {vals[a]!r} > {b} = {vals[b]!r}")


def _compare(out, method, what, got, want, scale=1.0):
    """Record ``|got - want| / max(scale, |want|)`` against AGREEMENT; a Fail above it."""
    err = abs(got - want) / max(scale, abs(want)) if math.isfinite(got) else math.inf
    key = (method, what)
    out.worst[key] = max(out.worst.get(key, 0.0), err / AGREEMENT)
    if not err <= AGREEMENT:
        return f"{what} {got!r} vs reference {want!r} (error {err:.3g})"
    return None


def _check_accuracy(case, ref, method, est, ci, kw, out):
    s = case.sample
    rho_u = rho_unit(case, ref)
    diffs = []
    if case.kind == "difference":
        span = s.rmax - s.rmin
        if est.status.startswith("optimal"):
            ends = sorted((ref.base, ref.base + ref.wmass))
            pairs = [("estimate", est.estimate / span, ref.base + rho_u * ref.wmass),
                     ("range.low", est.estimate_range.low / span, ends[0]),
                     ("range.high", est.estimate_range.high / span, ends[1]),
                     ("low", est.low / span, ref.low), ("high", est.high / span, ref.high)]
            diffs += [_compare(out, method, *p) for p in pairs]
        else:
            out.not_optimal.append((method, "difference", est.status))
    else:
        if est.status.startswith("optimal"):
            pairs = [("estimate", _unit(s, est.value), ref.base + rho_u * ref.wmass),
                     ("range.low", _unit(s, est.value_range.low), ref.base),
                     ("range.high", _unit(s, est.value_range.high), ref.base + ref.wmass)]
            diffs += [_compare(out, method, *p) for p in pairs]
        else:
            out.not_optimal.append((method, "estimate", est.status))
        if ci.status.startswith("optimal"):
            diffs += [_compare(out, method, "low", _unit(s, ci.low), ref.low),
                      _compare(out, method, "high", _unit(s, ci.high), ref.high)]
        else:
            out.not_optimal.append((method, "interval", ci.status))
        v_user = s.rmin + (s.rmax - s.rmin) * np.asarray(ref.v)
        pr = elcvx.profile(s, v_user, **kw)
        scale = max(1.0, abs(ref.loglik))
        diffs += [_compare(out, method, f"statistic at v = {v!r}", float(x), want, scale)
                  for v, x, want in zip(v_user, pr.statistic, ref.stats)]
    diffs = [d for d in diffs if d]
    if diffs:
        status = est.status if case.kind == "difference" else f"{est.status}; interval {ci.status}"
        raise Fail("accuracy", f"{'; '.join(diffs)} (status {status})")


def _check_infeasible(case, method, constraints, atoms):
    """Every call must raise InvalidInputError naming a constraint (issue 24, item 3)."""
    names = _names(case, constraints)
    calls = [("estimate", lambda: elcvx.estimate(case.sample, constraints=constraints, atoms=atoms,
                                                 method=method)),
             ("interval", lambda: elcvx.interval(case.sample, constraints=constraints, atoms=atoms,
                                                 method=method))]
    for what, call in calls:
        try:
            res = call()
        except InvalidInputError as exc:
            if not any(name in str(exc) for name in names):
                raise Fail("infeasible", f"{what}: InvalidInputError names no constraint of "
                                         f"{names}: {exc}") from None
            continue
        except Exception as exc:
            raise Fail("infeasible", f"{what} raised {type(exc).__name__} (not InvalidInputError): "
                                     f"{str(exc)[:300]}") from None
        raise Fail("infeasible", f"{what} returned {res!r:.200} on a model no distribution "
                                 "keeping every row can meet")


def _raised(exc):
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return (f"{type(exc).__name__}: {str(exc)[:400]} (raised at {frame.filename.split('/')[-1]}:"
            f"{frame.lineno}, in {frame.name})")


def run_case(case: M.Case, methods=METHODS) -> Outcome:
    """Every check of ``case`` on ``methods``."""
    out = Outcome()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="cvxpy")
        warnings.filterwarnings("ignore", category=UserWarning)
        try:
            constraints, atoms = case.package_inputs() if case.kind == "policy" else ([], None)
        except InvalidInputError as exc:
            if case.intent != "invalid":
                out.failures.append(("-", "helper", f"a helper refused valid input: {_raised(exc)}"))
            return out
        except Exception as exc:
            out.failures.append(("-", "helper", _raised(exc)))
            return out
        if case.intent == "invalid":
            out.failures.append(("-", "helper", f"accepted invalid input {case.note}"))
            return out
        try:
            ref = reference(case)
        except R.NotCertified as exc:
            out.skipped = f"reference not certified: {exc}"
            return out
        out.feasible = ref.feasible
        for method in methods:
            try:
                if not ref.feasible:
                    _check_infeasible(case, method, constraints, atoms)
                    continue
                try:
                    est, ci, kw = _call(case, method, constraints, atoms)
                except SolverError as exc:
                    if method == "cvxpy":
                        out.cvxpy_errors.append(str(exc)[:200])
                        continue
                    raise Fail("raised", _raised(exc)) from None
                except Exception as exc:
                    raise Fail("raised", _raised(exc)) from None
                _check_sane(case, est, ci)
                try:
                    _check_accuracy(case, ref, method, est, ci, kw, out)
                except SolverError as exc:  # the profile
                    if method == "cvxpy":
                        out.cvxpy_errors.append(str(exc)[:200])
                        continue
                    raise Fail("raised", f"profile: {_raised(exc)}") from None
                except Fail:
                    raise
                except Exception as exc:
                    raise Fail("raised", f"profile: {_raised(exc)}") from None
            except Fail as f:
                out.failures.append((method, f.check, str(f)))
    return out


# ---------------------------------------------------------------------------------------------
# Reproducers
# ---------------------------------------------------------------------------------------------
def case_code(case: M.Case, method: str, limit: int = 40) -> str | None:
    """Pasteable code that makes the package calls of ``case`` (None above ``limit`` rows)."""
    s = case.sample
    if s.n_rows > limit:
        return None
    lines = ["import math; import numpy as np; import elcvx; from elcvx import Sample, MomentConstraint",
             f"s = {sample_repr(s, limit)}"]
    if case.kind == "difference":
        lines.append(f"sb = {sample_repr(case.sample_b, limit)}")
        extra = "" if case.diff_atoms is None else f", atoms={array_repr(case.diff_atoms)}"
        lines.append(f"elcvx.difference(s, sb, confidence_level={case.level}, rho={case.rho!r}, "
                     f"method={method!r}{extra})")
        return "\n".join(lines)
    h = case.helper
    if h is not None:
        if h["name"] == "reward_model":
            lines.append(f"cons, atoms = [elcvx.constraints.reward_model(s, {array_repr(h['predicted'])}, "
                         f"{array_repr(h['expected'])}, deterministic={h['deterministic']})], None")
        elif h["name"] == "action_control_variates":
            lines.append(f"cons, atoms = elcvx.constraints.action_control_variates(s, "
                         f"np.array({h['actions'].tolist()}), np.array({array_repr(h['target_probs'])}))")
        elif h["name"] == "action_marginals":
            lines.append(f"cons, atoms = elcvx.constraints.action_marginals(s, np.array({h['actions'].tolist()}), "
                         f"{array_repr(h['marginals'])})")
        else:
            lines.append(f"MomentConstraint(s.w, 1.0, atom_range={h['atom_range']!r})")
            return "\n".join(lines)
    else:
        cons = []
        for c in case.constraints:
            rng = c.atom_range if isinstance(c.atom_range, str) else f"({num_repr(c.atom_range[0])}, {num_repr(c.atom_range[1])})"
            cons.append(f"MomentConstraint({array_repr(c.values)}, {num_repr(c.target)}, "
                        f"atom_range={rng}, name={c.name!r})")
        lines.append("cons = [" + ",\n        ".join(cons) + "]")
        lines.append(f"atoms = {None if case.atoms is None else 'np.array(' + array_repr(case.atoms) + ')'}")
    lines.append(f"print(elcvx.estimate(s, constraints=cons, atoms=atoms, rho={case.rho!r}, method={method!r}))")
    lines.append(f"print(elcvx.interval(s, constraints=cons, atoms=atoms, confidence_level={case.level}, "
                 f"method={method!r}))")
    try:
        ref = reference(case)
    except (R.NotCertified, R.Infeasible):
        ref = None
    if ref is not None and ref.feasible and ref.v:
        v = [float(s.rmin + (s.rmax - s.rmin) * x) for x in ref.v]
        lines.append(f"print(elcvx.profile(s, {array_repr(v)}, constraints=cons, atoms=atoms, "
                     f"method={method!r}).statistic)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The collector
# ---------------------------------------------------------------------------------------------
def cause(case: M.Case, method: str, check: str, message: str) -> str:
    """The item of issue 24 a failure belongs to, by its kind (a first sort for the summary;
    "new" where none fits)."""
    if check == "infeasible":
        return "item 3 (infeasible not named)"
    if check == "helper":
        return "item 5 (helpers)"
    if case.kind == "difference" and ("the same policy" in message or "atoms" in message
                                      or "w_b=inf" in message):
        return "item 4 (difference)"
    if check == "raised" and "SolverError" in message and method in ("fast", "auto"):
        return "item 2 (feasible model fails)"
    if check == "raised" and method == "cvxpy" and case.sample.n_rows == 1:
        return "item 5 (cvxpy, one row)"
    if check == "accuracy":
        return "item 1 (optimal but wrong)"
    return "new"


@dataclass
class Failure:
    case: M.Case
    method: str
    check: str
    message: str
    shrunk: M.Case | None = None
    shrunk_message: str | None = None


def _same_failure(case, method, check):
    methods = METHODS if method == "-" else (method,)
    for m, c, msg in run_case(case, methods).failures:
        if (m, c) == (method, check):
            return msg
    return None


def shrink(f: Failure, deadline: float) -> None:
    """Drop rows while the same check on the same method still fails."""
    case = f.case
    keep = shrink_rows(case.sample.n_rows,
                       lambda rows: _same_failure(case.subsample(rows), f.method, f.check) is not None,
                       deadline)
    f.shrunk = case.subsample(keep)
    f.shrunk_message = _same_failure(f.shrunk, f.method, f.check)


@dataclass
class Fuzz:
    cases: Counter = field(default_factory=Counter)  # regime -> cases
    infeasible: Counter = field(default_factory=Counter)  # regime -> infeasible cases
    skipped: dict = field(default_factory=lambda: defaultdict(list))  # regime -> (seed, why)
    cvxpy_errors: dict = field(default_factory=lambda: defaultdict(list))  # regime -> (seed, msg)
    not_optimal: Counter = field(default_factory=Counter)  # (method, status) -> count
    worst: dict = field(default_factory=dict)  # (method, what) -> (ratio, seed, regime)
    failures: list = field(default_factory=list)
    seconds: float = 0.0

    def run(self, case: M.Case):
        self.cases[case.regime] += 1
        out = run_case(case)
        if out.skipped:
            self.skipped[case.regime].append((case.seed, out.skipped))
        if out.feasible is False:
            self.infeasible[case.regime] += 1
        for msg in out.cvxpy_errors:
            self.cvxpy_errors[case.regime].append((case.seed, msg))
        for method, what, status in out.not_optimal:
            self.not_optimal[(method, what, status[:60])] += 1
        for key, ratio in out.worst.items():
            if ratio > self.worst.get(key, (0.0,))[0]:
                self.worst[key] = (ratio, case.seed, case.regime)
        self.failures += [Failure(case, m, c, msg) for m, c, msg in out.failures]

    def shrink_failures(self, budget, per_failure=20.0, limit=40):
        """Shrink one failure per (check, method, regime), up to ``limit``, within ``budget``."""
        end = time.monotonic() + budget
        seen = set()
        for f in self.failures:
            key = (f.check, f.method, f.case.regime)
            if key in seen or len(seen) >= limit or time.monotonic() > end:
                continue
            seen.add(key)
            shrink(f, min(end, time.monotonic() + per_failure))

    def summary(self) -> str:
        n = sum(self.cases.values())
        lines = [f"fuzz_models: {n} cases in {self.seconds:.1f} s, {len(self.failures)} failures"]
        failed = Counter((f.case.regime, f.method, f.check) for f in self.failures)
        cols = [(m, c) for c in CHECKS for m in (("-",) if c == "helper" else METHODS)
                if c != "infeasible" or True]
        head = f"{'regime':<11} {'cases':>5} {'infeas':>6} {'skip':>4} {'cvxErr':>6} " + " ".join(
            f"{(c[:5] + ':' + m[:4]):>10}" for m, c in cols)
        lines.append("failures per regime and (check:method)")
        lines.append(head)
        for regime in M.REGIMES:
            if not self.cases[regime]:
                continue
            cells = [str(failed[(regime, m, c)] or ".") for m, c in cols]
            lines.append(f"{regime:<11} {self.cases[regime]:>5} {self.infeasible[regime]:>6} "
                         f"{len(self.skipped.get(regime, ())):>4} {len(self.cvxpy_errors.get(regime, ())):>6} "
                         + " ".join(f"{x:>10}" for x in cells))
        tot = [sum(failed[(r, m, c)] for r in M.REGIMES) for m, c in cols]
        lines.append(f"{'total':<11} {n:>5} {sum(self.infeasible.values()):>6} "
                     f"{sum(len(v) for v in self.skipped.values()):>4} "
                     f"{sum(len(v) for v in self.cvxpy_errors.values()):>6} "
                     + " ".join(f"{x:>10}" for x in tot))
        causes = Counter(cause(f.case, f.method, f.check, f.message) for f in self.failures)
        lines.append("failures by cause: " + "; ".join(f"{c} {k}" for c, k in sorted(causes.items())))
        for c in sorted(causes):
            per = Counter((f.case.regime, f.method) for f in self.failures
                          if cause(f.case, f.method, f.check, f.message) == c)
            lines.append(f"  {c}: " + ", ".join(f"{r}/{m} {k}" for (r, m), k in sorted(per.items())))
        by_case = Counter((f.method, f.check) for f in self.failures)
        cases_failed = len({f.case.seed for f in self.failures})
        lines.append(f"cases with a failure: {cases_failed}; failures per (method, check): "
                     + ", ".join(f"{m}/{c} {k}" for (m, c), k in sorted(by_case.items())))
        if self.not_optimal:
            lines.append("statuses not optimal (no accuracy check): "
                         + "; ".join(f"{m} {w} '{s}' x{k}" for (m, w, s), k in self.not_optimal.most_common(8)))
        for regime, items in self.skipped.items():
            for seed, why in items[:3]:
                lines.append(f"  skipped {regime} seed {seed}: {why[:150]}")
        for regime, items in self.cvxpy_errors.items():
            if not items:
                continue
            seed, msg = items[0]
            lines.append(f"  cvxpy SolverError {regime} x{len(items)}, first seed {seed}: {msg[:150]}")
        lines.append("worst error / tolerance per method (seed, regime): " + "; ".join(
            f"{m} {w[:12]} {r:.3g} ({sd}, {rg})" for (m, w), (r, sd, rg) in sorted(
                self.worst.items(), key=lambda kv: -kv[1][0])[:12]))
        return "\n".join(lines)

    def report_failures(self, limit=40) -> str:
        out = []
        shown = set()
        for f in self.failures:
            key = (f.check, f.method, f.case.regime)
            if key in shown or len(shown) >= limit:
                continue
            shown.add(key)
            c = f.case
            out.append(f"--- [{cause(c, f.method, f.check, f.message)}] {f.check} on {f.method}, "
                       f"regime {c.regime} ({c.note}), seed {c.seed}, "
                       f"{c.sample.n_rows} rows, intent {c.intent}")
            out.append(f"    {f.message.strip()[:600]}")
            out.append(f"    regenerate: import sys; sys.path[:0] = ['tests', 'tests/public']; import test_fuzz_models as t; "
                       f"t.run_case(t.M.draw({c.seed})).failures")
            shown_case = f.shrunk if f.shrunk is not None and f.shrunk_message else c
            if shown_case is not c:
                out.append(f"    shrunk to {shown_case.sample.n_rows} rows: {f.shrunk_message.strip()[:300]}")
            code = case_code(shown_case, "fast" if f.method == "-" else f.method)
            if code:
                out.append("    " + code.replace("\n", "\n    "))
        return "\n".join(out)


def fuzz(seeds, shrink_budget=60.0) -> Fuzz:
    out = Fuzz()
    start = time.monotonic()
    for seed in seeds:
        try:
            case = M.draw(seed)
        except R.NotCertified as exc:  # the generator's own use of the reference
            regime = M.REGIMES[seed % len(M.REGIMES)]
            out.cases[regime] += 1
            out.skipped[regime].append((seed, f"generator: {exc}"))
            continue
        out.run(case)
    out.seconds = time.monotonic() - start
    if out.failures:
        out.shrink_failures(shrink_budget)
    return out


# ---------------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------------
QUICK = range(200_000, 200_026)  # 2 seeds per regime (default suite)
QUICK_SLOW = range(200_026, 200_052)  # 2 more per regime, in the slow suite
# Seeds of the full run that failed once, each with what was fixed: they stay in the default run.
FIXED = {
    395: "the certificate fitted the atoms' masses, then the rows' correction, one after the "
         "other: with a target of 1e6 carried by the atoms, 2e-10 of the mass was left over",
    # Issue 24, item 2 (the fast path raised on a feasible model), targets at the edge:
    19: "a bound's polishing began with an empty working set: its unconstrained step only landed "
        "on a face met to rounding, so a dual nearly flat on the face kept a primal point whose "
        "likelihood was made up at 5e-6; it now starts on the faces its point meets",
    266: "as 19 (the upper bound's likelihood made up at 1.4e-6)",
    929: "as 19 (8.5e-6)",
    45: "as 19 (the upper bound stopped at max_iter)",
    1345: "as 45",
    162: "a profile's dual point at |x| = 5e4 on an atom's face violated it by 5e-12 in its last "
         "bits; the point found is now moved onto the faces it meets until no computed slack is "
         "below the certificate's tolerance",
    201: "a profile as 162, fixed by the polish of 19 already",
    1917: "as 201",
    2983: "as 162 (on two groups of faces at once: moving off one pushed it through the other)",
    3048: "as 162",
    231: "a constraint with a zero-width atom_range whose target is 6e-17 from the only value the "
         "rows and atoms give: feasible to rounding (the reference, cvxpy and the feasibility LP "
         "agree), but the fast path's dual ran off along its lambda ('no feasible start'); it "
         "is now solved with that lambda at 0 and certified on the whole model",
    296: "as 231", 348: "as 231", 1713: "as 231", 2857: "as 231", 2948: "as 231", 3026: "as 231",
    422: "a bound started from the MLE's point, at its scale (|y| = 4e4 on a vertex of the atoms' "
         "faces, the targets within 1e-5 of the edge), where the method stalled in f's rounding "
         "(max_iter, line search failed, not certified); a failed bound is now solved again "
         "from the plain start",
    370: "as 422", 552: "as 422", 565: "as 422", 1475: "as 422", 1618: "as 422", 2177: "as 422",
    2294: "as 422", 2723: "as 422",
    389: "a difference whose bound is an end of its range, reached only as a row's a -> 0 "
         "(kappa = 2e-14): the bound's certificate divided the rounding of E_Q~[h] - D by kappa "
         "(its likelihood made up at 1.1) though the atoms took the whole residual (e = 0)",
    818: "as 389 (on fast; on auto Clarabel's point failed the same certificate)",
    1819: "as 389", 2027: "as 389",
    1984: "one row and listed atoms: the bound's dual is linear (the geometric mean of one row), "
          "its optimum an LP's vertex with the likelihood constraint slack (the row carries 1.8 "
          "times the ball's least mass); the Newton method stalled there (line search failed) "
          "and the certificate refused a correction above 1/2. With one row it is exact, "
          "-N log(1 + e), and a point it certifies is taken whatever the iteration's status "
          "(also Clarabel's, on auto)",
    2738: "as 1984 (max_iter; the row carries 6.8 times the least mass)",
    890: "a target 1.3e-5 inside the feasible set's edge: one row holds nearly all the rows' mass "
         "(the atoms the rest), so the rows' columns in the certificate's fit are nearly of rank "
         "one; fitted after the atoms' masses, the correction came out at sum c e^2 = 1.3e-11 "
         "where 5e-22 exists (the MLE's estimate not certified: 8.9e-6), now found by solving "
         "the cheapest fit's optimality conditions as one system; then the upper bound stalled "
         "(line search failed) with gamma + lambda . g cancelling at |lambda| = 8e4: it is "
         "solved again in centred coordinates, lambda . (g - b)",
    526: "as 890 (the MLE's estimate's error bound 1.6e-6; the upper bound at max_iter)",
    2891: "as 890's bound (a target of 6e6: the lower bound's likelihood made up at 1.2e-6)",
    84: "g0 = w on the rows that carry the mass (a w-indicator column at a target 1e-5 from its "
        "edge): beta and lambda_0 grow to 3e5 with opposite signs, and the Hessian lost the "
        "digits of their difference (the lower bound stalled, its likelihood made up at 0.07, "
        "in the user's coordinates and in centred ones); it is solved a third time with the "
        "centred features decorrelated (its feature (g0 - b0) - (w - 1) - 9.35e-6, 0 to 1e-11 "
        "on those rows)",
}


# A fixed seed that failed exactly as an earlier one ("as 422", nothing more) repeats that seed's
# case in the slow suite; the first seed of each failure, and every seed with a detail of its
# own, stay in the default one.
REPEATS = {seed for seed, what in FIXED.items() if re.fullmatch(r"as \d+", what)}


@pytest.mark.parametrize("seed", [*QUICK, *(s for s in FIXED if s not in REPEATS),
                                  *(pytest.param(s, marks=pytest.mark.slow)
                                    for s in (*QUICK_SLOW, *sorted(REPEATS)))])
def test_fuzz_models_quick(seed):
    """One case through every check on all three methods (default ``make test``)."""
    case = M.draw(seed)
    out = run_case(case)
    assert not out.skipped, out.skipped
    assert not out.failures, "\n".join(f"{m} {c}: {msg}" for m, c, msg in out.failures) + (
        "\n" + (case_code(case, out.failures[0][0] if out.failures[0][0] != "-" else "fast") or ""))


@pytest.mark.slow
def test_fuzz_models_full():
    """3,250 cases (250 per regime) on all three methods: ``make test-fuzz-models``."""
    result = fuzz(range(3_250), shrink_budget=240.0)
    print()
    print(result.summary())
    report = result.report_failures() if result.failures else ""
    print(report)
    skipped = sum(len(v) for v in result.skipped.values())
    assert skipped <= 0.01 * 3_250, f"{skipped} cases skipped by the reference"
    assert not result.failures, f"{len(result.failures)} failures\n{report}"


# ---------------------------------------------------------------------------------------------
# The reference and the checks, checked
# ---------------------------------------------------------------------------------------------
def test_the_reference_gives_the_issues_number():
    """Issue 24, item 1's example: the reference gives 3.2784630258 (the issue's reference value,
    which the fast path also gives), not cvxpy's 3.2784568020."""
    from elcvx import Sample
    k = -1.057703580212635
    s = Sample([0.5, 4, 0, 1.25, 10, 1.25], [3.5064788181462063, 2.1934000155977658, 2.407033018710721,
               3.6999157217071477, 2.194820479490947, 4.7993641928966015], counts=[4, 2, 2, 1, 4, 5],
               wmax=15.85288775897137, rmax=5)
    case = M.Case(0, "constant", "issue 24", s, [M.Constraint(np.full(6, k), k, (k - 1, k + 1), "g")],
                  rho="midpoint")
    ref = reference(case)
    assert ref.feasible
    assert abs(5 * (ref.base + 0.5 * ref.wmass) - 3.2784630258) < 1e-10


def test_the_reference_agrees_with_a_decimal_bisection_without_constraints():
    """With no constraint and the two default atoms, the reference's estimate and its range are
    the 40-digit bisection of fast2d_reference.reference_estimate (a different program: the
    1-d dual's root)."""
    for seed in range(0, 44, 4):  # every regime of test_fuzz at least once
        s = draw(seed).sample
        if s.n_rows > 300:
            continue
        base, wmass = reference_estimate(s)
        data = R.PolicyData(s.w, (s.r - s.rmin) / (s.rmax - s.rmin), s.c, np.zeros((s.n_rows, 0)),
                            np.zeros(0), np.array([[s.wmin], [s.wmax]]))
        cq = s.c * R.mle(data.likelihood()).q
        assert abs(cq @ (data.w * data.u) - base) < 1e-9, seed
        assert abs(1 - cq @ data.w - wmass) < 1e-9, seed


@pytest.mark.parametrize("seed", [200_005, 200_013, 200_014, 200_046])
def test_the_bounds_are_the_profiles_level_set(seed):
    """Two programs of the reference against each other: the profile likelihood (a likelihood
    with one more column) at each end of the interval (a bound program) is the quantile."""
    case = M.draw(seed)
    ref = reference(case)
    data = M.reference_data(case)
    quantile = float(stats.chi2.ppf(case.level, 1))
    for end in (ref.low, ref.high):
        if 1e-6 < end < 1 - 1e-6:
            statistic = 2 * (R.mle(data.profile(end)).loglik - ref.loglik)
            assert abs(statistic - quantile) < 1e-8 * max(1.0, abs(ref.loglik)), (seed, end)


def test_the_lp_decides_feasibility_by_hand():
    """A constant column g = 1 on the rows with atoms' g in [0, 1]: a target above 1 cannot be
    met; exactly 1 can (no mass on the atoms with g < 1), with every row kept."""
    from elcvx import Sample
    s = Sample([0.5, 2.0, 1.0], [0.0, 1.0, 0.5], wmax=4.0)
    for target, feasible in ((1.5, False), (1.0, True), (0.5, True), (-0.1, False)):
        case = M.Case(0, "constant", "", s, [M.Constraint(np.ones(3), target, (0.0, 1.0), "g")])
        assert reference(case).feasible is feasible, target


def test_a_small_error_fails_the_accuracy_check(monkeypatch):
    """The cross-check can fail: an estimate moved by 3e-6 of the reward range fails it on
    every method; moved by 3e-7, it passes."""
    import dataclasses
    case = M.draw(200_005)
    assert not run_case(case).failures
    original = elcvx.estimate
    for shift, fails in ((3e-6, True), (3e-7, False)):
        def moved(sample, **kw):
            res = original(sample, **kw)
            return dataclasses.replace(res, value=res.value + shift * (sample.rmax - sample.rmin))
        monkeypatch.setattr(elcvx, "estimate", moved)
        got = {(m, c) for m, c, _ in run_case(case).failures}
        assert got == ({(m, "accuracy") for m in METHODS} if fails else set()), (shift, got)


def test_the_infeasible_check_accepts_the_specified_error(monkeypatch):
    """What item 3 asks for passes the check: an InvalidInputError naming the constraint."""
    case = M.draw(200_012)
    assert not reference(case).feasible

    def refuse(sample, constraints=(), **kw):
        raise InvalidInputError(f"the constraints cannot hold with every logged row kept: "
                                f"{constraints[0].name} (target {constraints[0].target!r})")

    monkeypatch.setattr(elcvx, "estimate", refuse)
    monkeypatch.setattr(elcvx, "interval", refuse)
    assert not run_case(case).failures


def test_an_mle_at_the_scale_of_the_edge_is_certified():
    """Seed 84 (regime edge: a target 2e-5 from the feasible set's edge, |x| = 5e4): the fast
    path's MLE was on an atom's face to the ulps of x only, a slack of 1.6e-12 at an atom of
    mass 0.65, a gap of N mu s = 6e-10 and an estimate error bound of 2.3e-6 ("not
    certified"). Moved onto its faces (:func:`elcvx.fast.starts._onto_faces`), the estimate
    and its range are the reference's. (Its lower bound, at |y| = 3e5, still fails in the slow
    run.)"""
    case = M.draw(84)
    constraints, atoms = case.package_inputs()
    ref = reference(case)
    est = elcvx.estimate(case.sample, constraints=constraints, atoms=atoms, rho=case.rho,
                         method="fast")
    assert est.status == "optimal", est.status
    out = Outcome()
    s = case.sample
    pairs = [("range.low", _unit(s, est.value_range.low), ref.base),
             ("range.high", _unit(s, est.value_range.high), ref.base + ref.wmass),
             ("estimate", _unit(s, est.value), ref.base + rho_unit(case, ref) * ref.wmass)]
    assert not [d for d in (_compare(out, "fast", *p) for p in pairs) if d]
