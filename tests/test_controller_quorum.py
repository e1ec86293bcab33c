"""The replication model's controller on a KRaft quorum (`controller_failovers` > 0).

The answers' purgatory follows DeferredEventQueueTest (apache/kafka server-common,
org.apache.kafka.deferred): answers complete in commit order and fail together on renounce.
QuorumController's renounce reverts to the last committed state; brokers replay committed
records only. Then the model: Kafka 4.1 holds on `controller-failover`, and C1 and C2 are found.
"""
from __future__ import annotations

from typing import Any

import pytest

from checker.search.run import explore
from checker.config import load_config
from checker.search.schedule import replay_schedule
from model.replication import actions as A
from model.replication.state import AP_ERRORS, State


def build(variant: str = "kafka-4.1", **overrides: Any) -> Any:
    return load_config(model="replication", preset="controller-failover", variant=variant,
                       overrides=overrides).build()


def step(m: Any, s: State, action: Any) -> State:
    t = m.next_state(s, action)
    assert t is not None, f"{action} is not enabled in\n{m.summary(s)}"
    return t


def shrink_written(m: Any) -> State:
    """Leader 0 proposes ISR {0} and the controller writes it: one uncommitted batch, the answer held."""
    s = step(m, m.init_states()[0], A.ShrinkIsr(0, 1))
    return step(m, s, A.HandleAlterPartition(s.ap_requests[0]))


def test_complete_events() -> None:
    """testCompleteEvents: an answer completes when the quorum commits its write, not before."""
    m = build()
    s = shrink_written(m)
    assert len(s.controller.uncommitted) == 1 and s.ap_responses == ()
    assert s.controller.partition.isr == (0,) and s.controller.committed_epoch == 0
    assert not any(isinstance(a, A.ReplayMetadata) for a in m.actions(s)), "brokers replay committed records only"
    t = step(m, s, A.CommitMetadata())
    assert t.controller.uncommitted == () and t.controller.committed_epoch == 1
    (resp,) = t.ap_responses
    assert resp.error == AP_ERRORS.index("NONE") and resp.registration[0].isr == (0,)


def test_an_answer_that_wrote_nothing_waits_for_the_highest_pending_offset() -> None:
    """QuorumController.ControllerWriteEvent: an event with no records completes at
    DeferredEventQueue.highestPendingOffset, after the writes already pending."""
    m = build()
    s = shrink_written(m)
    stale = s.controller.uncommitted[0].responses[0].request  # the same proposal again: now stale
    s = s._replace(ap_requests=(stale,))
    t = step(m, s, A.HandleAlterPartition(stale))
    assert len(t.controller.uncommitted) == 1 and t.ap_responses == ()
    assert len(t.controller.uncommitted[0].responses) == 2
    t = step(m, t, A.CommitMetadata())
    assert len(t.ap_responses) == 2 and any(r.error != AP_ERRORS.index("NONE") for r in t.ap_responses)


def test_fail_events_on_renounce() -> None:
    """testFailEvents, and QuorumController.renounce: the failover forgets the uncommitted write
    (revertToSnapshot(lastCommittedOffset)) and fails the held answer with NOT_CONTROLLER; the
    broker sends its request again to the next controller."""
    m = build()
    s = shrink_written(m)
    request = s.controller.uncommitted[0].responses[0].request
    t = step(m, s, A.ControllerFailover())
    assert t.controller.uncommitted == () and t.controller.failovers == 1 and t.controller.reverted
    assert t.controller.partition.isr == (0, 1) and t.controller.partition.partition_epoch == 0
    assert t.ap_requests == (request,) and t.ap_responses == ()
    assert t.brokers[0].pending == (0,), "the leader's proposal is still pending"
    assert not any(isinstance(a, A.ControllerFailover) for a in m.actions(t)), "one failover in the budget"
    # the proposal is written again by the next controller
    t = step(m, t, A.HandleAlterPartition(request))
    assert t.controller.partition.isr == (0,) and t.controller.partition.partition_epoch == 1


def test_commits_go_in_log_order() -> None:
    """The quorum commits batches in log order: the first batch's answers come first."""
    m = build()
    s = shrink_written(m)
    s = step(m, s, A.Crash(1))
    s = step(m, s, A.FenceBroker(1))
    assert len(s.controller.uncommitted) == 2
    t = step(m, s, A.CommitMetadata())
    assert len(t.controller.uncommitted) == 1 and len(t.ap_responses) == 1
    assert t.controller.committed_brokers[1].fenced is False, "the fencing is not committed yet"
    assert t.controller.brokers[1].fenced is True, "the active controller reads its own write"


