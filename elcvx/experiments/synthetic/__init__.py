"""The paper's synthetic off-policy evaluation study (its Figures 1 and 2).

* :mod:`~elcvx.experiments.synthetic.environment`: the epsilon-greedy environment of the
  paper's appendix (the weights' maximum-entropy law, the reward draws, the samples);
* :mod:`~elcvx.experiments.synthetic.methods`: the estimators and intervals compared, and
  their numbers on one sample;
* :mod:`~elcvx.experiments.synthetic.study`: :func:`run_study`, every replicate's numbers and
  the tidy tables (:class:`SyntheticStudy`);
* :mod:`~elcvx.experiments.synthetic.report`: ``mse.csv``, ``intervals.csv``, the figures and
  ``summary.md``.
"""

from .environment import (SECOND_MOMENT, WEIGHTS, Environment, draw_environment,
                          epsilon_greedy_story, max_entropy_weights, replicate_rng)
from .methods import ESTIMATORS, EVENTS, INTERVAL_METHODS, evaluate
from .study import (DEFAULT_CHUNK_SIZE, DEFAULT_REPLICATES, DEFAULT_SEED, DEFAULT_SIZES,
                    SyntheticStudy, run_study)

__all__ = [
    "WEIGHTS",
    "SECOND_MOMENT",
    "DEFAULT_SIZES",
    "DEFAULT_REPLICATES",
    "DEFAULT_SEED",
    "ESTIMATORS",
    "INTERVAL_METHODS",
    "max_entropy_weights",
    "epsilon_greedy_story",
    "Environment",
    "draw_environment",
    "replicate_rng",
    "evaluate",
    "run_study",
    "SyntheticStudy",
]
