"""Trace validation, the other direction: the real KafkaRaftClient nodes run under a seeded random
simulation (which message is delivered or lost, which node's timer expires, restarts, client
appends), as Kafka's RaftEventSimulationTest runs them, and what they do is recorded as an ITF
trace of observed variables that `kcheck replay` checks: every step the real code takes must be a
step the model allows.

The simulation chooses among the events the real system offers; the model is not consulted. It
keeps to the configuration's bounds (epochs, log length, fault budgets) so that a behaviour the
model cuts off is not mistaken for a difference, and the network follows the model's bounded
network: the requests a node makes in one step go out together when they fit in flight, else
each waits for a send event. Each state records, per node, the role, epoch, leader, log, HW and
(Unattached, Candidate) the vote; the messages in flight are left to the replay to find.
"""
from __future__ import annotations

import random
from typing import Any

from checker.conform import kraft as K
from checker.conform.adapter import exception_line
from model.kraft import actions as A
from model.kraft.rules import CANDIDATE, FOLLOWER, LEADER, NO_ID, PROSPECTIVE, RESIGNED, ROLE_NAMES, UNATTACHED
from model.kraft.state import BQE_REQUEST, FETCH_REQUEST, REQUESTS, VOTE_REQUEST, VOTE_RESPONSE

# The replay's configuration: the default preset with room for the simulation's behaviours.
OVERRIDES = {"max_epoch": 4, "max_log": 2, "max_in_flight": 4, "timeouts": -1, "faults": 3, "restarts": 1,
             "disk_losses": 1, "losses": 1, "partitions": 0, "follower_hw": True, "stale_requests": True}
SEND = {VOTE_REQUEST: A.SendVote, BQE_REQUEST: A.SendBeginQuorumEpoch}
PRE_VOTE_TIMERS = 4  # timer expirations per simulation on jars with pre-vote (Simulation.timers_left)


def observe(adapter: K.KraftAdapter) -> dict[str, Any]:
    """The recorded variables: `nodes`, each a partial record of what the real node shows."""
    nodes = []
    view = adapter.observe()
    for i in range(len(adapter.nodes)):
        role = view[f"node{i}.role"]
        rec: dict[str, Any] = {"role": role, "epoch": view[f"node{i}.epoch"], "leader": view[f"node{i}.leader"],
                               "log": [{"epoch": int(e.split(":", 1)[0]), "kind": e.split(":", 1)[1]}
                                       for e in view[f"node{i}.log"]],
                               "hw": view[f"node{i}.hw"]}
        if role in (ROLE_NAMES[r] for r in adapter.voted_roles):
            rec["voted"] = view[f"node{i}.voted"]
        nodes.append(rec)
    return {"nodes": nodes}


