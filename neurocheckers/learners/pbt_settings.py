"""PBT's settings (``learners.pbt``): the TD learner's and the ``pbt`` section's, in a module of their
own so that the tournament (``pbt_tournament``) and PBT itself both read them."""

from __future__ import annotations

import dataclasses

from neurocheckers.learners.td_lambda import TDSettings
from neurocheckers.sections import PBTSectionSettings

__all__ = ["PBTSettings"]


@dataclasses.dataclass(frozen=True)
class PBTSettings(PBTSectionSettings, TDSettings):
    """PBT's settings: the TD learner's (the members' starting hyperparameters among them) and the
    ``pbt`` section's."""

    @property
    def records_leaves(self) -> bool:
        return self.member_learner == "td_leaf"

    @property
    def depth_evolves(self) -> bool:
        """Whether the members' alpha-beta depth is a hyperparameter (``max_depth`` > 0)."""
        return self.max_depth > 0

    @property
    def min_depth(self) -> int:
        """The shallowest depth a member explores to: 2 for TDLeaf (whose leaves need a reply), else 1."""
        return 2 if self.records_leaves else 1

    @property
    def width_evolves(self) -> bool:
        """Whether the members' MLP width is a hyperparameter (``min_width`` > 0)."""
        return self.min_width > 0
