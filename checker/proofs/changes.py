"""A plugin's variant in `kcheck prove` (docs/change.md, "Prove it"): which Change the run's
variant is, and where a proof of it cannot be given."""
from __future__ import annotations

import argparse
from typing import Any

from checker.config import ConfigError, RunConfig


def plugin_change(rc: RunConfig) -> Any:
    """The plugin's Change when the run's variant is a plugin's (model/extension.py), else None."""
    from checker import plugin

    for p in plugin.active():
        for change in p.extension.changes:
            if p.extension.model == rc.model and change.variant.name == rc.variant:
                return change
    return None


def plugin_refusal(args: argparse.Namespace, rc: RunConfig) -> None:
    """A plugin's variant is proved on the relation derived from the model's Python with the
    change in force, which exists at a fixed size only (replication: for induction only)."""
    if plugin_change(rc) is None:
        return
    why = None
    if args.size == "any":
        why = "the every-size encoding is written by hand and does not follow a plugin; give a fixed --size N"
    elif args.bmc and rc.model != "kraft":
        why = ("replication's bounded model checking runs on the hand-written relation, which does not follow a "
               "plugin; drop --bmc")
    if why is not None:
        raise ConfigError(f"--plugin: variant {rc.variant}: {why}; check the change with kcheck check")
