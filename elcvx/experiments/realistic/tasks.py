"""The realistic study's tasks: the evaluations (Tables 1 and 3) and the learning runs (Table 2)
of one (dataset, strategy)."""

from __future__ import annotations

import math
import time

import numpy as np

from ...errors import SolverError
from .data import _splits, bandit_rewards, dataset_rng
from .methods import ESTIMATORS, INTERVAL_METHODS, evaluate
from .policies import (_features, draw_actions, ope_setup, pmf, train_logging_policy, true_value,
                       weight_bound)


def _run_ope(task):
    """Tables 1 and 3 for one (dataset, strategy): train h, r_hat and pi, then the replicates."""
    ds, si, strategy, seed, replicates, need_ci = task
    t0 = time.process_time()
    st = ope_setup(ds, si, strategy, seed)
    y, K, P_eval, PI = st.y, ds.n_classes, st.P_eval, st.PI
    truth = st.truth
    greedy = PI.argmax(axis=1)
    deficit = float(np.mean(P_eval[np.arange(y.size), greedy] == 0))
    # The reward predictor's quality on the Evaluate rows (full information: every action's
    # reward is known there): its squared error on the target's actions, and the direct
    # method's value mean(sum_a pi r_hat) against the truth.
    R_true = (np.arange(K)[None, :] == y[:, None]).astype(float)
    info = dict(dataset=ds.id, name=ds.name, strategy=strategy, table="ope", n_init=st.n_init,
                n_learn=st.n_learn, n_eval=y.size, n_actions=K, wmax=st.wmax,
                truth=truth, logging_value=true_value(P_eval, y), support_deficit=deficit,
                rhat_mse=float(np.mean(np.sum(PI * (st.R_hat - R_true) ** 2, axis=1))),
                dm_value=float(np.mean(st.expected)), deterministic_target=int(st.deterministic))
    ope, ints = [], []
    counts = {"el_fallbacks": 0, "elcv_fallbacks": 0, "elcv_failures": 0}
    failed, first_error = [], ""
    for rep in range(replicates):
        sample, _, predicted, expected = st.evaluation(rep)
        est, ivs, c, errors = evaluate(sample, predicted, expected, st.deterministic)
        for k in counts:
            counts[k] += c[k]
        if errors:
            failed.append(rep)
            first_error = first_error or errors[0]
        for k in ESTIMATORS:
            ope.append(dict(dataset=ds.id, strategy=strategy, replicate=rep, estimator=k,
                            estimate=float(est[k]), truth=truth))
        if need_ci:
            for k in INTERVAL_METHODS:
                ints.append(dict(dataset=ds.id, strategy=strategy, replicate=rep, method=k,
                                 low=ivs[k][0], high=ivs[k][1], truth=truth))
    info.update(counts)
    info["elcv_failed_replicates"] = " ".join(map(str, failed))
    info["elcv_error"] = first_error
    return "ope", ds.id, strategy, ope, ints, info, time.process_time() - t0



def _run_learning(task):
    from ...learning import LinearSoftmaxPolicy, VowpalWabbitPolicy, fit

    ds, si, strategy, seed, start, stop, objectives = task
    t0 = time.process_time()
    init, learn, ev = _splits(ds, "learning")
    K = ds.n_classes
    h = train_logging_policy(ds.X[init], ds.y[init], K, strategy, dataset_rng(seed, ds.id, si, 0))
    P_learn = pmf(h, _features(ds.X[learn]), K)
    info = None
    if start == 0:
        P_eval = pmf(h, _features(ds.X[ev]), K)
        info = dict(dataset=ds.id, name=ds.name, strategy=strategy, table="learning", n_init=init.stop,
                    n_learn=learn.stop - learn.start, n_eval=ev.stop - ev.start, n_actions=K,
                    logging_value=true_value(P_eval, ds.y[ev]))
    h.finish()
    wmax = weight_bound(strategy, P_learn, K)
    Xl, yl, Xe, ye = ds.X[learn], ds.y[learn], ds.X[ev], ds.y[ev]
    mu, sd = ds.X[init].mean(axis=0), ds.X[init].std(axis=0)
    sd[sd == 0] = 1.0
    rows = []
    fallbacks = 0
    for rep in range(start, stop):
        a = draw_actions(P_learn, dataset_rng(seed, ds.id, si, 3, rep))
        p = P_learn[np.arange(a.size), a]
        r = bandit_rewards(yl, a)
        for obj in objectives:
            for method in ("fast", "auto"):  # the fast path first; its documented fallback if it fails
                try:
                    if obj.endswith("-direct"):
                        pol = LinearSoftmaxPolicy(Xl.shape[1], K)
                        fit(pol, (Xl - mu) / sd, a, p, r, objective=obj[:-len("-direct")],
                            solver="direct", wmax=wmax, method=method, max_iter=100)
                        value = true_value(pol.probs((Xe - mu) / sd), ye)
                    else:
                        pol = VowpalWabbitPolicy(K)
                        try:
                            fit(pol, Xl, a, p, r, objective=obj, solver="alternating", passes=4,
                                wmax=wmax, method=method)
                            value = true_value(pol.probs(Xe), ye)
                        finally:
                            pol.close()
                    break
                except SolverError:
                    fallbacks += 1
                    value = math.nan
            rows.append(dict(dataset=ds.id, strategy=strategy, replicate=rep, objective=obj,
                             true_value=value))
    if info is None:
        info = dict(dataset=ds.id, strategy=strategy, table="learning-chunk")
    info["wmax"] = wmax
    info["fit_fallbacks"] = fallbacks
    return "learning", ds.id, strategy, rows, info, stop - start, time.process_time() - t0


def run_task(task):
    """``fn(arguments)`` for a task ``(fn, arguments)`` (a process-pool task; module level to pickle)."""
    fn, arguments = task
    return fn(arguments)
