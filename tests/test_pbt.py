"""Population-based training (``strategy = "pbt"``): exploit/explore copies the best members into the
worst and perturbs within bounds (the depth by one level), a traced depth searches as the same static
depth, the tournament's points are a round-robin's, and a tiny run (its depth evolving) writes metrics
and snapshots, resumes to identical metrics and repeats them with the same seed, and its members
trained as Ray tasks give the same run."""

from __future__ import annotations

import dataclasses
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cli_errors import error_line
from killing import CrashedEpoch
from tiny import TINY_BY_STRATEGY

from neurocheckers.cli import main
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.run import create_run, run
from neurocheckers.experiment.trainers import make_trainer
from neurocheckers.formats import PBT_COLUMNS, TIMING_COLUMNS, read_lineage, read_metrics
from neurocheckers.learners import pbt, pbt_tournament
from neurocheckers.learners.common import (
    TracedDepth,
    choose_actions,
    learner_rules,
    principal_leaves,
    random_plies,
)
from neurocheckers.learners.self_play import members_selfplay, selfplay
from neurocheckers.networks.agent_file import save_agent
from neurocheckers.networks.evaluator import init_params, masked_to_width
from neurocheckers.population import member_or_boss_policy
from neurocheckers.rules.engine import init_batch
from neurocheckers.search.baselines import AlphaBetaConfig
from neurocheckers.sharding import MEMBERS_AXIS

TINY_PBT = [
    *TINY_BY_STRATEGY["pbt"],
    "epochs=4",
    "checkpoint_every=2",
    "name=tinypbt",
    "max_depth=2",
    "min_width=2",
    "max_plies=12",
]
"""4 members at depth 1 (up to 2) and width up to 4 (down to 2), a tournament every 2 epochs of one
opening with both colours (12 games), games of at most 12 plies (the assertions need no longer ones;
at 24 the epochs took 1.7x the CPU)."""


def _settings(*items: str) -> pbt.PBTSettings:
    return make_trainer(load_config(None, [*TINY_PBT, *items])).settings


def _marked_state(settings: pbt.PBTSettings) -> pbt.PBTState:
    """A state whose member i's every weight is i and whose hyperparameters are known."""
    state = jax.eval_shape(lambda: pbt.init(settings, jax.random.key(0)))
    m = settings.members
    marks = jnp.arange(m, dtype=jnp.float32)

    def marked(x):
        return jnp.broadcast_to(marks.reshape((m,) + (1,) * (len(x.shape) - 1)), x.shape).astype(x.dtype)

    members = jax.tree.map(marked, state.members)
    hypers = pbt.Hyperparameters(
        learning_rate=0.01 * (1 + marks),
        lambda_=jnp.full(m, 0.9),
        exploration_rate=jnp.full(m, 0.95),
        depth=1 + jnp.arange(m, dtype=jnp.int32) % 3,
        width=jnp.full(m, settings.width, jnp.int32) if settings.width_evolves else None,
    )
    return pbt.PBTState(
        params=jax.tree.map(lambda x: x[0], members.params),
        members=members,
        hypers=hypers,
        best=jnp.int32(0),
        scores=jnp.zeros(m),
        sources=jnp.full(m, -1, jnp.int32),
        epoch=jnp.int32(0),
    )


