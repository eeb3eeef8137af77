"""A compiled single-game search for play: numba bitboard move generation (whole-turn moves),
perft, and a negamax alpha-beta with iterative deepening, principal-variation search, a
transposition table kept between moves, killer and history ordering and capture quiescence.

JAX stays the engine of batched work (training, population games, self-play); this package serves
the latency-bound, sequential search of one game at play time. See docs/compiled.md.

Modules: ``bitops`` (LLVM intrinsics), ``board`` (rules and geometry packed for numba, positions,
moves as JAX actions), ``movegen`` (move generation, copy-make, perft), ``search`` (the alpha-beta),
``network`` (MLP and NNUE leaves, the first layer kept incrementally), ``check`` (agreement with the
JAX rules).
"""
