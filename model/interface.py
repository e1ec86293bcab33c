"""The one interface every engine sees a model through (Stateright's `Model`, TLA+'s Init/Next).

A model package exposes a module-level `DEFINITION: ModelDefinition`. The checker builds a
`Model` from a validated config and a variant name and then uses only the methods below.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Mapping, Protocol, Sequence

State = Hashable
Action = Hashable  # a NamedTuple whose repr is valid Python, e.g. Fetch(follower=2)


TEMPORAL = ("eventually", "leads_to", "always_eventually", "timely_invariant")


@dataclass(frozen=True)
class Property:
    """A named pure predicate over states: `always` must hold in every reachable state,
    `sometimes` must hold in at least one (a vacuity guard).

    The temporal kinds hold of every fair behaviour (see `Fairness`): `eventually` (<>P: P
    holds in some state of it), `leads_to` (P ~> Q: every state where `predicate` holds is
    followed, there or later, by one where `target` holds) and `always_eventually` ([]<>P).
    `timely_invariant` is []P over the behaviours of the model's liveness model (where time is
    not adversarial: timers expire only when their cause holds), with `target` its vacuity guard:
    it fails as unreached when no state of that model meets it."""

    name: str
    kind: str  # "always" | "sometimes" | one of TEMPORAL
    predicate: Callable[[Any], bool]
    description: str = ""
    target: Callable[[Any], bool] | None = None  # leads_to's Q; timely_invariant's vacuity guard
    # The state's fields (attribute names) `predicate` reads, when it reads nothing else: the
    # search then takes an `always` property as holding on a successor whose fields are the very
    # objects (identity) of its parent's, which it checked (states are immutable), and, when every
    # invariant names its fields, all of them as holding on a state whose fields there equal those
    # of a state that passed. () = unknown.
    reads: tuple[str, ...] = ()

    @property
    def temporal(self) -> bool:
        return self.kind in TEMPORAL


def always(name: str, predicate: Callable[[Any], bool], description: str = "", reads: tuple[str, ...] = ()) -> Property:
    return Property(name, "always", predicate, description, reads=reads)


def sometimes(name: str, predicate: Callable[[Any], bool], description: str = "") -> Property:
    return Property(name, "sometimes", predicate, description)


def eventually(name: str, predicate: Callable[[Any], bool], description: str = "") -> Property:
    """<>P: every fair behaviour reaches a state where P holds."""
    return Property(name, "eventually", predicate, description)


def leads_to(name: str, p: Callable[[Any], bool], q: Callable[[Any], bool], description: str = "") -> Property:
    """P ~> Q: in every fair behaviour, a state where P holds is followed (there or later) by Q."""
    return Property(name, "leads_to", p, description, q)


def always_eventually(name: str, predicate: Callable[[Any], bool], description: str = "") -> Property:
    """[]<>P: in every fair behaviour P holds again and again (never false from some point on)."""
    return Property(name, "always_eventually", predicate, description)


def timely_invariant(name: str, predicate: Callable[[Any], bool], guard: Callable[[Any], bool],
                     description: str = "") -> Property:
    """[]P in every behaviour of the liveness model: for what only holds when time is not
    adversarial (a healthy leader is not deposed). Checked by the liveness pass; unreached when
    `guard` (the states where P says something) holds nowhere."""
    return Property(name, "timely_invariant", predicate, description, guard)


@dataclass(frozen=True)
class Footprint:
    """What one group of actions reads and writes, for partial-order reduction (the checker's
    `--por`): sets of *locations*, parts of the state named by the model (one field of one broker,
    the messages in flight on one channel). The group's enabledness and effect are functions of
    the locations in `reads` (and the configuration); it changes no location outside `writes`.
    A capacity (a count of several locations, as the messages in flight that a bound limits) is
    declared apart: `reads_capacity`, a guard compares it with its bound (so raising it may
    disable the action, lowering it only enable); `effect_capacity`, the effect depends on it too;
    `takes`, the action may raise it; `frees`, it may lower it. `resets`: locations the action only sets to their
    reset value (a per-step ghost such as kraft's `last_event`), which commute with each other.
    `guard`: the locations its enabledness depends on, when fewer than `reads`."""

    reads: frozenset
    writes: frozenset
    takes: frozenset = frozenset()
    frees: frozenset = frozenset()
    reads_capacity: frozenset = frozenset()
    resets: frozenset = frozenset()
    # capacities the effect (not only the guard) depends on, e.g. "send a second message if there is room"
    effect_capacity: frozenset = frozenset()
    # The locations the group's enabledness depends on (None: `reads`): what an action must
    # write to enable it. Declared apart where the guard reads much less than the effect.
    guard: frozenset | None = None

    @property
    def enabling(self) -> frozenset:
        return self.reads if self.guard is None else self.guard


@dataclass(frozen=True)
class Fairness:
    """Fairness of one action kind, as TLA+'s WF/SF, for each action value (kind and parameters)
    separately: weak, an action continuously enabled from some point on is taken; strong, an
    action enabled infinitely often is taken. `when(state, action)` narrows it to the states
    where the Kafka mechanism named in `reason` (a retry, a timer) really forces it; the action
    stays possible elsewhere, only not fair. Faults are never fair."""

    action: str  # an action kind
    strength: str  # "weak" | "strong"
    reason: str
    when: Callable[[Any, Any], bool] | None = None


def weak_fairness(action: str, reason: str, when: Callable[[Any, Any], bool] | None = None) -> Fairness:
    return Fairness(action, "weak", reason, when)


def strong_fairness(action: str, reason: str, when: Callable[[Any, Any], bool] | None = None) -> Fairness:
    return Fairness(action, "strong", reason, when)


@dataclass(frozen=True)
class ConfigKey:
    """One configuration key: its type (int or bool), default and allowed range; `special`:
    values that stand for something else (0 replicas: every broker), as the config echo says."""

    name: str
    type: type
    default: Any
    doc: str
    min: int | None = None
    max: int | None = None
    special: tuple[tuple[Any, str], ...] = ()


@dataclass(frozen=True)
class Variant:
    """A protocol variant. `expect` is the invariant it must break, or "holds"."""

    name: str
    description: str
    expect: str = "holds"
    bug_id: str = ""
    reference: str = ""
    preset: str = "default"  # the configuration on which the expectation is checked
    # config values the variant forces (a configuration, not a code change, e.g. ELR off)
    settings: tuple[tuple[str, Any], ...] = ()
    # the invariants the expectation is checked with (empty: all); for a story that another
    # invariant would pre-empt (`kcheck check --invariant`)
    invariants: tuple[str, ...] = ()
    # the model's rule switches (fields of its rules class, True = Kafka 4.1) this variant turns
    # off: the one place a variant's rules are declared (`rules_of`)
    switches_off: tuple[str, ...] = ()


def rules_of(rules: type, variants: Sequence[Variant], name: str, model: str) -> Any:
    """The rules a variant runs under: `rules` (a frozen dataclass of bool switches, all True by
    default) with the variant's `switches_off` turned off. An unknown name, or a switch the
    rules class lacks, raises KeyError."""
    known = {v.name: v for v in variants}
    if name not in known:
        raise KeyError(f"unknown {model} variant {name!r}; known: {', '.join(known)}")
    fields = rules.__dataclass_fields__
    off = known[name].switches_off
    for switch in off:
        if switch not in fields:
            raise KeyError(f"{model} variant {name!r} turns off {switch!r}, which is not a switch of {rules.__name__}")
    return rules(**{switch: False for switch in off})


class Model(Protocol):
    """What an engine may call. Action order from `actions` must be deterministic."""

    name: str
    variant: str
    config: Mapping[str, Any]
    properties: Sequence[Property]
    action_kinds: Sequence[str]  # every action name the model can produce, for coverage

    def init_states(self) -> list[Any]: ...

    def actions(self, state: Any) -> Iterable[Any]: ...

    def next_state(self, state: Any, action: Any) -> Any | None: ...

    def encode(self, state: Any) -> bytes:
        """Canonical bytes of a state: equal states give equal bytes in every process."""
        ...

    def to_json(self, state: Any) -> dict[str, Any]:
        """A JSON-able rendering of a state: variable name -> plain value."""
        ...

    # Optional: `disabled_actions() -> dict[str, str]`, the action kinds this configuration
    # switches off entirely (e.g. a fault budget of 0), each with the reason. Coverage reports
    # them apart from the kinds that were possible but never enabled.
    # Optional: `reduce(state) -> state` with a `reduction: str` describing it: a stutter
    # reduction for the exhaustive checker. `reduce(s)` must be reachable from `s` by steps that
    # change no property's value, commute with every other action and never disable one, so
    # exploring only reduced states reaches a representative of every reachable state, with the
    # same property values, in at most as many steps. `kcheck check --no-reduce` explores without it.
    # Optional, for temporal properties: `fairness: Sequence[Fairness]`; `bound_blocked(state)
    # -> list[(action, bound)]`, the fair actions that a bound of the configuration (and nothing
    # else) keeps disabled in `state`, each with the config key; `liveness_model() -> Model`, the
    # model the liveness pass explores when it differs (e.g. without a symmetry reduction, which
    # would mix up the actions of different voters).
    # Optional: `glossary: Mapping[str, str]`, field name -> meaning, for the terse names of
    # `to_json` (`meta`, `leso`, `hw`, ...): a counterexample's text ends with one `legend:` line
    # per entry whose name appears in its initial state or in a printed change.
    # Optional: `explanations: Mapping[str, Callable[[State], str]]`, invariant name -> a pure
    # function naming the concrete broker/offset/value/epoch that breaks it in a state where it
    # fails ("" when it cannot tell), computed from the state: the counterexample's last line
    # appends it after the invariant's description.
    # Optional: `rounds(state) -> Iterable[Sequence[(action, state)]]`: coarse steps, each a run of
    # this model's own `next_state` steps from `state` (every action enabled where it is taken),
    # which the round search (checker/rounds.py, a gate row's `rounds`) explores in place of
    # single actions, for stories too deep for them.
    # Optional, for partial-order reduction (`kcheck check --por`): `footprints` with
    # `group_of(action) -> key`, `groups() -> list of keys` (every group the configuration can
    # produce), `footprint(key) -> Footprint`, and `property_footprints() -> {invariant: locations}`
    # (what each `always` property reads, in the footprints' locations); `locations`, `get(state,
    # loc)`, `put(state, loc, value)`, `capacity(state) -> {capacity: count}` and `settled(state)`
    # let tests/test_footprints.py check the declarations on reachable states.
    # Optional: `abstraction(state) -> value`, a coarse, pure view of a state made of ints, strings
    # and tuples (ordered, process-stable repr), that `kcheck simulate --guided` uses in place of
    # its default (enabled action kinds, sometimes-properties holding) in a state's abstract cell.


@dataclass(frozen=True)
class ModelDefinition:
    """What a model package declares: its config keys, presets, variants and constructor."""

    name: str
    description: str
    config_keys: Sequence[ConfigKey]
    presets: Mapping[str, Mapping[str, Any]]  # preset name -> values overriding defaults
    variants: Sequence[Variant]  # the first is the unmodified protocol, "kafka-4.1"
    build: Callable[[Mapping[str, Any], str], Model]
    invariants: Sequence[tuple[str, str, str]] = field(default_factory=tuple)  # (name, kind, description)
    # config -> {key: (value the model uses, why)} for the keys it clamps as Kafka does
    clamps: Callable[[Mapping[str, Any]], Mapping[str, tuple[Any, str]]] | None = None
    # The code `kcheck mutate` makes mistakes in: "module" (all its functions) or "module:function"
    # (a function or method and what it nests). Empty: the module that defines the model.
    mutation_targets: Sequence[str] = field(default_factory=tuple)


def action_name(action: Any) -> str:
    return type(action).__name__