class Simulation:
    """One seeded run of the real nodes; `steps` is the trace [(action repr or None, values)]."""

    def __init__(self, adapter: K.KraftAdapter, model: Any, seed: int) -> None:
        self.a, self.model, self.p = adapter, model, model.params
        self.rng = random.Random(seed)
        self.used = {"restarts": 0, "disk_losses": 0, "losses": 0}
        self.appends = 0
        self.fetch_ok = False
        self.self_voted: set[int] = set()  # followers whose vote of the epoch is for themselves (FOLLOWER_VOTE)
        self.current: str | None = None  # the event being taken
        # with pre-vote no epoch bound stops the election timers (a Prospective raises no epoch): a
        # budget of timer expirations per run leaves room for leaders to be elected and replicate
        self.timers_left: int | None = PRE_VOTE_TIMERS if adapter.pre_vote else None
        self.exception: tuple[int, str, str] | None = None

    def faults(self) -> int:
        return sum(self.used.values())

    def run(self, depth: int) -> list[tuple[str | None, dict[str, Any]]]:
        """The recorded trace. An exception thrown on the way (by the real code, or by the
        simulation driving it) ends the run: `self.exception` is then (step, action, one line), and
        the trace holds the states up to the step that threw."""
        steps: list[tuple[str | None, dict[str, Any]]] = []
        try:
            self._run(depth, steps)
        except Exception as e:
            action = self.current if self.current is not None else ("init" if not steps else "choosing an event")
            self.exception = (len(steps) if steps else 0, action, exception_line(e))
        return steps

    def _run(self, depth: int, steps: list[tuple[str | None, dict[str, Any]]]) -> None:
        a = self.a
        a.reset(self.model.init_states()[0])
        steps.append((None, observe(a)))
        for _ in range(depth):
            self.current = None
            events = self.events()
            if not events:
                break
            action, do = self.choose(events)
            before = {n.id: (n.position(), n.incarnation) for n in a.nodes}
            outbox = dict(a.outbox)
            self.current = repr(action)
            do()
            # poll_sends: a node whose role changed (or that restarted), and a follower that
            # handled a Fetch response, send at once; other new requests wait for a send event
            movers = {n.id for n in a.nodes if (n.position(), n.incarnation) != before[n.id]}
            if isinstance(action, A.HandleFetchResponse) and self.fetch_ok:
                movers.add(action.dst)  # handle_fetch_response polls after a NONE answer only
            self.auto_send(outbox, movers)
            for n in a.nodes:
                role, epoch = n.position()
                if role == CANDIDATE:
                    self.self_voted.discard(n.id)
                if before[n.id][0] == (CANDIDATE, epoch) and role == FOLLOWER:
                    self.self_voted.add(n.id)
                elif (role, epoch) != before[n.id][0] and role != FOLLOWER:
                    self.self_voted.discard(n.id)
                elif epoch != before[n.id][0][1]:
                    self.self_voted.discard(n.id)
            steps.append((repr(action), observe(a)))
        self.current = None

    def choose(self, events: list[tuple[Any, Any]]) -> tuple[Any, Any]:
        """The next event: uniformly among them; on jars with pre-vote, an event kind first (as walks
        choose), then one of its events, since there no epoch bound stops the election timers and
        uniform draws over every node's timer and every vote request leave leaders little room."""
        if not self.a.pre_vote:
            return events[int(self.rng.random() * len(events)) % len(events)]
        kinds = sorted({type(a).__name__ for a, _ in events})
        kind = kinds[int(self.rng.random() * len(kinds)) % len(kinds)]
        mine = [e for e in events if type(e[0]).__name__ == kind]
        return mine[int(self.rng.random() * len(mine)) % len(mine)]

    def auto_send(self, outbox_before: dict, movers: set[int]) -> None:
        """The requests the movers made in this step go out together if they fit in flight (model: poll_sends)."""
        a = self.a
        busy = self.busy()
        new = [k for k in a.outbox if outbox_before.get(k) is not a.outbox[k] and k[1] in movers and self.sendable(k)
               and (k[1], k[2], k[0]) not in busy]
        if new and len(a.flight) + len(new) <= self.p.max_in_flight:
            for key in new:
                self.send(key)

    def log_full(self, n: Any) -> bool:
        return len(n.log_view()[0]) >= self.p.max_log

    def busy(self) -> set[tuple[int, int, int]]:
        """(requester, responder, RPC) with its request or response in flight: one outstanding request
        per destination (RequestManager)."""
        return {(f.src, f.dst, f.kind) if f.kind in REQUESTS else (f.dst, f.src, f.kind - 1) for f in self.a.flight}

    def sendable(self, key: tuple[int, int, int]) -> bool:
        """A request the model's network carries: not an observer's Fetch to a bootstrap server,
        which the model has only with voter changes (spec/kraft.md, "Abstractions")."""
        a = self.a
        kind, src, _ = key
        if kind not in REQUESTS or not a.nodes[src].expects(a.outbox[key]):
            return False
        return kind != FETCH_REQUEST or a.nodes[src].position()[0] == FOLLOWER

    def send(self, key: tuple[int, int, int]) -> None:
        a = self.a
        out = a.outbox.pop(key)
        a.flight.append(K._Flight(key[0], key[1], key[2], out, out, a.nodes[key[1]].incarnation, a.nodes[key[1]]))

    def events(self) -> list[tuple[Any, Any]]:
        a, p = self.a, self.p
        out: list[tuple[Any, Any]] = []
        # an Unattached voter whose timer has expired becomes Prospective at its next poll: only its
        # ElectionTimeout (or a restart) is a step of it (kraft.UNATTACHED_EXPIRED)
        stalled = {n.id for n in a.nodes if n.stalled()}
        for f in list(a.flight):
            if f.dst in stalled:
                if self.used["losses"] < p.losses and self.faults() < p.faults:
                    out.append((A.DropMessage(K.MESSAGE_NAMES[f.kind], f.src, f.dst), lambda f=f: self.drop(f)))
                continue
            if f.kind == VOTE_RESPONSE and K._partition(f.message.data()).voteGranted():
                role, epoch = a.nodes[f.dst].position()
                if role == PROSPECTIVE and epoch >= p.max_epoch:
                    continue  # it might make a Candidate of epoch + 1 (the model's bound)
                if self.log_full(a.nodes[f.dst]):
                    continue  # it might elect a candidate whose LeaderChange would not fit (the model's bound)
            handle = A.HANDLE_ACTION[f.kind](f.src, f.dst)
            out.append((handle, lambda f=f: self.deliver(f)))
            if self.used["losses"] < p.losses and self.faults() < p.faults:
                drop = A.DropMessage(K.MESSAGE_NAMES[f.kind], f.src, f.dst)
                out.append((drop, lambda f=f: self.drop(f)))
        busy = self.busy()
        if len(a.flight) < p.max_in_flight:
            for key in list(a.outbox):
                kind, src, dst = key
                if not self.sendable(key):
                    continue
                if (src, dst, kind) in busy:
                    continue
                action = A.SendFetch(src) if kind == FETCH_REQUEST else SEND[kind](src, dst)
                out.append((action, lambda key=key: self.send(key)))
        top = max(n.position()[1] for n in a.nodes)
        timers = self.timers_left is None or self.timers_left > 0
        for n in a.nodes:
            q = n.quorum()
            role, epoch = n.position()
            voter = bool(q.isVoter())
            # with pre-vote only a Resigned's timer raises the epoch (the others become Prospective);
            # on the pull request's jars it makes it Prospective instead (kraft.RESIGNED_STANDS): not taken
            if (a.pre_vote and role == RESIGNED) or not (timers or n.id in stalled):
                pass  # (a stalled node's ElectionTimeout ends an expiry already counted)
            elif voter and role in (UNATTACHED, PROSPECTIVE, CANDIDATE, RESIGNED) and (
                    top < p.max_epoch or a.pre_vote):
                out.append((A.ElectionTimeout(n.id), lambda n=n: self.timer(n)))
            elif voter and role == FOLLOWER and (top < p.max_epoch or a.pre_vote):
                out.append((A.FetchTimeout(n.id), lambda n=n: self.timer(n)))
            elif role == LEADER and p.voters > 1:
                out.append((A.CheckQuorumTimeout(n.id), lambda n=n: self.timer(n)))
            if n.id in stalled:
                pass
            elif role == LEADER and not self.log_full(n):
                out.append((A.ClientAppend(n.id), lambda n=n: self.append(n)))
            if (self.used["restarts"] < p.restarts and self.faults() < p.faults
                    and (a.pre_vote or n.id not in self.self_voted)):
                out.append((A.Restart(n.id), lambda n=n: self.restart(n, disk=False)))
            if self.used["disk_losses"] < p.disk_losses and self.faults() < p.faults and voter:
                out.append((A.DiskLoss(n.id), lambda n=n: self.restart(n, disk=True)))
        return out

    # --- the events, through the adapter's own map ------------------------------------------

    def deliver(self, f: Any) -> None:
        self.fetch_ok = f.kind not in REQUESTS and K._partition(f.message.data()).errorCode() == 0
        self.a.flight.remove(f)
        if f.kind in REQUESTS:
            self.a._deliver_request(f)
        else:
            self.a._deliver_response(f)
        self.forget()

    def drop(self, f: Any) -> None:
        self.a.flight.remove(f)
        self.used["losses"] += 1

    def timer(self, n: Any) -> None:
        if self.timers_left is not None and not n.stalled():
            self.timers_left -= 1
        before = n.position()
        for _ in range(4):
            n.time.sleep(K.EXPIRE_MS)
            n.poll()
            if n.position() != before:
                break
        self.a._collect(n)
        self.forget()

    def append(self, n: Any) -> None:
        n.client.prepareAppend(n.quorum().epoch(), K.java_list(self.a, ["x"]))
        n.client.schedulePreparedAppend()
        n.poll()
        self.a._collect(n)
        self.appends += 1

    def restart(self, n: Any, disk: bool) -> None:
        a = self.a
        if disk:
            n.new_directory()
            n.fresh_disk()
            self.used["disk_losses"] += 1
        else:
            self.used["restarts"] += 1
        n.start()
        a.flight = [f for f in a.flight if f.dst != n.id]
        a.outbox = {k: v for k, v in a.outbox.items() if k[1] != n.id}
        n.poll()
        a._collect(n)
        self.forget()

    def forget(self) -> None:
        """Responses nobody waits for any more go (the model forgets them on a role change)."""
        a = self.a
        a.flight = [f for f in a.flight if f.kind in REQUESTS or a._alive(f)]
        for key in [k for k in a.outbox if not a.nodes[k[1]].expects(a.outbox[k])]:
            del a.outbox[key]


