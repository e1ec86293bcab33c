"""Protocol variants: configuration variants force their keys, every variant has rules, and the
fast bug variants break the invariant they are expected to break (the gate checks them all)."""
from __future__ import annotations

import pytest

from checker.search.run import explore
from checker.config import ConfigError, load_config, load_definition
from checker.selection import select_invariants
from model.interface import Variant, rules_of
from model.kraft.variants import VARIANTS as KRAFT_VARIANTS, Protocol
from model.replication.variants import VARIANTS as REPLICATION_VARIANTS, Rules


def test_every_replication_variant_has_rules_and_unknown_ones_are_refused() -> None:
    names = [v.name for v in load_definition("replication").variants]
    assert all(isinstance(Rules.of(n), Rules) for n in names)
    assert sum(Rules.of(n) == Rules() for n in names) == 5  # kafka-4.1 and the four configuration variants
    with pytest.raises(KeyError):
        Rules.of("no-such-variant")


@pytest.mark.parametrize("rules, variants", [(Rules, REPLICATION_VARIANTS), (Protocol, KRAFT_VARIANTS)])
def test_a_variant_is_declared_once_its_rules_are_its_switches_off(rules, variants) -> None:
    """VARIANTS is the one place: a variant's rules are Kafka 4.1's with exactly its switches_off
    turned off, and every switch of the rules class is turned off by some variant (none is dead)."""
    for v in variants:
        r = rules.of(v.name)
        assert {f for f in rules.__dataclass_fields__ if not getattr(r, f)} == set(v.switches_off), v.name
    assert set(rules.__dataclass_fields__) == {f for v in variants for f in v.switches_off}


def test_a_switch_the_rules_lack_is_refused() -> None:
    bad = (Variant("x", "y", switches_off=("check_lesso",)),)
    with pytest.raises(KeyError, match="turns off 'check_lesso', which is not a switch of Rules"):
        rules_of(Rules, bad, "x", "replication")


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
