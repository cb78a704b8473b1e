"""A pass over the rows at a dual point, below both solver paths: the block kernels and their
merges (:mod:`~elcvx.passes.kernels`; :mod:`~elcvx.passes.kernels_numba`, their fused twins,
made of :mod:`~elcvx.passes.numba_runs`), the duals' oracles whose every evaluation is one pass
and whose last pass holds the certificate's sums (:mod:`~elcvx.passes.objectives`), and the
coordinates a bound's dual is evaluated in (:mod:`~elcvx.passes.frames`).

The fast path (:mod:`elcvx.fast`) iterates on these passes; the verdict
(:mod:`elcvx.verdict`) reads any solver's point through them, so that both paths' numbers come
from the same operations.
"""
