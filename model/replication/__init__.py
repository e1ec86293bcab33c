"""The `replication` model: one Kafka 4.1 partition, its controller, brokers, network and producer."""
from __future__ import annotations

from model.interface import ModelDefinition
from model.replication.model import ReplicationModel
from model.replication.params import CONFIG_KEYS, PRESETS, clamps
from model.replication.variants import VARIANTS

DEFINITION = ModelDefinition(
    name="replication",
    description="Kafka 4.1 partition replication: ISR, HW, leader epochs, AlterPartition, ELR, fencing",
    config_keys=CONFIG_KEYS,
    presets=PRESETS,
    variants=VARIANTS,
    build=lambda config, variant: ReplicationModel(config, variant),
    clamps=clamps,
    # The protocol's code path: not the properties (the oracle), the variants, the liveness
    # model, the stutter reduction or the rendering.
    mutation_targets=(
        "model.replication.partition", "model.replication.broker_actions", "model.replication.controller",
        "model.replication.controller_actions", "model.replication.fault_actions",
        "model.replication.model:initial_state", "model.replication.model:ReplicationModel.actions",
        "model.replication.model:ReplicationModel.next_state", "model.replication.state:Broker.maximal_isr",
        "model.replication.state:Broker.leo", "model.replication.state:Controller.partition",
        "model.replication.state:Controller.record", "model.replication.state:with_message",
        "model.replication.state:without_message",
    ),
)
