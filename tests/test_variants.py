"""Protocol variants: configuration variants force their keys, every variant has rules, and the
fast bug variants break the invariant they are expected to break (the gate checks them all)."""
from __future__ import annotations

import pytest

from checker.search.run import explore
from checker.config import ConfigError, load_config, load_definition
from checker.selection import select_invariants
from model.replication.variants import Rules


def test_every_replication_variant_has_rules_and_unknown_ones_are_refused() -> None:
    names = [v.name for v in load_definition("replication").variants]
    assert all(isinstance(Rules.of(n), Rules) for n in names)
    assert sum(Rules.of(n) == Rules() for n in names) == 5  # kafka-4.1 and the four configuration variants
    with pytest.raises(KeyError):
        Rules.of("no-such-variant")


def test_configuration_variant_forces_its_key() -> None:
    rc = load_config(model="replication", variant="no-elr")
    assert rc.config["elr_enabled"] is False
    assert load_config(model="replication", variant="no-elr", overrides=["elr_enabled=false"]).config["elr_enabled"] is False
    with pytest.raises(ConfigError, match="variant no-elr sets elr_enabled = false"):
        load_config(model="replication", variant="no-elr", overrides=["elr_enabled=true"])
    assert load_config(model="replication", variant="unclean-election").config["unclean_leader_election"] is True


def test_selected_invariants_keep_every_sometimes_property() -> None:
    model = load_config(model="replication", preset="smoke").build()
    only = select_invariants(model, ["log_matching"])
    kinds = [(p.name, p.kind) for p in only.properties]
    assert [n for n, k in kinds if k == "always"] == ["log_matching"]
    assert [n for n, k in kinds if k == "sometimes"] == [p.name for p in model.properties if p.kind == "sometimes"]
    assert only.init_states() == model.init_states()
    with pytest.raises(ConfigError, match="unknown invariant nope"):
        select_invariants(model, ["nope"])


@pytest.mark.parametrize("variant", ["hw-without-maximal-isr", "fenced-may-join-isr", "unclean-election",
                                     "record-fetch-on-divergence"])
def test_fast_bug_variant_breaks_its_invariant_on_its_preset(variant: str) -> None:
    v = next(v for v in load_definition("replication").variants if v.name == variant)
    r = explore(load_config(model="replication", variant=variant, preset=v.preset).build(), workers=1)
    assert r.result == "violation"
    assert r.violation["invariant"] == v.expect
