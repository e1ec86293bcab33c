"""kcheck models: pure state machines of Kafka replication and KRaft.

`MODELS` maps a model name to the module that defines it; each such module has a
`DEFINITION: model.interface.ModelDefinition`. Modules are imported on first use. `EXTENDED`
holds a model's definition extended by plugins (model/extension.py), in force while it is there.
"""
from __future__ import annotations

import importlib

from model import compiled

compiled.install()  # before any compiled module can be imported

from model.interface import ModelDefinition  # noqa: E402

MODELS = {
    "replication": "model.replication",
    "kraft": "model.kraft",
}

EXTENDED: dict[str, ModelDefinition] = {}  # set by checker/plugin.py for `--plugin FILE`


def definition(name: str) -> ModelDefinition:
    """The definition of model `name`, as extended by the active plugins (KeyError when there is
    no such model)."""
    if name in EXTENDED:
        return EXTENDED[name]
    module = importlib.import_module(MODELS[name])
    return module.DEFINITION  # type: ignore[no-any-return]
