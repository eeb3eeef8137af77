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

import hashlib as _hashlib
from pathlib import Path as _Path


def drop_stale_cache(folder: _Path) -> bool:
    """Delete numba's cache of the package in ``folder`` when any of its sources changed since it was
    written; True when it did.

    numba checks only the source file of each cached function, so a function of ``search.py`` that
    inlined or called an older ``network.py`` would be loaded with the old code; a stamp of all the
    sources (``__pycache__/sources.sha1``) catches that. Only the package's own ``__pycache__`` (with
    ``NUMBA_CACHE_DIR`` set, clear that folder after changing these files)."""
    digest = _hashlib.sha1()
    for source in sorted(folder.glob("*.py")):
        digest.update(source.name.encode() + source.read_bytes())
    cache, stamp = folder / "__pycache__", folder / "__pycache__" / "sources.sha1"
    try:
        if stamp.is_file() and stamp.read_text() == digest.hexdigest():
            return False
        for entry in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            entry.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only install: numba will not write a cache there either
        return False
    return True


drop_stale_cache(_Path(__file__).resolve().parent)
