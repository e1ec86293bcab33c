"""The `kraft` model: the KRaft metadata quorum of Kafka 4.1 (raft module), N voters.

Vote with pre-vote (KIP-996), check quorum, BeginQuorumEpoch, pull-based Fetch with diverging-
epoch truncation, the KRaft HW rule and the LeaderChange record, restarts with persisted state,
disk loss with KIP-853 directory ids, dynamic voter sets (KIP-853). See spec/kraft.md.
"""
from __future__ import annotations

from model.interface import ModelDefinition
from model.kraft import liveness
from model.kraft.model import KraftModel
from model.kraft.params import CONFIG_KEYS, PRESETS, Params
from model.kraft.properties import properties
from model.kraft.variants import VARIANTS, Protocol

DEFINITION = ModelDefinition(
    name="kraft",
    description="Kafka 4.1 KRaft quorum: pre-vote, check quorum, Fetch with divergence, KRaft HW, restarts",
    config_keys=CONFIG_KEYS,
    presets=PRESETS,
    variants=VARIANTS,
    build=lambda config, variant: KraftModel(config, variant),
    # The default's properties, then those only a voter change budget and a spare declare.
    invariants=tuple({
        p.name: (p.name, p.kind, p.description)
        for params in (Params.defaults(spares=1, voter_changes=1), Params.defaults())
        for p in properties(params, Protocol()) + liveness.properties(params, Protocol())
    }.values()),
    # The protocol's code path: not the properties (the oracle), the variants, the fairness and
    # timing of the liveness model, the symmetry reduction or the rendering.
    mutation_targets=(
        "model.kraft.rules", "model.kraft.context", "model.kraft.quorum", "model.kraft.requests", "model.kraft.client",
        "model.kraft.network",
        "model.kraft.faults", "model.kraft.model:KraftModel.actions", "model.kraft.model:KraftModel.next_state",
        "model.kraft.state:Node.leo", "model.kraft.state:Node.is_leader",
    ),
)
