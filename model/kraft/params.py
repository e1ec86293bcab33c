"""Configuration keys and presets of the kraft model, and the derived parameters."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from model.interface import ConfigKey

CONFIG_KEYS = (
    ConfigKey("voters", int, 3, "number of voters (static voter set, node ids 0..voters-1)", 1, 5),
    ConfigKey("max_epoch", int, 2, "no transition may raise an epoch above this (elections are cut off)", 1, 8),
    ConfigKey("max_log", int, 2, "no log may grow beyond this many entries (LeaderChange records included)", 0, 8),
    ConfigKey("max_in_flight", int, 2, "messages (requests + responses) in flight at once", 1, 10),
    ConfigKey("message_loss", bool, True, "messages in flight may be lost (DropMessage)", None, None),
    ConfigKey("restarts", int, 1, "budget of crash-restarts that keep the disk", 0, 5),
    ConfigKey("disk_losses", int, 1, "budget of crash-restarts that lose the whole disk (log and quorum-state)", 0, 3),
    ConfigKey("partitions", int, 1, "budget of network links cut (a cut link holds its messages until healed)", 0, 5),
)

PRESETS: Mapping[str, Mapping[str, Any]] = {
    # Tiny, for unit tests: two voters, one election, one entry after the LeaderChange.
    "smoke": {"voters": 2, "max_epoch": 1, "max_log": 2, "max_in_flight": 1,
              "restarts": 0, "disk_losses": 0, "partitions": 0},
    # Three voters; every sometimes property reached and every action kind enabled.
    "default": {},
    # Raft Figure 8 (K1) needs four elections and an old-epoch entry replicated late:
    # one message at a time keeps the interleavings (and the space) small.
    "figure8": {"max_epoch": 4, "max_log": 2, "max_in_flight": 1, "message_loss": False,
                "restarts": 0, "disk_losses": 0, "partitions": 0},
    # Elections and commits without faults, for vote-without-log-check (K2).
    "elections": {"max_epoch": 2, "max_log": 1, "max_in_flight": 2, "message_loss": False,
                  "restarts": 0, "disk_losses": 0, "partitions": 0},
    # One election plus crash-restarts that keep the disk, for vote-not-persisted (K3).
    "restart": {"max_epoch": 1, "max_log": 1, "max_in_flight": 2, "message_loss": False,
                "restarts": 1, "disk_losses": 0, "partitions": 0},
    # One election plus a lost disk, for same-identity-after-disk-loss (K4).
    "disk-loss": {"max_epoch": 1, "max_log": 1, "max_in_flight": 2, "message_loss": False,
                  "restarts": 0, "disk_losses": 1, "partitions": 0},
}


@dataclass(frozen=True)
class Params:
    """The configuration, as the actions read it."""

    n: int
    max_epoch: int
    max_log: int
    max_in_flight: int
    message_loss: bool
    restarts: int
    disk_losses: int
    partitions: int

    @classmethod
    def from_config(cls, c: Mapping[str, Any]) -> "Params":
        return cls(
            n=c["voters"], max_epoch=c["max_epoch"], max_log=c["max_log"],
            max_in_flight=c["max_in_flight"], message_loss=c["message_loss"], restarts=c["restarts"],
            disk_losses=c["disk_losses"], partitions=c["partitions"],
        )

    @classmethod
    def defaults(cls, **overrides: Any) -> "Params":
        """The default configuration with some keys replaced (tests)."""
        config = {k.name: k.default for k in CONFIG_KEYS}
        config.update(overrides)
        return cls.from_config(config)