def test_exploit_copies_the_best_into_the_worst_and_perturbs_within_bounds():
    settings = _settings("members=8", "quantile=0.25", "perturbation=0.2", "max_depth=0", "min_width=0")
    state = _marked_state(settings)
    order = jnp.array([5, 2, 7, 0, 1, 3, 6, 4])  # best first: 5 and 2 are the best quarter, 6 and 4 the worst
    for seed in range(4):
        new, sources = pbt.exploit_and_explore(settings, state, order, jax.random.key(seed))
        sources = np.asarray(sources)
        assert set(np.flatnonzero(sources >= 0)) == {6, 4}
        assert set(sources[[6, 4]]) <= {5, 2}
        copied = jax.tree.leaves((new.members.params, new.members.opt_state))
        for member in range(8):
            source = sources[member] if sources[member] >= 0 else member
            assert all(np.all(np.asarray(leaf)[member] == source) for leaf in copied)
            old_rate = 0.01 * (1 + source)
            rate = float(new.hypers.learning_rate[member])
            if sources[member] < 0:
                assert rate == pytest.approx(old_rate)
            else:
                assert rate == pytest.approx(old_rate * 0.8) or rate == pytest.approx(old_rate * 1.2)
        assert np.all((np.asarray(new.hypers.lambda_) >= 0) & (np.asarray(new.hypers.lambda_) <= 1))
        assert np.all(np.asarray(new.hypers.exploration_rate) <= 1)  # 0.95 x 1.2 is clipped
        assert np.asarray(new.hypers.lambda_)[sources < 0].tolist() == [pytest.approx(0.9)] * 6
        old_depths = np.asarray(state.hypers.depth)
        copied_depths = np.where(sources >= 0, old_depths[np.maximum(sources, 0)], old_depths)
        assert np.array_equal(new.hypers.depth, copied_depths)  # max_depth 0: copied as it is


@pytest.mark.parametrize(
    "items, low", [(["max_depth=3"], 1), (["member_learner=td_leaf", "depth=2", "max_depth=3"], 2)]
)
def test_exploit_moves_a_copied_depth_by_one_within_its_bounds(items, low):
    settings = _settings("members=8", *items)
    marked = _marked_state(settings)
    depths = low + jnp.arange(8, dtype=jnp.int32) // 2 % (4 - low)  # the best two at two depths
    state = marked.replace(hypers=marked.hypers.replace(depth=depths))
    order = jnp.array([5, 2, 7, 0, 1, 3, 6, 4])
    moves = set()
    for seed in range(8):
        new, sources = pbt.exploit_and_explore(settings, state, order, jax.random.key(seed))
        sources, new_depths = np.asarray(sources), np.asarray(new.hypers.depth)
        for member in range(8):
            source = int(sources[member])
            if source < 0:
                assert new_depths[member] == depths[member]
                continue
            old = int(depths[source])
            assert new_depths[member] in {min(old + 1, 3), max(old - 1, low)}
            moves.add(int(new_depths[member]) - old)
    assert {-1, 1} <= moves  # both ways (and 0 where a bound clipped it)


def test_exploit_resizes_a_copied_width_within_its_bounds_and_keeps_its_units():
    """``min_width``: a copy's width is its source's x 0.8 or x 1.2, rounded, within [min_width,
    width]; its network is the source's on the units both keep, zero past its width."""
    settings = _settings("members=8", "width=10", "min_width=3", "max_depth=0")
    marked = _marked_state(settings)
    widths = jnp.array([10, 4, 3, 9, 10, 5, 7, 8], jnp.int32)
    state = marked.replace(hypers=marked.hypers.replace(width=widths))
    state = state.replace(
        members=state.members.replace(params=pbt.members_masked(settings, state.members.params, widths))
    )
    order = jnp.array([0, 1, 2, 3, 4, 5, 6, 7])  # 0 and 1 the best, 6 and 7 the worst
    seen = set()
    for seed in range(6):
        new, sources = pbt.exploit_and_explore(settings, state, order, jax.random.key(seed))
        sources, new_widths = np.asarray(sources), np.asarray(new.hypers.width)
        kernel = np.asarray(new.members.params["layer_0"]["kernel"])  # [M, inputs, width]
        for member in range(8):
            source = int(sources[member])
            if source < 0:
                assert new_widths[member] == widths[member]
                continue
            old, width = int(widths[source]), int(new_widths[member])
            assert width in {max(3, round(old * 0.8)), min(10, round(old * 1.2))}
            seen.add((old, width))
            kept = min(old, width)
            assert np.all(kernel[member][:, :kept] == source) and not np.any(kernel[member][:, width:])
    assert {(10, 8), (4, 3), (4, 5)} & seen and len({w for _, w in seen}) >= 2