def test_a_registration_waits_until_nothing_is_uncommitted() -> None:
    """A restart (and a controlled shutdown) is answered once committed: one step, enabled only
    while no write is pending."""
    m = build()
    s = step(m, m.init_states()[0], A.Crash(1))
    s = step(m, s, A.FenceBroker(1))
    assert m.next_state(s, A.Restart(1)) is None and m.next_state(s, A.ControlledShutdown(0)) is None
    s = step(m, s, A.CommitMetadata())
    step(m, s, A.Restart(1))


def test_without_failovers_every_write_commits_at_once() -> None:
    m = load_config(model="replication", preset="smoke").build()
    s = step(m, m.init_states()[0], A.ShrinkIsr(0, 1))
    t = step(m, s, A.HandleAlterPartition(s.ap_requests[0]))
    assert t.controller.uncommitted == () and len(t.ap_responses) == 1
    assert "uncommitted" not in m.to_json(t)["controller"]


@pytest.mark.parametrize("variant", ["alter-partition-response-before-commit", "replay-uncommitted-metadata"])
def test_c1_c2_act_on_a_write_a_failover_forgets(variant: str) -> None:
    r = explore(build(variant), workers=1)
    assert r.result == "violation" and r.violation["invariant"] == "quorum_superset"
    trace = r.violation["trace"]
    assert len(trace) - 1 == 4 and any(type(a).__name__ == "ControllerFailover" for a, _ in trace[1:])


# The first 17 steps of C3's trace (traces/replication/read-uncommitted-registrations.txt): broker 1
# is fenced, fetches the value, loses it in a lossy crash, restarts (broker epoch 2); the controller
# unfences it, uncommitted (step 11); its Fetch of epoch 2 reaches the leader (step 17).
C3_PREFIX = [
    'FenceBroker(broker=1)',
    'SendFetch(follower=1)',
    'HandleFetch(request=FetchRequest(follower=1, leader=0, broker_epoch=1, leader_epoch=0, fetch_offset=0, last_fetched_epoch=-1))',
    'Produce(leader=0, value=0)',
    'HandleFetchResponse(response=FetchResponse(follower=1, leader=0, leader_epoch=0, fetch_offset=0, error=0, diverging_epoch=-1, diverging_end_offset=-1, records=(), hw=0))',
    'HandleFetch(request=FetchRequest(follower=1, leader=0, broker_epoch=1, leader_epoch=0, fetch_offset=0, last_fetched_epoch=-1))',
    'HandleFetchResponse(response=FetchResponse(follower=1, leader=0, leader_epoch=0, fetch_offset=0, error=0, diverging_epoch=-1, diverging_end_offset=-1, records=(LogEntry(epoch=0, value=0),), hw=0))',
    'LossyCrash(broker=1, keep=0)',
    'CommitMetadata()',
    'Restart(broker=1)',
    'UnfenceBroker(broker=1)',
    'SendFetch(follower=1)',
    'HandleFetch(request=FetchRequest(follower=1, leader=0, broker_epoch=2, leader_epoch=0, fetch_offset=0, last_fetched_epoch=-1))',
    'ReplayMetadata(broker=0)',
    'DropMessage(message=FetchResponse(follower=1, leader=0, leader_epoch=0, fetch_offset=0, error=0, diverging_epoch=-1, diverging_end_offset=-1, records=(LogEntry(epoch=0, value=0),), hw=0))',
    'SendFetch(follower=1)',
    'HandleFetch(request=FetchRequest(follower=1, leader=0, broker_epoch=2, leader_epoch=0, fetch_offset=0, last_fetched_epoch=-1))',
]


@pytest.mark.parametrize("variant", ["kafka-4.1", "read-uncommitted-registrations"])
def test_c3_the_leader_reads_an_uncommitted_unfencing(variant: str) -> None:
    """Kafka 4.1's leader reads its metadata image, where broker 1 is still fenced, and asks for
    nothing; C3's reads the controller's unfencing and asks to add broker 1, which lost the record."""
    m = load_config(model="replication", preset="stale-fetch-failover", variant=variant).build()
    run = replay_schedule(m, C3_PREFIX)
    assert run.refused_at is None and run.violated is None
    s = run.trace[-1][1]
    assert s.controller.uncommitted and not s.controller.brokers[1].fenced
    assert s.controller.committed_brokers[1].fenced
    asks = [r for r in s.ap_requests if 1 in [member.broker_id for member in r.new_isr]]
    if variant == "kafka-4.1":
        assert asks == []
    else:
        assert [member.broker_epoch for member in asks[0].new_isr if member.broker_id == 1] == [2]
