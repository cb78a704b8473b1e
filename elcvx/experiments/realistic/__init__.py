r"""The paper's realistic-data experiments (its Tables 1, 2 and 3) on classification datasets.

Protocol (appendices "Off-Policy Evaluation, Realistic Data" and "Learning from Logged Bandit
Feedback"; details and conventions in ``docs/realistic.md``)
--------------------------------------------------------------------------------------------
* **Data.** Every ``*.csv.gz`` of a folder (file name ``<openml id>_<name>.csv.gz``; numeric
  columns, the last one ``label`` in ``0..K-1``) is read (:func:`load_dataset`), shuffled once
  with ``SeedSequence(seed, spawn_key=(id,))`` and cut to at most 10,000 rows. The files are in
  ``../shared/data/openml`` (an offline copy) or downloaded and converted by ``elcvx datasets
  fetch`` (:func:`elcvx.datasets.fetch_datasets`); :func:`find_data_dir` looks in both.
* **Supervised-to-bandit.** Actions are the classes; the reward of action ``a`` on row ``i`` is
  ``1[a == y_i]`` (:func:`bandit_rewards`).
* **Splits** (sequential, by row, after the shuffle; :func:`split_sizes`): 20/60/20
  Initialize/Learn/Evaluate for off-policy evaluation and intervals, 20/20/60 for learning.
* **Logging policy h.** Vowpal Wabbit ``--cb_explore K`` with one exploration strategy
  (:data:`STRATEGIES`: ``--epsilon e``, ``--bag n``, ``--cover n``; otherwise VW's defaults),
  learned on-policy on the Initialize split: for each row, predict the PMF, draw ``a`` from it,
  learn ``a:cost:p`` with cost ``1 - reward``. Then frozen: its PMF on the other splits is what
  :func:`pmf` returns.
* **Reward predictor r_hat (Tables 1, 3; el-cv and dr).** One VW squared-loss regression per
  action (:func:`train_reward_predictor`, VW's defaults, 4 passes in row order), learned from the
  bandit feedback ``(x, a, 1[a == y])`` that ``h``'s on-policy loop logged on the Initialize
  split (the logging split); predictions clipped to ``[0, 1]``. ``el-cv`` is
  :func:`elcvx.estimate` / :func:`elcvx.interval` with :func:`elcvx.constraints.reward_model`
  (``predicted = r_hat(x_n, a_n)``, ``expected = sum_a pi(a|x_n) r_hat(x_n, a)`` over the actions
  ``h`` can log, ``deterministic=True`` for the greedy targets); ``dr`` the doubly robust estimate
  ``mean(expected + w (r - predicted))``. An ``el-cv`` solve that fails on the fast path and with
  ``method="auto"`` gives ``nan``, counted per (dataset, strategy) in ``policies.csv``.
* **Target policy pi (Tables 1, 3).** A :class:`~elcvx.learning.VowpalWabbitPolicy` (VW IPS,
  default settings, greedy, so ``pi(a|x)`` is known: 0 or 1) learned off-policy in one pass over
  the Learn split with actions drawn once from ``h``. Its true value is its accuracy on the
  Evaluate split. Each replicate redraws ``a ~ h(.|x)`` on the Evaluate split.
* **Weight bound** (:func:`weight_bound`). By construction where known: ``K/epsilon`` for
  epsilon-greedy, ``n`` for ``n`` bags (a positive probability is a vote share, at least
  ``1/n``); for cover ``1/min p`` over every positive entry of ``h``'s PMF on the rows at hand
  (all actions, not only the logged ones); never below the observed ``1/min p`` (VW's float32
  PMF can be a hair below ``epsilon/K``). Bagging gives actions no bag votes for probability 0; a target action of
  probability 0 is a support deficiency, counted in ``policies.csv`` (``support_deficit``).
* **Learning (Table 2).** Per replicate, actions are drawn from ``h`` on the Learn split and a
  fresh ``VowpalWabbitPolicy`` is fit with :func:`elcvx.learning.fit` (``solver="alternating"``,
  4 passes, ``method="fast"``) for the objectives ``lower_bound``, ``estimate`` and ``ips``;
  the extra row ``lower_bound-direct`` fits a :class:`~elcvx.learning.LinearSoftmaxPolicy`
  (standardised features) with ``solver="direct"``. The true value is the policy's expected
  accuracy on the Evaluate split.
* **Paired tests.** ``scipy.stats.ttest_rel`` at 95% per dataset: of EL's squared errors
  against each other estimator's, and of ``el-cv``'s against IPS, SNIPS, EL and DR (Table 1), of each objective's true values against IPS's
  (Table 2). ``p < 0.05`` and the better mean is a win; a ``nan`` statistic (identical
  columns) is a tie. In Table 1 two estimates within 1e-6 (the accuracy the solvers certify)
  are the same number (:func:`compare_estimates`): the sign of a rounding difference is no
  outcome.

Random streams: ``SeedSequence(seed, spawn_key=(id, strategy index, part, replicate))``; the
results depend neither on ``jobs`` nor on which other datasets or strategies are run.

The code: :mod:`~elcvx.experiments.realistic.data` (the datasets),
:mod:`~elcvx.experiments.realistic.policies` (Vowpal Wabbit's logging, target and reward
policies), :mod:`~elcvx.experiments.realistic.methods` (the estimators and intervals of one
evaluation), :mod:`~elcvx.experiments.realistic.tasks` (one (dataset, strategy)'s
evaluations and learning runs), :mod:`~elcvx.experiments.realistic.study` (:func:`run_study`,
the rows and the tables), :mod:`~elcvx.experiments.realistic.report` (``summary.md``) and
:mod:`~elcvx.experiments.realistic.merge` (:func:`merge_runs`).
"""

from .data import (DATA_DIRS, DEFAULT_SEED, MAX_ROWS, Dataset, DatasetError, bandit_rewards, dataset_rng,
                   find_data_dir, load_dataset, load_folder, missing_data_reason, split_sizes)
from .merge import merge_runs
from .methods import (CV_VERSUS, DEFAULT_REPLICATES, ESTIMATORS, INTERVAL_METHODS, LEVEL, OBJECTIVES,
                      PAPER_ESTIMATORS, RAW_TABLES, TABLES)
from .policies import (STRATEGIES, OpeSetup, draw_actions, ope_setup, pmf, predict_rewards,
                       strategy_args, train_logging_policy, train_reward_predictor, true_value,
                       weight_bound)
from .report import AUTHORS_EL, AUTHORS_EL_CV, PAPER_CI, PAPER_LEARNING, PAPER_OPE
from .study import RealisticStudy, compare_estimates, paired_outcome, run_study

__all__ = [
    "STRATEGIES", "ESTIMATORS", "PAPER_ESTIMATORS", "CV_VERSUS", "INTERVAL_METHODS", "OBJECTIVES",
    "TABLES", "DEFAULT_SEED", "MAX_ROWS", "DatasetError", "Dataset", "DATA_DIRS", "find_data_dir", "missing_data_reason",
    "load_dataset", "load_folder", "bandit_rewards",
    "split_sizes", "strategy_args", "train_logging_policy", "train_reward_predictor",
    "predict_rewards", "pmf", "weight_bound", "true_value",
    "paired_outcome", "compare_estimates", "run_study", "merge_runs", "RealisticStudy",
]
