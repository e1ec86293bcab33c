"""What a whole `kcheck check` of a shipped preset is expected to cost: said before a long run
starts (with the way to a verdict in seconds), and the whole run's state count that the
progress line measures the remaining work against. The counts are Kafka 4.1's on the preset's
own configuration, with the stutter reduction: spec/replication.md and docs/performance.md give
the same figures, and tests/test_expected.py checks them (the small ones in the fast tier, the
others in the slow one)."""
from __future__ import annotations

from typing import Optional

from checker.config import RunConfig, load_config

WHOLE_RUN = {  # (model, preset) -> distinct states of the whole run
    ("replication", "default"): 5_430_858,
    ("replication", "one-crash"): 281_386,
    ("replication", "smoke"): 56_775,
    ("kraft", "default"): 334_937,
    ("kraft", "smoke"): 515,
}
# Distinct states a second of a compiled install on a 2-core 24 GiB machine, one or two workers,
# whatever the size: the slowest and the fastest measured (docs/performance.md, "How the cost grows").
RATE = (8_000, 67_000)
LONG = 60.0  # seconds: a run that may take longer is announced


def whole_run_states(rc: RunConfig, reduce: bool = True) -> Optional[int]:
    """The distinct states of a whole run of this configuration, when it is a measured one."""
    if not reduce or rc.variant != rc.definition.variants[0].name:
        return None
    known = WHOLE_RUN.get((rc.model, rc.preset))
    if known is None or dict(rc.config) != dict(load_config(model=rc.model, preset=rc.preset).config):
        return None
    return known


def minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def announcement(rc: RunConfig, states: int, compiled: bool) -> str:
    """The line said before a run of `states` states that may take more than LONG seconds, or ''."""
    fast, slow = states / RATE[1], states / RATE[0]
    if slow < LONG:
        return ""
    model = "" if rc.model == "replication" else f" --model {rc.model}"
    text = (f"this run explores {states:,} states (a whole run of {rc.model} preset {rc.preset}): about"
            f" {minutes(fast)} to {minutes(slow)} at the {RATE[0]:,} to {RATE[1]:,} states a second"
            " compiled installs have made on 2 cores (docs/performance.md)")
    if not compiled:
        text += "; this install runs uncompiled, slower"
    return text + f"; for a verdict in seconds: kcheck check{model} --preset smoke"


def remaining(distinct: int, seconds: float, total: int) -> str:
    """The progress line's estimate of the work left, at the rate so far: '' past the total."""
    if distinct >= total or seconds <= 0 or distinct <= 0:
        return ""
    left = (total - distinct) / (distinct / seconds)
    return f", {100 * distinct / total:.0f}% of {total:,} states, about {minutes(left)} left (estimate)"
