r"""The LS paper's policy-selection study, reproduced beside EL (``elcvx reproduce selection``;
the page "Policy selection" of the documentation).

Protocol (``ope_ops/policy_selection.py`` of ``otmhi/offpolicy_ls``;
:mod:`~elcvx.experiments.selection.protocol` has the definitions)
---------------------------------------------------------------------------------------------
* **Data.** Any folder of ``<openml id>_<name>.csv.gz`` files (numeric features, a last column
  ``label`` in ``0..K-1``; missing feature values allowed, set to the feature's mean); the
  study's five: yeast, vehicle, page-blocks, optdigits, kropt in ``../shared/data/pessimism``.
  Features standardised; 20% of the rows train policies, 50% are logged, the rest held out
  (scikit-learn's ``train_test_split`` with ``random_state=0``, its permutation rewritten).
* **Candidates** (:data:`~.study.CANDIDATES`): the "perfect" softmax of the label at 0.1; two
  linear softmax policies trained on the training rows by gradient ascent on the log of the IPS
  and of the self-normalised IPS estimate (:mod:`~.training`: temperature 1 while training,
  50,000 steps, then 0.1); the logging policy, a softmax of the label at 0.2 shifted by one on
  classes 0 and 1. Binary rewards flipped with probability 0.2.
* **Trials.** 10 logs per dataset, trial ``i`` drawn after ``np.random.seed(i)`` with the
  authors' calls (the training log after ``np.random.seed(1)``), so the logs are theirs.
* **Methods** (:mod:`~.methods`): each chooses a candidate; per-candidate lower bounds at
  ``delta = 0.05/4`` (Bonferroni over the four), ``select`` simultaneous at 0.95.
* **Scores**: BEST (the chosen candidate's true value is the perfect policy's), BETTER (at least
  the logging policy's), WORSE, the authors' ``interpret_results``; true values on the held-out
  rows.
"""

from .methods import DELTA, METHODS, Choice, available_methods, choose
from .protocol import (OUTCOMES, draw_actions, draw_rewards, label_policy, score,
                       split_indices, standardise, true_value)
from .report import comparison, comparison_table, published, write
from .study import CANDIDATES, DEFAULT_TRIALS, SelectionStudy, run_dataset, run_study
from .training import STEPS, softmax_policy, train

__all__ = ["DELTA", "METHODS", "Choice", "available_methods", "choose", "OUTCOMES",
           "draw_actions", "draw_rewards", "label_policy", "score", "split_indices",
           "standardise", "true_value", "comparison", "comparison_table", "published", "write",
           "CANDIDATES", "DEFAULT_TRIALS", "SelectionStudy", "run_dataset", "run_study", "STEPS",
           "softmax_policy", "train"]
