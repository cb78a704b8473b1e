"""Where a log's rows are, and how a pass walks them: block by block in memory
(:mod:`~elcvx.engines.blocks`), or chunk by chunk from files or a cluster's partitions
(:mod:`~elcvx.engines.rows`, :func:`elcvx.io.scan_log`): every pass of the fast path is the
same fold of a block kernel, merged across chunks; and what long work shows on a terminal
meanwhile (:mod:`~elcvx.engines.progress`: a pass, a file read, the bootstrap, a cvxpy solve).
"""