def itf_document(rc: Any, steps: list[tuple[str | None, dict[str, Any]]], seed: int) -> dict[str, Any]:
    """The run as an ITF trace of the observed variables, for `kcheck replay`."""
    from checker.traces import itf

    meta = itf.run_meta(rc, seed=seed, description="real KafkaRaftClient nodes under a seeded random simulation "
                        "(kcheck conform --simulate): observed variables only")
    states = [{"#meta": {"index": i}, itf.ACTION_KEY: action if action is not None else itf.INIT_ACTION,
               **{k: itf.encode_value(v) for k, v in values.items()}} for i, (action, values) in enumerate(steps)]
    return {"#meta": {"format": "ITF", "format-description": itf.FORMAT_DESCRIPTION, "source": "kcheck", **meta},
            "vars": ["nodes", itf.ACTION_KEY], "states": states}


def simulate(variant: str, runs: int, depth: int, seed: int, out_dir: str | None = None,
             stop: Any = None) -> dict[str, Any]:
    """`runs` seeded simulations of the real nodes, each replayed against the model; the counts of
    action kinds, and the first run the model does not allow (its trace and the replay's outcome)."""
    import os
    from collections import Counter

    from checker.traces import itf
    from checker.config import load_config
    from checker.traces.replay import VALID, replay

    rc = load_config(model="kraft", variant=variant, preset="default", overrides=OVERRIDES)
    model = rc.build()
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
    adapter = K.KraftAdapter(model)
    counts: Counter = Counter()
    result: dict[str, Any] = {"config": dict(rc.config), "runs": 0, "steps": 0, "valid": 0, "first_invalid": None,
                              "known": {}}
    try:
        for r in range(runs):
            if stop is not None and stop():
                result["interrupted"] = True
                break
            run_seed = seed + r
            sim = Simulation(adapter, model, run_seed)
            steps = sim.run(depth)
            result["runs"] += 1
            result["steps"] += max(len(steps) - 1, 0)
            counts.update(a.split("(", 1)[0] for a, _ in steps[1:] if a)
            doc = itf_document(rc, steps, run_seed)
            if out_dir is not None and steps:
                itf.write(os.path.join(out_dir, f"sim-{run_seed}.itf.json"), doc, "--simulate-out")
            if sim.exception is not None:
                step, action, line = sim.exception
                doc["#meta"]["description"] = (f"real KafkaRaftClient nodes under a seeded random simulation: the"
                                               f" states up to step {step} ({action}), where {line}")
                result["first_invalid"] = {"seed": run_seed, "result": "exception", "step": step, "action": action,
                                           "exception": line, "document": doc}
                break
            outcome = replay(model, steps)
            if outcome.result == VALID:
                result["valid"] += 1
            elif result["first_invalid"] is None:
                result["first_invalid"] = {"seed": run_seed, "result": outcome.result, "step": outcome.failed_step,
                                           "action": outcome.action, "document": doc}
                break
    finally:
        adapter.close()
    result["action_counts"] = dict(counts)
    return result