def _searches(settings: pbt.PBTSettings, params, states, keys, depth: int | jax.Array, policy_only: bool):
    """The tournament's moves from ``states`` at a static or a traced ``depth`` (at most 2), and unless
    ``policy_only`` self-play's moves (``settings``) and TDLeaf's leaves one ply deeper (traced: at
    most 2, the depth compared; a third level would only add a search to compile)."""
    leaf_settings = dataclasses.replace(settings, member_learner="td_leaf")
    rate, policy_params = jnp.float32(0.3), (params, jax.tree.map(lambda x: -x, params), jnp.bool_(True))
    actions = leaves = None
    if isinstance(depth, int):
        fixed = dataclasses.replace(settings, depth=depth)
        policy = member_or_boss_policy(
            learner_rules(settings), pbt.learner_spec(settings), AlphaBetaConfig(depth)
        )
        if not policy_only:
            actions = choose_actions(fixed, params, states, keys, rate)
            leaves = principal_leaves(
                dataclasses.replace(leaf_settings, depth=depth + 1), params, states, actions
            )
    else:
        policy, policy_params = (
            pbt_tournament.traced_depth_policy(settings),
            (*policy_params, jnp.stack([depth, 3 - depth])),
        )
        actions = choose_actions(settings, params, states, keys, rate, TracedDepth(depth, jnp.ones(2, bool)))
        at = TracedDepth(depth + 1, jnp.ones(2, bool))
        leaves = principal_leaves(leaf_settings, params, states, actions, at)
    return actions, leaves, jax.vmap(policy, in_axes=(None, 0, 0))(policy_params, states, keys)


def test_a_traced_depth_searches_as_the_same_static_depth():
    """At a traced depth (every depth up to max_depth searched, one kept) self-play's moves and
    TDLeaf's leaves at the config's depth, and the tournament's moves at each depth, equal those of
    that depth compiled in."""
    settings = _settings()  # depth 1, max_depth 2
    rules, n = learner_rules(settings), 16
    keys = jax.random.split(jax.random.key(4), n)
    states = random_plies(rules, init_batch(rules, (n,)), keys, jnp.arange(n) % 7)
    params = init_params(jax.random.key(2), pbt.learner_spec(settings))

    static_1, static_2 = jax.jit(  # one program
        lambda: [_searches(settings, params, states, keys, d, d > 1) for d in (1, 2)]
    )()
    traced = jax.jit(lambda d: _searches(settings, params, states, keys, d, False))
    (actions, leaves, moves), deeper = traced(jnp.int32(1)), traced(jnp.int32(2))
    np.testing.assert_array_equal(actions, static_1[0])
    jax.tree.map(np.testing.assert_array_equal, leaves, static_1[1])
    np.testing.assert_array_equal(moves, static_1[2])
    np.testing.assert_array_equal(deeper[2], static_2[2])
    assert not np.array_equal(actions, deeper[0])  # depth 2 plays differently: a depth is searched


def test_the_tournaments_games_searched_in_one_batch_keep_their_moves():
    """The tournament's moves from one full-width search of every pair's games, sorted by mover and
    each scored by the mover's network, equal each game's own vmapped alpha-beta over the mover's
    network: at the config's depth and at each mover's traced depth (members at depths 1 and 2)."""
    settings = _settings()  # 4 members, depth 1, max_depth 2
    rules, m, per_pair = learner_rules(settings), settings.members, 4
    first, second = (jnp.asarray(x, jnp.int32) for x in np.triu_indices(m, 1))
    n = first.shape[0] * per_pair
    keys = jax.random.split(jax.random.key(5), n)
    states = random_plies(rules, init_batch(rules, (n,)), keys, jnp.arange(n) % 9)
    states = jax.tree.map(lambda x: x.reshape(-1, per_pair, *x.shape[1:]), states)
    keys = keys.reshape(-1, per_pair)
    a_to_move = jax.random.bernoulli(jax.random.key(6), 0.5, keys.shape)
    spec = pbt.learner_spec(settings)
    params = jax.vmap(lambda k: init_params(k, spec))(jax.random.split(jax.random.key(7), m))
    packed, vmapped = pbt_tournament.packed_choose, pbt_tournament.vmapped_choose
    moves = {}
    for depths in (None, jnp.array([1, 2, 2, 1], jnp.int32)):
        for choose in (packed, vmapped):
            played = jax.jit(choose(settings, params, first, second, depths))(states, a_to_move, keys)
            moves[depths is None, choose] = np.asarray(played)
        np.testing.assert_array_equal(moves[depths is None, packed], moves[depths is None, vmapped])
    assert not np.array_equal(moves[True, packed], moves[False, packed])  # depth 2 was searched


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory):
    return run(create_run(load_config(None, TINY_PBT), tmp_path_factory.mktemp("runs")))


