"""A fixed schedule of actions replayed on a model: the gate's `schedule` rows.

Some bugs lie beyond exhaustive search (K5 needs four voters, three elections and about thirty
steps, where the space grows about 2.5 times a level). A schedule row keeps such a story in the
gate: the variant must follow it to a violation of the row's invariant, and Kafka 4.1 must either
refuse one of its steps or follow it without a violation. A schedule is checked, not found: a
passing schedule row says nothing about other interleavings.

Each step is an action's repr (`RemoveVoter(leader=2, node=0)`), matched, spaces aside, against
the reprs of the actions the model enables in the current state, so the model knows of no
schedule (it is driven through `actions` and `next_state` only). Every invariant is evaluated in
every state, the initial one included.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass
class ScheduleRun:
    """How far a schedule went: the (action, state) trace followed, the step refused (its index
    from 1 and its text) if any, and the first invariant violated (name, description) if any."""

    trace: list[tuple[Any, Any]]
    refused_at: int | None = None
    refused: str = ""
    violated: tuple[str, str] | None = None


def squeeze(action: str) -> str:
    """An action repr without blanks, so a hand-written `Crash(broker = 0)` names `Crash(broker=0)`
    (the models' action parameters are ints, bools and tuples: no blank is significant)."""
    return "".join(action.split())


def kind_of(action: str) -> str:
    """The action kind an action repr names (`Crash` for `Crash(broker=0)`)."""
    return action.split("(", 1)[0].strip()


def _violated(model: Any, state: Any) -> tuple[str, str] | None:
    for p in model.properties:
        if p.kind == "always" and not p.predicate(state):
            return p.name, p.description
    return None


def replay_schedule(model: Any, steps: Sequence[str]) -> ScheduleRun:
    """Follow `steps` from the model's initial state until a step is refused, an invariant
    fails, or the schedule ends."""
    inits = model.init_states()
    if len(inits) != 1:
        raise ValueError(f"a schedule needs a model with one initial state; this configuration has {len(inits)}")
    state = inits[0]
    run = ScheduleRun([(None, state)], violated=_violated(model, state))
    for index, text in enumerate(steps, start=1):
        if run.violated is not None:
            break
        wanted = squeeze(text)
        action = next((a for a in model.actions(state) if squeeze(repr(a)) == wanted), None)
        successor = model.next_state(state, action) if action is not None else None
        if successor is None:
            run.refused_at, run.refused = index, text
            break
        state = successor
        run.trace.append((action, state))
        run.violated = _violated(model, state)
    return run
