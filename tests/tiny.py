"""The smallest evolution config the tests run: keys for ``load_config(None, [...])``."""

from pathlib import Path

COMMITTED_AMERICAN8 = str(Path(__file__).resolve().parents[1] / "results" / "best_american8.safetensors")
"""The committed 8x8 agent, whose search SPSA's tiny config tunes."""

TINY_RUN = [
    "rules=simple6",
    "population=4",
    "games_per_epoch=2",
    "layers=1",
    "width=4",
    "simulations=2",
    "train_steps=1",
    "max_plies=20",
]
"""A 4-member population of 1 x 4 MLPs, 2 games of at most 20 plies, 2 simulations a move."""

TINY_SELF_TRAINED = [
    "rules=simple6",
    "layers=1",
    "width=4",
    "search=alphabeta",
    "depth=1",
    "max_plies=24",
    "updates_per_epoch=1",
    "batch_size=8",
    "snapshot_every=2",
    "strength_every=0",
]
"""What the learners (TD(lambda), TDLeaf, DQN) share in the tiny configs."""

TINY_LEARNER = [*TINY_SELF_TRAINED, "selfplay_games=4", "bootstrap_positions=16", "bootstrap_steps=1"]
"""The smallest self-play learner config: 4 self-play games of at most 24 plies, one update."""

TINY_BY_STRATEGY = {
    "boss_ga": [*TINY_RUN, "strategy=boss_ga"],
    "memetic_pool": [*TINY_RUN, "strategy=memetic_pool", "train_batch=4"],
    **{name: [*TINY_RUN, f"strategy={name}"] for name in ("SimpleGA", "Open_ES", "SNES", "CMA_ES")},
    "td_lambda": [*TINY_LEARNER, "strategy=td_lambda"],
    "td_leaf": [*TINY_LEARNER, "strategy=td_leaf", "depth=2"],
    "pbt": [*TINY_LEARNER, "strategy=pbt", "members=4", "exploit_interval=2", "tournament_openings=1"],
    "dqn": [
        *TINY_SELF_TRAINED,
        "strategy=dqn",
        "envs=4",
        "buffer_size=64",
        "steps_per_epoch=2",
        "updates_per_epoch=2",
        "target_update_every=3",
        "epsilon_decay_epochs=3",
    ],
    "spsa": [
        "rules=american8",
        "strategy=spsa",
        f"spsa_agent={COMMITTED_AMERICAN8}",
        "spsa_parameters=lmr_min_move,aspiration",
        "spsa_pairs=1",
        "spsa_nodes=100",
        "spsa_r_end=5.0",
        "snapshot_every=2",
    ],
    **{
        name: [
            "rules=american8",
            f"strategy={name}",
            f"{prefix}_agent={COMMITTED_AMERICAN8}",
            *([f"{prefix}_parameters=lmr_min_move,aspiration"] if prefix != "es" else []),
            f"{prefix}_population=4",
            f"{prefix}_pairs=1",
            f"{prefix}_nodes=100",
            "snapshot_every=2",
        ]
        for name, prefix in (("cma_search", "cma"), ("ga_search", "ga"), ("es_network", "es"))
    },
}
"""A tiny config of every strategy (``config.STRATEGIES``), for the tests that every strategy passes."""
