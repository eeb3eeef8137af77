"""The boss lineage of a run: which boss was in charge when, export of a boss as an agent file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from neurocheckers.experiment.folder import RunError, read_run_config, search_metadata
from neurocheckers.formats import LINEAGE_DIR, LINEAGE_FILE, RESERVED_AGENT_KEYS, read_lineage, read_metrics
from neurocheckers.networks.agent_file import load_agent, save_agent


@dataclasses.dataclass(frozen=True)
class LineageEntry:
    """One boss: its id, the epoch after which it was promoted (-1 for the random first boss), the
    points that promoted it, and its weights file."""

    boss_id: int
    epoch: int
    points: float
    path: Path

    @property
    def first_epoch(self) -> int:
        """The first epoch it played as the boss: 0 for the random first boss, E + 1 for a boss
        promoted after epoch E (an epoch the run plays, unlike ``epoch``'s -1)."""
        return self.epoch + 1


def lineage(run_dir: str | Path) -> list[LineageEntry]:
    """The bosses of a run in promotion order; ``RunError`` if it is not a run folder."""
    run_dir = Path(run_dir)
    read_run_config(run_dir)
    try:
        rows = read_lineage(run_dir)
    except FileNotFoundError:
        raise RunError(f"{run_dir} has no {LINEAGE_FILE}") from None
    return [
        LineageEntry(
            int(r["boss_id"]), int(r["epoch"]), float(r["points"]), run_dir / LINEAGE_DIR / r["file"]
        )
        for r in rows
    ]


def boss_in_charge(entries: list[LineageEntry], epoch: int) -> LineageEntry:
    """The boss that played during ``epoch``: the last one promoted before it."""
    earlier = [e for e in entries if e.epoch < epoch]
    if not earlier:
        raise RunError(f"no boss was in charge at epoch {epoch}")
    return earlier[-1]


def describe_entry(run_dir: str | Path, entry: LineageEntry) -> str:
    """'boss #3 (promoted after epoch 41)', or for a learner's run 'network snapshot #3 (after epoch
    41)': a learner's lineage holds its network's snapshots, not promoted bosses."""
    from neurocheckers.experiment.strategy_registry import is_learner

    if is_learner(read_run_config(run_dir)[0].strategy):
        origin = "the initial network" if entry.epoch < 0 else f"after epoch {entry.epoch}"
        return f"network snapshot #{entry.boss_id} ({origin})"
    origin = "the initial random boss" if entry.epoch < 0 else f"promoted after epoch {entry.epoch}"
    return f"boss #{entry.boss_id} ({origin})"


def export_boss(run_dir: str | Path, out: str | Path, epoch: int | None = None) -> tuple[Path, LineageEntry]:
    """Write the final boss (or the one in charge at ``epoch``) as an agent file with metadata."""
    config, simulations = read_run_config(run_dir)
    entries = lineage(run_dir)
    epochs_done = len(read_metrics(run_dir))
    if epoch is None:
        entry = entries[-1]
    else:
        if not 0 <= epoch < epochs_done:
            raise RunError(f"--epoch must be an epoch this run played, 0..{epochs_done - 1}, got {epoch}")
        entry = boss_in_charge(entries, epoch)
    agent = load_agent(entry.path, config.rules)
    metadata = {k: v for k, v in agent.metadata.items() if k not in RESERVED_AGENT_KEYS}
    metadata.update(
        run=Path(run_dir).name,
        lineage_epoch=str(entry.epoch),
        fitness_points=str(entry.points),
        games_per_epoch=str(config.games_per_epoch),
        simulations=str(simulations),
        **search_metadata(config.search, config.depth),
        seconds_per_move=str(config.seconds_per_move),
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_agent(out, agent.rules, agent.spec, agent.params, metadata)
    return out, entry