def _stable_rows(run_dir):
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in read_metrics(run_dir)]


def test_a_pbt_run_writes_its_metrics_tournaments_and_snapshots(whole_run):
    rows = read_metrics(whole_run)
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2, 3]
    assert all(r[c] for r in rows for c in ("loss", "td_error", "epsilon", "games", "plies", *PBT_COLUMNS))
    assert [int(r["games"]) for r in rows] == [16] * 4  # 4 members x 4 self-play games
    sources = [[int(x) for x in r["pbt_sources"].split()] for r in rows]
    assert sources[0] == sources[2] == [-1] * 4  # no tournament after epochs 0 and 2
    for row, copied in zip(rows[1::2], sources[1::2], strict=True):  # after epochs 1 and 3: one copy
        assert sorted(copied)[:3] == [-1, -1, -1] and max(copied) >= 0
        assert copied[int(row["pbt_best"])] == -1  # the best keeps its own
        assert 0 <= float(row["pbt_worst_score"]) <= float(row["pbt_best_score"]) <= 1
    for r in rows:
        for name in ("learning_rate", "lambda", "exploration"):
            assert float(r[f"pbt_{name}_min"]) <= float(r[f"pbt_{name}_max"])
        assert 1 <= int(r["pbt_depth_min"]) <= int(r["pbt_depth"]) <= int(r["pbt_depth_max"]) <= 2
        assert 2 <= int(r["pbt_width_min"]) <= int(r["pbt_width"]) <= int(r["pbt_width_max"]) <= 4
    depths = [(int(r["pbt_depth_min"]), int(r["pbt_depth_max"])) for r in rows]
    assert depths[0] == (1, 1) and depths[1] == (1, 2)  # epoch 1's copy went one deeper (seed 0's draw)
    assert [int(r["epoch"]) for r in read_lineage(whole_run)] == [-1, 1, 3]  # snapshots of the best


def test_an_interrupted_pbt_run_resumes_and_the_same_seed_repeats_its_metrics(whole_run, tmp_path):
    run_dir = create_run(load_config(None, TINY_PBT), tmp_path)
    run(run_dir, stop_after=3)  # checkpoint after epoch 1; epoch 2 is played again
    run(run_dir)
    assert _stable_rows(run_dir) == _stable_rows(whole_run)
    assert read_lineage(run_dir) == read_lineage(whole_run)


def test_the_members_start_from_an_agent_file(tmp_path):
    """``initial_agent``: every member starts from the file's network (masked to its own width), the
    hyperparameters drawn as a fresh run's."""
    trainer = make_trainer(load_config(None, TINY_PBT))
    fresh = trainer.init(trainer.settings, jax.random.key(0))
    params = jax.tree.map(lambda x: x + 0.5, fresh.params)  # member 0's network: the whole width
    path = str(tmp_path / "start.safetensors")
    save_agent(path, "simple6", trainer.spec, params)
    started = make_trainer(load_config(None, [*TINY_PBT, f"initial_agent={path}"]))
    state = started.init(started.settings, jax.random.key(0))
    assert jax.tree.all(jax.tree.map(np.array_equal, state.params, params))
    assert jax.tree.all(jax.tree.map(np.array_equal, state.hypers, fresh.hypers))
    for member, width in enumerate(np.asarray(state.hypers.width)):
        own = jax.tree.map(lambda x, m=member: x[m], state.members.params)
        masked = masked_to_width(trainer.spec, params, jnp.int32(width))
        assert jax.tree.all(jax.tree.map(np.allclose, own, masked))


