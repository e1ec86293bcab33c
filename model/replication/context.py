"""What every action reads besides the state: the parameters and the variant's rules."""
from __future__ import annotations

from dataclasses import dataclass

from model.replication.params import Params
from model.replication.variants import Rules


@dataclass(frozen=True)
class Context:
    p: Params
    r: Rules
