"""Configuration keys and presets of the kraft model, and the derived parameters."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from model.interface import ConfigKey

CONFIG_KEYS = (
    ConfigKey("voters", int, 3, "number of voters (the bootstrap voter set, node ids 0..voters-1)", 1, 5),
    ConfigKey("max_epoch", int, 2, "no transition may raise an epoch above this (elections are cut off)", 1, 8),
    ConfigKey("max_log", int, 2, "no log may grow beyond this many entries (LeaderChange records included)", 0, 8),
    ConfigKey("max_in_flight", int, 2, "messages (requests + responses) in flight at once", 1, 10),
    ConfigKey("follower_hw", bool, True,
              "followers keep the HW the leader sends and Kafka's checks on it (false: only leaders hold an HW)",
              None, None),
    ConfigKey("stale_requests", bool, True,
              "requests a node sent before its last role change stay in flight (false: they are lost)",
              None, None),
    ConfigKey("symmetry", bool, True,
              "states that differ only by a renaming of the voters are one state (fingerprint of the"
              " least renaming)", None, None),
    ConfigKey("faults", int, 1, "budget of fault events of all kinds together (each kind also has its own)", 0, 10),
    ConfigKey("restarts", int, 1, "budget of crash-restarts that keep the disk", 0, 5),
    ConfigKey("disk_losses", int, 1, "budget of crash-restarts that lose the whole disk (log and quorum-state)", 0, 3),
    ConfigKey("partitions", int, 1, "budget of network links cut (no new request crosses a cut link until healed)", 0, 5),
    ConfigKey("losses", int, 1, "budget of messages lost in flight", 0, 10),
    ConfigKey("spares", int, 0,
              "nodes beyond the voters (ids voters..voters+spares-1), formatted as observers: AddVoter may"
              " make them voters (KIP-853)", 0, 2),
    ConfigKey("voter_changes", int, 0,
              "budget of voter set changes (AddVoter and RemoveVoter together, KIP-853); 0: a static voter set",
              0, 3),
    ConfigKey("timeouts", int, -1,
              "budget of timer expirations (election, fetch and check-quorum timeouts together); -1: no bound",
              -1, 30, special=((-1, "no bound"),)),
)

PRESETS: Mapping[str, Mapping[str, Any]] = {
    # Tiny, for unit tests: two voters, one election, one client record, no faults.
    "smoke": {"voters": 2, "max_epoch": 1, "max_log": 2, "max_in_flight": 1, "faults": 0},
    # Three voters, two epochs, LeaderChange + one record, one message in flight, one fault of
    # any kind and three timer expirations per run: every sometimes property reached, every
    # action kind enabled (sizes: spec/kraft.md, "Presets").
    "default": {"max_in_flight": 1, "follower_hw": False, "timeouts": 3},
    # The default without faults and without a bound on timer expirations.
    "no-faults": {"max_in_flight": 1, "follower_hw": False, "faults": 0},
    # commit-by-count (K1): four elections possible, one entry per log, no faults, five timer
    # expirations (the fewest Raft's Figure 8 needs with pre-vote).
    "figure8": {"max_epoch": 4, "max_log": 1, "max_in_flight": 1, "faults": 0, "timeouts": 5,
                "stale_requests": False, "follower_hw": False},
    # vote-without-log-check (K2): two elections, the LeaderChange record committed, no faults.
    "elections": {"max_epoch": 2, "max_log": 1, "max_in_flight": 1, "faults": 0},
    # no-check-quorum (K8, K9): two voters, two epochs, any one fault (a cut link isolates the
    # leader), timers unbounded so a fair cycle is not cut by their budget
    "isolated-leader": {"voters": 2, "max_epoch": 2, "max_log": 2, "max_in_flight": 1, "faults": 1,
                        "timeouts": -1},
    # no-pre-vote (K7): three voters, two epochs, a cut link as the only fault, two messages in
    # flight (a Vote must fit beside a follower's fetch) and two timer expirations: a voter cut
    # off from a healthy leader stands and reaches one of its followers.
    "rejoin": {"max_epoch": 2, "max_log": 1, "max_in_flight": 2, "follower_hw": False, "faults": 1,
               "restarts": 0, "disk_losses": 0, "partitions": 1, "losses": 0, "timeouts": 2},
    # vote-not-persisted (K3): one election, two messages in flight, crash-restarts.
    "restart": {"max_epoch": 1, "max_log": 1, "max_in_flight": 2, "stale_requests": False,
                "follower_hw": False, "faults": 1, "restarts": 1, "disk_losses": 0, "partitions": 0,
                "losses": 0},
    # same-identity-after-disk-loss (K4): one election and one lost disk.
    "disk-loss": {"max_epoch": 1, "max_log": 1, "max_in_flight": 1, "faults": 1, "restarts": 0,
                  "disk_losses": 1, "partitions": 0, "losses": 0},
    # Five voters, two elections (two timer expirations), LeaderChange + one record, no faults:
    # a majority of 3 and the HW as the third-largest end offset, where a threshold or index that
    # is right for three voters (two votes, the second-largest offset) commits or elects on 2.
    "five-voters": {"voters": 5, "max_epoch": 2, "max_log": 2, "max_in_flight": 1, "faults": 0,
                    "timeouts": 2},
    # Three epochs over two-entry logs, followers keeping the HW, no faults, four timer
    # expirations: diverging-epoch answers that name an epoch other than the last fetched one, and
    # a lost pre-vote that must keep the vote of its epoch.
    "three-epochs": {"max_epoch": 3, "max_log": 2, "max_in_flight": 1, "faults": 0, "timeouts": 4},
    # Two messages in flight, requests sent before a role change still delivered, two epochs, no
    # faults, three timer expirations: a request of an older epoch (BeginQuorumEpoch, Vote, Fetch)
    # arriving after the receiver moved on, and a new request while a response is in flight.
    "stale-requests": {"max_epoch": 2, "max_log": 1, "max_in_flight": 2, "faults": 0, "timeouts": 3},
    # Dynamic voters (KIP-853): two voters and one spare node, two voter changes, two epochs, room
    # for four entries, no faults, three timer expirations: a spare added and then elected, a voter
    # (the leader too) removed, a removed leader resigning.
    "reconfig": {"voters": 2, "spares": 1, "voter_changes": 2, "max_epoch": 2, "max_log": 4, "max_in_flight": 1,
                 "faults": 0, "timeouts": 3},
    # overlapping-voter-changes (K10): three voters and two spares, two voter changes, two epochs,
    # no faults, two timer expirations, room for every message of the story. The gate searches it
    # by rounds (spec/kraft.md, "Rounds").
    "two-additions": {"voters": 3, "spares": 2, "voter_changes": 2, "max_epoch": 2, "max_log": 3,
                      "max_in_flight": 10, "faults": 0, "timeouts": 2},
    # voter-change-before-hw (K5): four voters and two voter changes over three epochs, no faults,
    # five timer expirations, room for the messages of two elections at once. Beyond exhaustive
    # search (about 2.5 times more states a level past depth 12; the bug needs 31 steps): the gate
    # searches it by rounds, where K5 is 7 deep (spec/gate.toml, spec/kraft.md).
    "voter-race": {"voters": 4, "voter_changes": 2, "max_epoch": 3, "max_log": 3, "max_in_flight": 10,
                   "faults": 0, "timeouts": 5},
    # Dynamic voters at their checks (KIP-853): two voters and one spare, three voter changes, one
    # election (one timer expiration), room for five entries, no faults: AddVoter and RemoveVoter
    # offered again and again against each of the leader's checks (no HW of its epoch yet, the
    # last VotersRecord uncommitted, the spare not caught up, an id already a voter, an id not a
    # voter). Small enough that the walks of `kcheck conform` hit each check several times where
    # the larger dynamic presets do once or twice (docs/conform.md, "Which model branches the
    # walks reach").
    "voter-checks": {"voters": 2, "spares": 1, "voter_changes": 3, "max_epoch": 1, "max_log": 5,
                     "max_in_flight": 1, "faults": 0, "timeouts": 1},
}


@dataclass(frozen=True)
class Params:
    """The configuration, as the actions read it."""

    n: int
    max_epoch: int
    max_log: int
    max_in_flight: int
    stale_requests: bool
    follower_hw: bool
    symmetry: bool
    faults: int
    restarts: int
    disk_losses: int
    partitions: int
    losses: int
    timeouts: int = -1
    spares: int = 0
    voter_changes: int = 0

    @property
    def voters(self) -> int:
        """The bootstrap voter count (the voter set `kafka-storage format` writes)."""
        return self.n - self.spares

    @property
    def bootstrap(self) -> int:
        """The bootstrap voter set, a bitmask of node ids."""
        return (1 << self.voters) - 1

    @property
    def dynamic(self) -> bool:
        """Whether the voter set can change or any node starts outside it."""
        return self.spares > 0 or self.voter_changes > 0

    @classmethod
    def from_config(cls, c: Mapping[str, Any]) -> "Params":
        return cls(
            n=c["voters"] + c.get("spares", 0), max_epoch=c["max_epoch"], max_log=c["max_log"],
            max_in_flight=c["max_in_flight"], stale_requests=c["stale_requests"],
            follower_hw=c["follower_hw"], symmetry=c["symmetry"], faults=c["faults"], restarts=c["restarts"],
            disk_losses=c["disk_losses"], partitions=c["partitions"], losses=c["losses"],
            timeouts=c["timeouts"], spares=c.get("spares", 0), voter_changes=c.get("voter_changes", 0),
        )

    @classmethod
    def defaults(cls, **overrides: Any) -> "Params":
        """The default configuration with some keys replaced (tests)."""
        config = {k.name: k.default for k in CONFIG_KEYS}
        config.update(overrides)
        return cls.from_config(config)
