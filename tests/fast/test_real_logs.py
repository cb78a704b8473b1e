"""Constrained solves on real logs that the fast path once left uncertified (issue 24, item 2).

The realistic study's committed run (docs/realistic/summary.md, "Constrained solves per
(dataset, strategy)") had 13 fast-path failures of el-cv (EL with a reward predictor's control
variate, :func:`elcvx.constraints.reward_model` with a deterministic target) on OpenML dataset
1238, ``epsilon=0.25``, each re-solved by ``method="auto"``. The files in ``data/`` are two of
them (replicates 2 and 42 of ``elcvx.experiments.realistic.ope_setup(ds, 1, "epsilon=0.25",
DEFAULT_SEED).evaluation(rep)``), shrunk to the rows that keep the failure (36 and 64 rows):
the weights (0 or 8/7: two actions, a deterministic target), the rewards and the predictor's
``r_hat(x, a)`` and ``sum_a pi(a|x) r_hat(x, a)``.

The bound's dual is nearly flat along its faces there (the control variate is nearly
redundant), rising by 1e-9 along a valley up to a face the Newton method stopped short of:
its primal point was off ("the correction to a feasible point is too large", or "its
likelihood made up at 4e-6"). The reference is :mod:`reference_models` (written from the
definitions: the primal and dual in cvxpy, certified to 1e-9), on atoms written here from
``reward_model``'s documented range: ``g`` in ``[-1, 0]`` at ``w = 0`` and in ``[0, w - 1]``
at ``w = wmax``.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import elcvx
from elcvx import Sample
from elcvx.testing import AGREEMENT

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import reference_models as R  # noqa: E402

FILES = ["el_cv_1238_eps25_rep2.npz", "el_cv_1238_eps25_rep42.npz"]


def _log(name):
    d = np.load(HERE / "data" / name)
    s = Sample(d["w"], d["r"], wmin=float(d["wmin"]), wmax=float(d["wmax"]),
               rmin=float(d["rmin"]), rmax=float(d["rmax"]))
    c = elcvx.constraints.reward_model(s, d["predicted"], d["expected"], deterministic=True)
    return s, c


@pytest.mark.parametrize("name", FILES)
def test_el_cv_on_a_real_log_is_certified_by_the_fast_path(name):
    s, c = _log(name)
    wmax = s.wmax
    atoms = np.array([[0.0, -1.0], [0.0, 0.0], [wmax, 0.0], [wmax, wmax - 1.0]])
    data = R.PolicyData(s.w, (s.r - s.rmin) / (s.rmax - s.rmin), np.ones(s.n_rows),
                        c.values[:, None], np.array([c.target]), atoms, (c.name,))
    mle = R.mle(data.likelihood())
    quantile = float(stats.chi2.ppf(0.95, 1))
    low = R.lower_bound(data.bound("lower"), mle.loglik, quantile)
    high = -R.lower_bound(data.bound("upper"), mle.loglik, quantile)
    ci = elcvx.interval(s, constraints=[c], confidence_level=0.95, method="fast")
    assert ci.status.startswith("optimal"), ci.status
    assert abs(ci.low - low) <= AGREEMENT and abs(ci.high - high) <= AGREEMENT, (ci, low, high)
