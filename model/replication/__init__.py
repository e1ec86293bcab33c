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
)
