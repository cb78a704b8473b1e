r"""The LS paper's tightness study of pessimistic bounds, reproduced beside EL (``elcvx reproduce
pessimism``; the page "Pessimistic bounds" of the documentation).

Protocol (``ope_ops/policy_evaluation.py`` of ``otmhi/offpolicy_ls``;
:mod:`~elcvx.experiments.pessimism.protocol` has the closed forms)
---------------------------------------------------------------------------------------------
* **Data.** Five classification datasets, ``<openml id>_<name>.csv.gz`` with a last column
  ``label`` = the rank of the class name among the sorted names (the authors' ``LabelEncoder``):
  yeast, vehicle, page-blocks, optdigits, kropt (all rows), in ``../shared/data/pessimism``.
* **Policies.** Softmaxes of the one-hot label: the target at ``tau`` in ``{0.1, ..., 0.5}``, the
  logging policy at ``tau0`` in ``{0.3, 0.25, 0.2}`` around the label shifted by one for classes 0
  and 1. Binary rewards ``1[a = y]`` flipped with probability ``eta`` in ``{0, 0.1, 0.2}``: 45
  configurations.
* **Logs.** 98% of the rows (as the authors' splits keep), redrawn with the actions and rewards for
  each of ``seeds`` replicates (the published table has one).
* **Bounds** (:mod:`~elcvx.experiments.pessimism.methods`): at ``delta = 0.05`` one-sided, EL
  one-sided with the known weight range and with ``wmax = inf``, el-betting (both ranges), LS, IX,
  empirical Bernstein, and the DDRM and betting confidence sequences at ``t = N``.
* **Tables** (:mod:`~elcvx.experiments.pessimism.report`): the mean and median radius ``(V -
  LB)/V`` (0 when ``LB >= V``) and the violation rate ``LB > V`` per dataset and overall, and our
  LS, IX and EB beside the published ones (:mod:`~elcvx.experiments.pessimism.published`).

Random streams: ``SeedSequence(seed, spawn_key=(openml id, configuration index, replicate))``.
"""

from .methods import DELTA, FINITE_SAMPLE, METHODS, bounds
from .protocol import DATASETS, Config, Log, configs, draw_log, n_log, true_value, weight_range
from .published import PUBLISHED
from .report import comparison, write
from .study import DEFAULT_SEED, DEFAULT_SEEDS, PessimismStudy, radius, run_study

__all__ = ["DELTA", "FINITE_SAMPLE", "METHODS", "bounds", "DATASETS", "Config", "Log", "configs",
           "draw_log", "n_log", "true_value", "weight_range", "PUBLISHED", "comparison", "write",
           "DEFAULT_SEED", "DEFAULT_SEEDS", "PessimismStudy", "radius", "run_study"]
