"""How a replication trace draws as a space-time diagram (checker/page.py): one lane per process,
the lane each action happens on, the messages in flight and who sends them to whom, the faults.
Pure functions of an action (its kind and fields, as parsed from its repr) and of states in their
JSON rendering, so that a trace read from an ITF file draws as well as one just found."""
from __future__ import annotations

from typing import Any

CONTROLLER, PRODUCER = "controller", "producer"

FAULTS = frozenset({"Crash", "LossyCrash", "ControlledShutdown", "DropMessage", "Restart"})
# FenceBroker is a fault only for a live broker (a dead one's session expires): drawn as a controller step

# state key -> (message label, field naming the sender's broker or None for the controller,
#               field naming the receiver's broker or None for the controller)
CHANNELS = {
    "fetch_requests": ("Fetch", "follower", "leader"),
    "fetch_responses": ("FetchResponse", "leader", "follower"),
    "ap_requests": ("AlterPartition", "leader", None),
    "ap_responses": ("AlterPartitionResponse", None, "leader"),
}


def broker(b: int) -> str:
    return f"broker {b}"


def lanes(state: dict[str, Any]) -> list[str]:
    return [CONTROLLER] + [broker(b) for b in range(len(state["brokers"]))] + [PRODUCER]


def _lane(x: Any) -> str:
    return CONTROLLER if x is None else broker(x)


def action_lane(kind: str, fields: dict[str, Any]) -> str:
    """The process an action happens at."""
    if kind in ("FenceBroker", "UnfenceBroker", "HandleAlterPartition"):
        return CONTROLLER
    if kind == "HandleFetch":
        return broker(fields["request"]["leader"])
    if kind == "HandleFetchResponse":
        return broker(fields["response"]["follower"])
    if kind == "HandleAlterPartitionResponse":
        return broker(fields["response"]["leader"])
    if kind == "DropMessage":
        return CONTROLLER if "new_isr" in fields["message"] else broker(fields["message"]["leader"])
    for key in ("broker", "follower", "leader"):
        if key in fields:
            return broker(fields[key])
    return CONTROLLER


def instant_arrows(kind: str, fields: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """Interactions drawn within the step: (from lane, to lane, label, whether it is a fault)."""
    if kind == "Produce":
        return [(PRODUCER, broker(fields["leader"]), f"produce {fields['value']}", False)]
    if kind == "ReplayMetadata":
        return [(CONTROLLER, broker(fields["broker"]), "metadata", False)]
    if kind in ("FenceBroker", "UnfenceBroker"):
        return [(CONTROLLER, broker(fields["broker"]), "fenced" if kind == "FenceBroker" else "unfenced",
                 kind == "FenceBroker")]
    if kind == "ControlledShutdown":
        return [(broker(fields["broker"]), CONTROLLER, "shutdown", True)]
    return []


def messages(state: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The messages in flight: (identity, from lane, to lane, label)."""
    out = []
    for key, (label, src, dst) in CHANNELS.items():
        for m in state.get(key, []):
            out.append((f"{key}:{sorted(m.items())!r}", _lane(m.get(src) if src else None),
                        _lane(m.get(dst) if dst else None), label))
    return out


def views(state: dict[str, Any]) -> dict[str, str]:
    """Where in the state each lane's table reads (a path); the other variables show apart."""
    out = {CONTROLLER: "controller"}
    for b in range(len(state["brokers"])):
        out[broker(b)] = f"brokers[{b}]"
    return out
