"""The paper's experiments, each a function returning tidy results, plus their figures.

* :mod:`elcvx.experiments.synthetic`: the synthetic epsilon-greedy study of the paper's
  Figures 1 and 2 (mean squared error of the estimators; coverage and width of the intervals).
* :mod:`elcvx.experiments.plots`: the figures (matplotlib, the ``plot`` extra, imported lazily).
* :mod:`elcvx.experiments.cli`: ``elcvx reproduce synthetic``.

Nothing here is imported by ``import elcvx``.
"""