def test_the_best_members_network_is_the_runs_network():
    trainer = make_trainer(load_config(None, TINY_PBT))
    start = trainer.init(trainer.settings, jax.random.key(0))
    state, _ = trainer.run_epoch(start, jax.random.key(1))
    state, metrics = trainer.run_epoch(state, jax.random.key(3))  # a tournament's epoch
    best = int(metrics["pbt_best"])
    sources = np.asarray(metrics["pbt_sources"])  # one copy, one deeper (key 3 draws "up" for all)
    assert np.asarray(state.hypers.depth).tolist() == [2 if s >= 0 else 1 for s in sources]
    assert np.asarray(start.hypers.width).min() < 4  # some member starts narrower than the network
    for each in (start, state):  # every member's units past its width are zero, in and out
        kernels = (
            np.asarray(each.members.params["layer_0"]["kernel"]),
            np.asarray(each.members.params["layer_1"]["kernel"]),
        )
        for m, w in enumerate(np.asarray(each.hypers.width)):
            assert not np.any(kernels[0][m][:, w:]) and not np.any(kernels[1][m][w:])
    for mine, members in zip(
        jax.tree.leaves(trainer.network(state)), jax.tree.leaves(state.members.params), strict=True
    ):
        np.testing.assert_array_equal(mine, members[best])
    scores = np.asarray(state.scores)  # a round-robin's points per game: they average 1/2
    assert np.mean(scores) == pytest.approx(0.5) and scores[best] == np.max(scores)
    assert np.all((scores >= 0) & (scores <= 1))


