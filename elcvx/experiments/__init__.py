"""The paper's experiments, each a function returning tidy results, plus their figures.

* :mod:`elcvx.experiments.synthetic`: the synthetic epsilon-greedy study of the paper's
  Figures 1 and 2 (mean squared error of the estimators; coverage and width of the intervals).
* :mod:`elcvx.experiments.realistic`: the realistic-data study of its Tables 1-3.
* :mod:`elcvx.experiments.calibration`, ``constraints_study``, ``sequences_study``,
  ``rho_study``: the studies of the calibrations, moment constraints, confidence sequences
  and the extra atom's reward.
* :mod:`elcvx.experiments.pessimism`, :mod:`elcvx.experiments.selection`: the LS paper's
  tightness and policy-selection protocols.
* :mod:`elcvx.experiments.plots`: the figures (matplotlib, the ``plot`` extra, imported lazily).
* :mod:`elcvx.experiments.cli`: ``elcvx reproduce ...``.

Every study computes its numbers on a sample with :func:`elcvx.evaluation.evaluate_all` and runs
its tasks, reports progress and writes its tables with :mod:`elcvx.experiments._running`.
Nothing here is imported by ``import elcvx`` nor by any module of the library (the layers
contract of ``pyproject.toml``): the ``elcvx`` command reaches ``reproduce`` through
:mod:`elcvx.__main__`, the one module above the studies.
"""
