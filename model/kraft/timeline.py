"""How a kraft trace draws as a space-time diagram (checker/page.py): one lane per voter and one
for the client, the lane each action happens on, the messages in flight, the faults. Pure
functions of an action (kind and fields, as parsed from its repr) and of JSON states."""
from __future__ import annotations

from typing import Any

CLIENT = "client"

FAULTS = frozenset({"Restart", "DiskLoss", "CutLink", "DropMessage"})


def voter(i: int) -> str:
    return f"voter {i}"


def lanes(state: dict[str, Any]) -> list[str]:
    return [voter(i) for i in range(len(state["nodes"]))] + [CLIENT]


def action_lane(kind: str, fields: dict[str, Any]) -> str:
    """The process an action happens at: a delivery at its receiver, a send at its sender."""
    if kind.startswith("Handle") or kind == "DropMessage":
        return voter(fields["dst"])
    for key in ("node", "src", "a"):
        if key in fields:
            return voter(fields[key])
    return voter(0)


def instant_arrows(kind: str, fields: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """Interactions drawn within the step: (from lane, to lane, label, whether it is a fault)."""
    if kind == "ClientAppend":
        return [(CLIENT, voter(fields["node"]), "append", False)]
    if kind in ("CutLink", "HealLink"):
        return [(voter(fields["a"]), voter(fields["b"]), "link cut" if kind == "CutLink" else "link healed",
                 kind == "CutLink")]
    return []


def messages(state: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The messages in flight: (identity, from lane, to lane, label). `live` is left out of the
    identity: a request whose sender moved on is the same message, still in flight."""
    return [(f"{sorted((k, v) for k, v in m.items() if k != 'live')!r}", voter(m["src"]), voter(m["dst"]),
             m["message"]) for m in state.get("network", [])]


def views(state: dict[str, Any]) -> dict[str, str]:
    """Where in the state each lane's table reads (a path); the other variables show apart."""
    return {voter(i): f"nodes[{i}]" for i in range(len(state["nodes"]))}