@pytest.mark.filterwarnings("ignore:os.fork")  # Ray starts its own processes; they exec at once
def test_an_evolve_run_with_its_members_on_ray_gives_the_in_process_run(whole_run, tmp_path):
    """``ray_address = "local"``: each epoch's two shares of 2 members trained as Ray tasks, the
    tournament and the exploit step here (``pbt_shares.epoch_in_shares``); crashed after its third epoch and
    resumed, the run's metrics and lineage are the in-process run's of the same seed. One CPU: one
    worker traces the share's program once. CI installs the ray extra, so there this test never skips."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ray is not installed; CI installs the test and ray extras (README)")
        pytest.skip("the ray extra is not installed (pip install -e '.[test,ray]')")
    run_dir = create_run(load_config(None, [*TINY_PBT, "ray_address=local", "ray_share=2"]), tmp_path)

    def crash_after_the_third_epoch(row: dict) -> None:
        if int(row["epoch"]) == 2:
            raise CrashedEpoch

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)  # "local" uses it as it is
    try:
        with pytest.raises(CrashedEpoch):
            run(run_dir, on_epoch=crash_after_the_third_epoch)
        run(run_dir)  # from the checkpoint after epoch 1
    finally:
        ray.shutdown()
    assert _stable_rows(run_dir) == _stable_rows(whole_run)
    assert read_lineage(run_dir) == read_lineage(whole_run)


@pytest.mark.parametrize(
    "items, message",
    [
        (["members=1"], "members must be >= 2, got 1"),
        (["quantile=0.6"], "quantile must be in (0, 0.5], got 0.6"),
        (["perturbation=1.0"], "perturbation must be in (0, 1), got 1.0"),
        (["exploit_interval=0"], "exploit_interval must be >= 1, got 0"),
        (["tournament_openings=0"], "tournament_openings must be >= 1, got 0"),
        (["member_learner=dqn"], "member_learner must be one of td_lambda, td_leaf, got 'dqn'"),
        (["member_learner=td_leaf", "depth=1"], "it needs search = alphabeta and depth >= 2"),
        (["depth=3"], "needs search = alphabeta and max_depth >= depth (or 0: the depth fixed), got search"),
        (["search=mcts"], "max_depth evolves the alpha-beta depth: it needs search = alphabeta"),
        (
            ["min_width=5"],
            "it needs evaluator = mlp and 1 <= min_width <= width (or 0: the width fixed), got",
        ),
        (["evaluator=nnue"], "min_width evolves the MLP's width: it needs evaluator = mlp"),
        (["ray_address=auto", "ray_share=3"], "ray_share must be >= 1 and divide members (4), got 3"),
        (["ray_address=auto", "epochs_per_call=2"], "one epoch a call: it needs epochs_per_call = 1, got 2"),
        (["share_games=true", "search=mcts", "max_depth=0"], "share_games needs the members' games in one"),
        (["share_games=true", "ray_address=auto"], "leave ray_address empty, got 'auto'"),
    ],
)
def test_bad_pbt_settings_are_refused_in_one_line(items, message):
    with pytest.raises(ConfigError) as raised:
        load_config(None, [*TINY_PBT, *items])
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_pbt_keys_are_refused_for_other_strategies(tmp_path, capsys):
    with pytest.raises(ConfigError, match=r"members = 6 is a key of \[pbt\], which strategy 'td_lambda'"):
        load_config(None, [*TINY_BY_STRATEGY["td_lambda"], "members=6"])
    config = tmp_path / "pbt.toml"
    config.write_text('[run]\nstrategy = "pbt"\n[pbt]\nmembers = 0\n')
    assert main(["evolve", str(config), "--out", str(tmp_path)]) == 2
    assert error_line(capsys, "members must be >= 2, got 0").endswith("members must be >= 2, got 0")


def test_the_members_games_in_one_batch_are_their_own_games():
    """``members_selfplay`` (every member's games in one batch, each member's leaves scored by its own
    network: PBT's epoch) plays exactly the games of the members' own self-play, vmapped: each with
    its exploration rate, at its traced depth, TDLeaf's principal leaves recorded."""
    settings = _settings("member_learner=td_leaf", "depth=2")
    settings = dataclasses.replace(settings, selfplay_games=8, max_plies=24)
    m, present = settings.members, jnp.ones(2, bool)
    spec = pbt.learner_spec(settings)
    params = jax.vmap(lambda k: init_params(k, spec))(jax.random.split(jax.random.key(1), m))
    keys, rates = jax.random.split(jax.random.key(2), m), jnp.linspace(0.0, 0.3, m)
    depths = jnp.arange(m, dtype=jnp.int32) % 2 + 1

    def own(p, k, r, d):
        return selfplay(settings, p, k, r, depth=TracedDepth(d, present))

    each = jax.jit(jax.vmap(own, axis_name=MEMBERS_AXIS))(params, keys, rates, depths)
    together = jax.jit(
        lambda: members_selfplay(settings, params, keys, rates, TracedDepth(depths, present))
    )()
    jax.tree.map(np.testing.assert_array_equal, together, each)
    assert together.positions.shape[:2] == (m, 8) and int(together.length.sum()) > 8 * m
    assert not np.array_equal(together.actions[0], together.actions[1])


def test_with_share_games_each_member_learns_from_every_members_games():
    """``share_games``: ``train_members`` trains each member as ``member_learn`` would on all the
    members' games laid end to end (its own targets, its own hyperparameters), not on its own games
    alone; the game counts are still each member's own."""
    settings = _settings("share_games=true", "max_depth=0")
    state = pbt.init(settings, jax.random.key(0))
    keys = jax.random.split(jax.random.key(1), settings.members)
    trained, metrics = jax.jit(pbt.train_members, static_argnums=0)(
        settings, state.members, state.hypers, keys, None
    )
    play_keys = jax.vmap(lambda k: jax.random.split(k)[0])(keys)
    games = members_selfplay(settings, state.members.params, play_keys, state.hypers.exploration_rate)
    every_game = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), games)

    def learned(i, batch):
        member, hyper = (jax.tree.map(lambda x: x[i], tree) for tree in (state.members, state.hypers))
        return jax.jit(pbt.member_learn, static_argnums=0)(settings, member, hyper, keys[i], batch, None)

    for i in (0, settings.members - 1):
        alone, _ = learned(i, every_game)
        own, _ = learned(i, jax.tree.map(lambda x, i=i: x[i], games))
        shared = jax.tree.map(lambda x, i=i: x[i], trained.params)
        jax.tree.map(
            lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6), shared, alone.params
        )
        assert not all(jax.tree.leaves(jax.tree.map(np.allclose, alone.params, own.params)))
    np.testing.assert_array_equal(metrics["plies"], np.sum(games.length, axis=1))
    np.testing.assert_array_equal(metrics["games"], settings.selfplay_games)
