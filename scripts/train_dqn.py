"""Train a DQN agent (``neurocheckers.learners.dqn``) for a wall-time budget and save it as an agent file.

    python scripts/train_dqn.py --minutes 8 --out runs/dqn.safetensors [--seed 0] [--set envs=512 ...]

A stopgap driver until the experiment runner knows the learner: it calls ``dqn.init`` once and
``dqn.epoch`` in a loop, prints a progress line every ``--every`` seconds (epoch, epsilon, loss, the
win rate against the opponent over the games finished since the last line, plies per second), and
writes the online network with ``agent_file.save_agent`` at the end (and on Ctrl-C). Measure it with
``neurocheckers match greedy:FILE random --rules RULES --games 10000``.

``--set key=value`` sets any ``DQNSettings`` field; ``--set opponent=alphabeta:1`` (any player spec)
is resolved with ``players.parse_player``.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path


def parse_settings(pairs: list[str]):
    """``DQNSettings`` from ``key=value`` strings, each value read with the field's type."""
    from neurocheckers.learners.dqn import DQNSettings

    kinds = {f.name: f.type for f in dataclasses.fields(DQNSettings)}
    fields = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or key not in kinds:
            raise SystemExit(f"bad --set {pair!r}: expected key=value with a key of {', '.join(kinds)}")
        kind = kinds[key]
        try:
            if kind == "bool":
                fields[key] = {"true": True, "false": False}[text.lower()]
            else:
                fields[key] = {"int": int, "float": float, "str": str}[kind](text)
        except (KeyError, ValueError):
            raise SystemExit(f"bad --set {pair!r}: {key} must be {kind}") from None
    try:
        return DQNSettings(**fields)
    except ValueError as e:
        raise SystemExit(str(e)) from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=8.0, help="Wall-time budget of the training.")
    parser.add_argument("--out", default="runs/dqn.safetensors", help="Agent file to write.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--every", type=float, default=20.0, help="Seconds between progress lines.")
    parser.add_argument(
        "--save-every", type=float, default=0.0, help="Also save OUT_<seconds>s.safetensors every N minutes."
    )
    parser.add_argument("--devices", type=int, default=1, help="Host devices (the learner uses one).")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()

    from neurocheckers.devices import use_host_devices

    use_host_devices(args.devices)
    import jax

    from neurocheckers.agent_file import save_agent
    from neurocheckers.learners import dqn
    from neurocheckers.players import parse_player
    from neurocheckers.runtime import configure_jax

    configure_jax()
    settings = parse_settings(args.set)
    opponent = None
    if settings.opponent not in dqn.OPPONENTS:
        player = parse_player(settings.opponent, settings.rules_preset)
        opponent = (player.policy, player.params)
    print(settings)
    start = time.perf_counter()
    state = dqn.init(settings, jax.random.key(args.seed), opponent)
    window = {"wins": 0, "draws": 0, "games_finished": 0, "plies": 0}
    last = start
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save(path: Path) -> None:
        metadata = {**dqn.agent_metadata(settings, state), "seed": str(args.seed)}
        metadata["train_seconds"] = f"{time.perf_counter() - start:.0f}"
        save_agent(path, settings.rules_preset, settings.spec, jax.device_get(state.params), metadata)

    next_save = 60 * args.save_every if args.save_every > 0 else float("inf")
    try:
        while time.perf_counter() - start < 60 * args.minutes:
            key = jax.random.fold_in(jax.random.key(args.seed), int(state.epoch))
            state, metrics = dqn.epoch(settings, state, key, opponent)
            metrics = jax.device_get(metrics)
            for name in window:
                window[name] += int(metrics[name])
            now = time.perf_counter()
            if now - start >= next_save:
                save(out.with_name(f"{out.stem}_{now - start:.0f}s{out.suffix}"))
                next_save += 60 * args.save_every
            if now - last >= args.every:
                games = max(window["games_finished"], 1)
                print(
                    f"{now - start:7.1f}s epoch {int(state.epoch):6d} eps {float(metrics['epsilon']):.3f} "
                    f"loss {float(metrics['loss']):.4f} games {window['games_finished']:6d} "
                    f"win {window['wins'] / games:.3f} draw {window['draws'] / games:.3f} "
                    f"plies/s {window['plies'] / (now - last):,.0f}",
                    flush=True,
                )
                window = dict.fromkeys(window, 0)
                last = now
    except KeyboardInterrupt:
        print("interrupted: saving the network as it is")
    save(out)
    seconds = time.perf_counter() - start
    cpu = time.process_time()
    print(
        f"{int(state.epoch)} epochs, {int(state.updates)} updates in {seconds:.0f} s ({cpu:.0f} s CPU): {out}"
    )


if __name__ == "__main__":
    main()
