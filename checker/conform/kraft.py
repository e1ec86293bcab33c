"""The kraft model's map to the real KafkaRaftClient: one client per model node in this JVM, each
with Kafka's own test doubles (MockLog, MockQuorumStateStore, MockNetworkChannel, MockMessageQueue,
its own MockTime, a seeded java.util.Random), wired as Kafka's RaftEventSimulationTest does.

The network is held here: a request a client puts on its channel waits in an outbox until the
model sends it (a Send* action, or the sends a role change makes, `quorum.poll_sends`); then it is
in flight with the model's message of the same (kind, src, dst) until delivered or dropped.
Delivering a request is `handle` and `poll` at the receiver; its response, `mockReceive` and
`poll` at the requester. A timer expiring is that node's clock moved past the timeout, and polls.

Every place the model is coarser than the code is in ABSTRACTIONS (spec/kraft.md, "Conformance
with the running code").
"""
from __future__ import annotations

from typing import Any, NamedTuple

from checker.config import ConfigError
from checker.conform.adapter import OtherRefusal
from checker.conform.jvm import has_class
from model.kraft import actions as A
from model.kraft.network import at as _at, in_flight, send
from model.kraft.rules import end_offset as rules_end_offset, last_voter_set
from model.kraft.rules import (
    CANDIDATE, ERROR_NAMES, FOLLOWER, LEADER, NO_ID, NONE, PROSPECTIVE, RESIGNED, ROLE_NAMES, UNATTACHED, VOTERS_BASE,
)
from model.kraft.state import (
    BQE_REQUEST, BQE_RESPONSE, DATA, FETCH_REQUEST, FETCH_RESPONSE, LEADER_CHANGE, MESSAGE_NAMES, REQUESTS,
    VOTE_REQUEST, VOTE_RESPONSE, BeginQuorumEpochRequest, FetchRequest, KraftState, VoteRequest, kind_name,
)

# Kafka timeouts (ms): a node's own clock moves only when the model says one of its timers expires,
# by more than any of them (election timeout + pinned jitter, election backoff, fetch timeout,
# check-quorum timer), so no timer expires by accident.
ELECTION_TIMEOUT_MS = 10_000
ELECTION_BACKOFF_MAX_MS = 1_000
FETCH_TIMEOUT_MS = 20_000  # check quorum: 1.5 x this without fetches from a majority
REQUEST_TIMEOUT_MS = 2_000
RETRY_BACKOFF_MS = 10
EXPIRE_MS = 2 * FETCH_TIMEOUT_MS  # beyond election (2 x 10 s + backoff), fetch and check-quorum timers
PORT = 9093
CLUSTER_ID = "kcheck-conform-cluster"
KRAFT_VERSION = 1  # 1: a bootstrap checkpoint with the voters' directory ids (Kafka 4.1's format); 0: static voters
# Batch buffers of a client's BatchMemoryPool (KafkaRaftClient's public constructor uses 5).
MEMORY_BATCHES = 5
MAX_LOG = 2  # MockLog.read returns at most two batches: a Fetch answer beyond them is not drivable (_partial_read)
POLLS = 3  # poll() runs the role's timers and sends, then handles one message: a step takes several

# Model variants the jars of a snapshot before KIP-996 can represent (no Prospective state).
PRE_VOTE_CLASS = "org.apache.kafka.raft.ProspectiveState"

UNATTACHED_EXPIRED = "Unattached with its election timer expired"
RESIGNED_STANDS = "a Resigned leader's election timeout: the pull request's code stands at once"

ABSTRACTIONS = {
    "ElectionTimeout, FetchTimeout, CheckQuorumTimeout":
        "the model's time is abstract: a timer may expire in any state its role runs it. Kafka has one"
        " clock and separate timers (randomised election timeout, fetch timeout, check-quorum timer at"
        " 1.5 x the fetch timeout, election backoff after a lost election); the adapter moves that"
        " node's own MockTime past all of them and polls until the role changes (a Candidate needs two"
        " polls: the timeout starts the backoff, the backoff's end starts the next election)",
    "several polls per model step":
        "KafkaRaftClient.poll runs the role's timers and sends, then handles at most one message; the"
        " model's step (deliver, change role, send) is a handle followed by up to"
        f" {POLLS} polls of that node",
    "Fetch long polling":
        "the followers run with fetch max wait 0 (KafkaRaftClient's fetchMaxWaitMs, 500 ms in"
        " Kafka): the leader answers an empty Fetch at once instead of parking it in the fetch"
        " purgatory until records arrive or the wait expires, which is the model's immediate answer",
    "EndQuorumEpoch":
        "not modelled: a resigned leader's EndQuorumEpoch requests are never delivered (as if each"
        " were lost). Their effects are a follower's shortened fetch timer (the model's timers are"
        " abstract) and learning the leader of a newer epoch (as BeginQuorumEpoch does)",
    "BeginQuorumEpoch response NONE":
        "the model keeps only error responses to BeginQuorumEpoch; a NONE response only acknowledges"
        " (LeaderState.addAcknowledgementFrom), so the adapter drops it. Kafka then stops resending"
        " BeginQuorumEpoch to that voter; the model may send it again any time",
    "responses nobody waits for":
        "a request whose sender reset its connections (role change, restart) is still handled by its"
        " receiver, but the model sends no response (live=false); the adapter drops the real one,"
        " which the sender's RequestManager would ignore (isResponseExpected is false)",
    "MockLog partial reads":
        "MockLog.read returns at most two batches (a test double's way to exercise partial reads),"
        " so a real Fetch answer carries at most two batches where KafkaMetadataLog (up to the fetch's"
        " byte limit) and the model send the rest of the log: a HandleFetchRequest whose real answer"
        " would stop short of the leader's log end is not drivable (counted as skipped)",
    "MockLog.endOffsetForEpoch":
        "the real log is Kafka's test double MockLog. Asked for an epoch below every epoch in the log,"
        " it answers (start of the first epoch, epoch 0) where KafkaMetadataLog (UnifiedLog's"
        " LeaderEpochFileCache.endOffsetFor) and the model answer (start of the first epoch, the"
        " requested epoch); the adapter reads MockLog's (0, 0) in a Fetch response's diverging epoch"
        " as the requested epoch. The follower truncates to offset 0 either way",
    "jitter":
        "the election timeout's and the election backoff's random parts are pinned (Kafka's"
        " MockableRandom, nextInt = 1): a lost election backs off 50 ms, never 0 ms. With 0 ms Kafka"
        " starts the next election in the poll after the rejection, a step the model takes as a"
        " separate ElectionTimeout",
    "voted":
        "compared for Unattached and Candidate only: Kafka's FollowerState, LeaderState and"
        " ResignedState keep no vote (ElectionState.withElectedLeader); the model keeps the vote of"
        " the epoch there, and no rule reads it in those roles",
    "hw (follower_hw = false)":
        "with follower_hw off the model keeps an HW for leaders only; the real followers' HW is then"
        " not compared (shown as -1)",
    "voter sets":
        "kraft.version 1: every disk is formatted with the bootstrap checkpoint (0-0.checkpoint: the"
        " voters' ids, the directory ids of their first disks, endpoints), as `kafka-storage format"
        " --initial-controllers` writes it; a lost disk's replacement gets a new directory id, so the"
        " node is an observer. Spares are formatted the same way (the model keeps the bootstrap set"
        " for every node); the voter set in each log is compared as its VotersRecords (Voters[ids])",
    "a removed leader resigns at its next poll":
        "once the VotersRecord that removes the leader commits, RemoveVoterHandler.highWatermarkUpdated"
        " asks it to resign (LeaderState.requestResign) and its next poll resigns it"
        " (KafkaRaftClient.pollLeader); the model keeps it leader until a separate ResignAfterRemoval step"
        " and lets it act as leader before that (handle a request, append, send, time out). The adapter"
        " stops polling that leader when the request is made, drives ResignAfterRemoval as its next"
        " poll, and does not drive any other step of that node in between (counted as skipped); a"
        " behaviour that takes one (a trace) ends in the named divergence RESIGN_IN_COMMIT_STEP",
    "AddVoter: the ApiVersions exchange and a caught-up observer":
        "the model's AddVoter is one step: the leader accepts and appends the VotersRecord. Kafka's"
        " leader handles AddRaftVoter (KafkaRaftClient.handleAddVoterRequest, AddVoterHandler), sends"
        " ApiVersions to the new voter, and on its answer (kraft.version range) checks that the"
        " observer is caught up, then appends. The adapter delivers the operator's request, answers"
        " the ApiVersions request as the new voter's KafkaRaftClient would (kraft.version 0-1) and"
        " polls, all in the one step. Kafka's caught-up test (LeaderState.isReplicaCaughtUp) is"
        " weaker than the model's: it asks that the observer has once reached the leader's end"
        " offset in this epoch and fetched in the last hour, where the model asks that its last"
        " fetch offset is the leader's end offset now; walks drive only the model's AddVoter, so the"
        " real leader accepting an AddVoter the model refuses is not seen here",
    "AddVoter: the leader's connection to the new voter":
        "AddVoterHandler sends ApiVersions only if the leader's RequestManager is ready for the new"
        " voter (no request to it in flight, not backing off), else answers REQUEST_TIMED_OUT (\"not"
        " ready to receive requests\"); the model has no connections. If the awaited request has"
        " nothing in flight here (a BeginQuorumEpoch whose NONE answer the adapter dropped, or one the"
        " model has not sent) the adapter lets it time out (RequestManager.reset) first; if its answer"
        " is in flight the step is not drivable (counted as skipped)",
    "SendObserverFetch: which bootstrap voter":
        "an observer that knows no leader fetches from one bootstrap server at a time"
        " (RequestManager.findReadyBootstrapServer: a random start, nothing else in flight); the model"
        " may fetch from each bootstrap voter at once. The adapter points the node's random draw at"
        " the model's voter for that poll; with another request of that observer still awaited the"
        " step is not drivable (counted as skipped)",
    "control records":
        "the first leader of a log whose voter set is still the bootstrap checkpoint's writes, in the"
        " batch of its LeaderChange record, a KRaftVersionRecord and the VotersRecord of that set"
        " (LeaderState.appendStartOfEpochControlRecords); the model keeps the bootstrap set before"
        " offset 0 and writes only the LeaderChange. Those two records are not compared, and every"
        " offset (HW, fetch offset, last offset, diverging end offset) is compared as the number of"
        " compared records below it",
    UNATTACHED_EXPIRED:
        "a Prospective whose election timed out (not rejected) becomes Unattached in its epoch with the"
        " timer it had, already expired (QuorumState.transitionToUnattached keeps the remaining"
        " election time of a Prospective, and in Kafka 4.1 of a Resigned), so its next poll makes it"
        " Prospective again (pollUnattachedAsVoter); the model takes that as a separate ElectionTimeout"
        " and lets the Unattached node act before it (handle a request or a response, restart)."
        " The adapter stops polling such a node and drives only its ElectionTimeout (a Restart gives it"
        " a new timer); a step that would poll it first is not drivable (counted as skipped)",
    RESIGNED_STANDS:
        "a version gap of the jars built from the pre-vote pull request: their pollResigned makes a"
        " Resigned voter Prospective in its epoch when its election timer expires, where Kafka 4.1"
        " (QuorumState.transitionToUnattached: 'transitioned from Resigned with current epoch + 1')"
        " and the model make it Unattached in epoch + 1 first (the pull request did so only for a"
        " leader no longer in the voter set). The step is not drivable on these jars (counted as skipped);"
        " the Resigned node leaves that role by the others' requests (a higher epoch) or a restart",
    "Send* of a request the real node holds no longer":
        "the model may send (or resend) a request whenever its guard holds; Kafka resends only after"
        " the request timed out or failed and backed off (RequestManager), and BeginQuorumEpoch only"
        " on its timer (half the fetch timeout) to voters that have not acknowledged. The adapter"
        " resets that one connection (RequestManager.reset, what the request timeout and backoff"
        " end in) rather than moving the node's clock, which would time out its other requests"
        " (the model has no request timeouts), and polls; if the real node still builds no such"
        " request the step is not drivable and the walk takes another action (counted as skipped)",
}

from model.kraft.params import PRESETS as _ALL_PRESETS  # noqa: E402

# `kcheck conform`'s default: every kraft preset, the dynamic-voter ones (spares, voter_changes) included.
PRESETS = tuple(_ALL_PRESETS)


def default_variant() -> str:
    """The variant the running JVM's jars represent: no-pre-vote before KIP-996, else kafka-4.1."""
    return "kafka-4.1" if has_class(PRE_VOTE_CLASS) else "no-pre-vote"


SEND_KIND = {A.SendVote: VOTE_REQUEST, A.SendBeginQuorumEpoch: BQE_REQUEST, A.SendFetch: FETCH_REQUEST,
             A.SendObserverFetch: FETCH_REQUEST}


class KraftAdapter:
    """The kraft model's adapter (checker.conform.adapter.Adapter)."""

    model_name = "kraft"

    def __init__(self, model: Any, bug_trace: bool = False) -> None:
        self.model = model
        p = model.params
        jars_pre_vote = has_class(PRE_VOTE_CLASS)
        if model.ctx.proto.pre_vote and not jars_pre_vote:
            raise ConfigError(f"variant {model.variant} has pre-vote (KIP-996), which these Kafka jars lack "
                              "(no ProspectiveState): use --variant no-pre-vote, or a Kafka 4.1 class path")
        if not model.ctx.proto.pre_vote and jars_pre_vote and not bug_trace:
            raise ConfigError(f"variant {model.variant} has no pre-vote, but these Kafka jars have KIP-996's "
                              "pre-vote: use a variant with pre-vote (kafka-4.1)")
        self.params = p
        self.kraft_version = KRAFT_VERSION
        self.pre_vote = jars_pre_vote  # the jars have KIP-996's Prospective state
        # the roles whose vote is compared (ABSTRACTIONS, "voted"): the jars with pre-vote keep it in
        # FollowerState too (ElectionState with both a leader and a vote), as Kafka 4.1 does
        self.voted_roles = (UNATTACHED, PROSPECTIVE, CANDIDATE, FOLLOWER) if self.pre_vote else (UNATTACHED, CANDIDATE)
        self._java()
        self.nodes: list[_Node] = []
        self.flight: list[_Flight] = []  # messages in flight, one per model message
        self.outbox: dict[tuple[int, int, int], Any] = {}  # (kind, src, dst) -> RaftRequest.Outbound not yet sent
        self.dead_epoch: dict[int, tuple[int, int]] = {}

    @classmethod
    def for_trace(cls, model: Any) -> "KraftAdapter":
        """The adapter for a bug variant's trace: a variant without pre-vote is driven on jars with it
        too (the real nodes become Prospective where the bug's become Candidate: that is where they
        part); one with pre-vote on jars without it cannot be (ConfigError)."""
        return cls(model, bug_trace=True)

    # --- JVM classes ------------------------------------------------------------------------

    def _java(self) -> None:
        import jpype

        J = jpype.JClass
        self.J = J
        self.jpype = jpype
        self.Integer = J("java.lang.Integer")
        krc = J("org.apache.kafka.raft.KafkaRaftClient")
        self.ctor = next(c for c in krc.class_.getDeclaredConstructors() if c.getParameterCount() == 18)
        self.ctor.setAccessible(True)
        self.quorum_m = krc.class_.getDeclaredMethod("quorum")
        self.quorum_m.setAccessible(True)
        self.rm_field = krc.class_.getDeclaredField("requestManager")
        self.rm_field.setAccessible(True)
        self.state_field = J("org.apache.kafka.raft.QuorumState").class_.getDeclaredField("state")
        self.state_field.setAccessible(True)
        self.krc = krc
        mockable = J("java.lang.Class").forName("org.apache.kafka.raft.MockableRandom")
        self.mockable_ctor = mockable.getDeclaredConstructor(J("java.lang.Long").TYPE)
        self.mockable_ctor.setAccessible(True)
        self.mock_next_int = mockable.getDeclaredMethod("mockNextInt", self.Integer.TYPE)
        self.mock_next_int.setAccessible(True)
        ApiKeys = J("org.apache.kafka.common.protocol.ApiKeys")
        self.api_versions_key = ApiKeys.API_VERSIONS.id
        self.api_versions: dict[int, Any] = {}
        self.api = {ApiKeys.VOTE.id: VOTE_REQUEST, ApiKeys.BEGIN_QUORUM_EPOCH.id: BQE_REQUEST,
                    ApiKeys.FETCH.id: FETCH_REQUEST}
        self.ApiMessageType = J("org.apache.kafka.common.message.ApiMessageType")
        self.ControlRecordType = J("org.apache.kafka.common.record.ControlRecordType")
        self.Isolation = J("org.apache.kafka.raft.Isolation")
        self.RaftRequest = J("org.apache.kafka.raft.RaftRequest")
        self.RaftResponse = J("org.apache.kafka.raft.RaftResponse")
        cfg = J("java.util.HashMap")()
        QC = J("org.apache.kafka.raft.QuorumConfig")
        for k, v in [(QC.QUORUM_REQUEST_TIMEOUT_MS_CONFIG, REQUEST_TIMEOUT_MS),
                     (QC.QUORUM_RETRY_BACKOFF_MS_CONFIG, RETRY_BACKOFF_MS),
                     (QC.QUORUM_ELECTION_TIMEOUT_MS_CONFIG, ELECTION_TIMEOUT_MS),
                     (QC.QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG, ELECTION_BACKOFF_MAX_MS),
                     (QC.QUORUM_FETCH_TIMEOUT_MS_CONFIG, FETCH_TIMEOUT_MS),
                     (QC.QUORUM_LINGER_MS_CONFIG, 0)]:
            cfg.put(k, self.Integer(v))
        self.quorum_config = QC(J("org.apache.kafka.common.config.AbstractConfig")(QC.CONFIG_DEF, cfg))

    def _bootstrap_voters(self) -> Any:
        """The bootstrap voter set `kafka-storage format --initial-controllers` writes: each voter's
        id, the directory id of its first disk, its endpoint (kraft.version 1)."""
        J = self.J
        nodes = J("java.util.HashMap")()
        VoterNode = J("org.apache.kafka.raft.VoterSet$VoterNode")
        for v in range(self.params.voters):
            node = self.nodes[v]
            nodes.put(self.Integer(v), VoterNode.of(
                J("org.apache.kafka.raft.ReplicaKey").of(v, node.directory), node.endpoints(),
                J("org.apache.kafka.server.common.Feature").KRAFT_VERSION.supportedVersionRange()))
        return J("org.apache.kafka.raft.VoterSet").fromMap(nodes)

    def bootstrap_servers(self) -> Any:
        """controller.quorum.bootstrap.servers: the bootstrap voters' endpoints (kraft.version 1)."""
        J = self.J
        servers = J("java.util.ArrayList")()
        if self.kraft_version == 1:
            for v in range(self.params.voters):
                servers.add(J("java.net.InetSocketAddress").createUnresolved(f"node-{v}", PORT))
        return servers

    def pinned_random(self, seed: int) -> Any:
        """Kafka's MockableRandom with nextInt pinned to 1: the election timeout is its configured
        value + 1 ms and a lost election backs off 50 ms (RETRY_BACKOFF_BASE_MS x 1), never 0."""
        rnd = self.mockable_ctor.newInstance(self.J("java.lang.Long")(seed))
        self.mock_next_int.invoke(rnd, self.Integer(1))
        return rnd

    # --- Adapter ----------------------------------------------------------------------------

    def reset(self, state: KraftState) -> None:
        J = self.J
        self.close()
        HashMap, ISA = J("java.util.HashMap"), J("java.net.InetSocketAddress")
        self.voter_addrs = HashMap()
        for v in range(self.params.voters):
            self.voter_addrs.put(self.Integer(v), ISA.createUnresolved(f"node-{v}", PORT))
        self.corr = J("java.util.concurrent.atomic.AtomicInteger")()
        self.nodes = [_Node(self, i, seed=1000 + i) for i in range(len(state.nodes))]
        for node in self.nodes:
            node.new_directory()
        self.bootstrap = self._bootstrap_voters()
        for node in self.nodes:
            node.fresh_disk()
            node.start()
        self.flight, self.outbox = [], {}
        for node in self.nodes:
            node.poll()
            self._collect(node)

    def drivable(self, state: KraftState, action: Any) -> str | None:
        """Why the real code cannot be made to take this step at all (the walk takes another), or
        None. For a Send* whose request the real node does not hold, this lets the node's request
        timeout pass and polls it (nothing the abstraction shows changes; the engine checks)."""
        kind = type(action)
        if kind is A.DiskLoss and self.kraft_version == 0:
            return "DiskLoss"
        if kind is A.HandleFetchRequest and self._partial_read(state, action):
            return "MockLog partial reads"
        if kind is A.AddVoter and self._connection_busy(action.leader, action.node):
            return "AddVoter: the leader's connection to the new voter"
        polled = _polled(action)
        if polled is not None and kind is not A.ResignAfterRemoval and self.nodes[polled].resign_requested():
            return "a removed leader resigns at its next poll"
        if polled is not None and kind is not A.ElectionTimeout and self.nodes[polled].stalled():
            return UNATTACHED_EXPIRED
        if kind is A.ElectionTimeout and self.pre_vote and state.nodes[action.node].role == RESIGNED:
            return RESIGNED_STANDS
        if kind is A.SendObserverFetch:
            key = self._send_key(state, action)
            return None if key in self.outbox else self._observer_fetch(state, key)
        if kind in SEND_KIND:
            key = self._send_key(state, action)
            if key not in self.outbox:
                return self._resend(key)
        return None

    @staticmethod
    def _send_key(state: KraftState, action: Any) -> tuple[int, int, int]:
        kind = type(action)
        dst = action.dst if kind is not A.SendFetch else state.nodes[action.src].leader
        return SEND_KIND[kind], action.src, dst

    def _partial_read(self, state: KraftState, action: Any) -> bool:
        """Whether the leader's answer to this Fetch would carry records and MockLog.read would stop
        short of the log end (it returns at most two batches)."""
        f = next((f for f in self.flight if f.kind == FETCH_REQUEST and f.src == action.src
                  and f.dst == action.dst), None)
        node = self.nodes[action.dst]
        if f is None or not node.quorum().isLeader():
            return False
        offset, end = _partition(f.message.data()).fetchOffset(), node.log.endOffset().offset()
        if offset >= end:
            return False
        try:
            batches = list(node.log.read(offset, self.Isolation.UNCOMMITTED).records.batches())
        except self.jpype.JException:
            return False
        return bool(batches) and batches[-1].nextOffset() < end

    def _observer_fetch(self, state: KraftState, key: tuple[int, int, int]) -> str | None:
        """An observer's Fetch to bootstrap voter key[2]: RequestManager.findReadyBootstrapServer starts at
        a random bootstrap server (nextInt of the node's MockableRandom) and sends only while nothing else
        is in flight. The adapter points that draw at key[2] for one poll (then pins it back to 1)."""
        node = self.nodes[key[1]]
        if any(f.requester == node.id and self._alive(f) for f in self.flight):
            return "SendObserverFetch: which bootstrap voter"
        rm = self.rm_field.get(node.client)
        rm.resetAll()
        self.mock_next_int.invoke(node.random, self.Integer(key[2]))
        try:
            node.poll()
        finally:
            self.mock_next_int.invoke(node.random, self.Integer(1))
        self._collect(node)
        return None if key in self.outbox else "SendObserverFetch: which bootstrap voter"

    def _resend(self, key: tuple[int, int, int]) -> str | None:
        """Let node key[1]'s outstanding request to key[2] time out and poll it; None if it then
        builds the request, else the abstraction that names why not."""
        node = self.nodes[key[1]]
        rm = self.rm_field.get(node.client)
        rm.reset(self.J("org.apache.kafka.common.Node")(key[2], f"node-{key[2]}", PORT))
        node.poll()
        self._collect(node)
        return None if key in self.outbox else "Send* of a request the real node holds no longer"

    def step(self, state: KraftState, action: Any, successor: KraftState) -> str | None:
        """Drive one model step; None, or why the real code would not take it. An exception the real
        code throws is not caught here: the engine names it (EXCEPTION), a finding of its own."""
        kind = type(action)
        if kind in (A.ElectionTimeout, A.FetchTimeout, A.CheckQuorumTimeout):
            node = self.nodes[action.node]
            before = node.position()
            for _ in range(4):  # a Candidate: timeout -> backoff, backoff over -> new election
                node.time.sleep(EXPIRE_MS)
                node.poll()
                if node.position() != before:
                    break
            self._collect(node)
        elif kind is A.ClientAppend:
            node = self.nodes[action.node]
            node.client.prepareAppend(node.quorum().epoch(), java_list(self, ["x"]))
            node.client.schedulePreparedAppend()
            node.poll()
            self._collect(node)
        elif kind is A.SendObserverFetch:
            key = self._send_key(state, action)
            if key not in self.outbox and self._observer_fetch(state, key) is not None:
                return f"node {key[1]} builds no Fetch to bootstrap voter {key[2]}"
        elif kind in SEND_KIND:
            key = self._send_key(state, action)
            if key not in self.outbox and self._resend(key) is not None:
                return f"node {key[1]} builds no {MESSAGE_NAMES[key[0]]} to {key[2]}"
        elif kind in A.HANDLE_ACTION.values():
            msg_kind = next(k for k, a in A.HANDLE_ACTION.items() if a is kind)
            f = self._take(msg_kind, action.src, action.dst)
            if f is None:
                return f"no {MESSAGE_NAMES[msg_kind]} from {action.src} to {action.dst} in flight on the real side"
            if msg_kind in REQUESTS:
                self._deliver_request(f)
            else:
                self._deliver_response(f)
        elif kind is A.Restart:
            node = self.nodes[action.node]
            node.start()
            self.flight = [f for f in self.flight if not (f.dst == action.node)]
            self.outbox = {k: v for k, v in self.outbox.items() if k[1] != action.node}
            node.poll()
            self._collect(node)
        elif kind is A.DiskLoss:  # only along traces: walks do not draw it (drivable)
            node = self.nodes[action.node]
            node.new_directory()
            node.fresh_disk()
            node.start()
            self.flight = [f for f in self.flight if not (f.dst == action.node)]
            self.outbox = {k: v for k, v in self.outbox.items() if k[1] != action.node}
            node.poll()
            self._collect(node)
        elif kind is A.DropMessage:
            f = self._take(A.MESSAGE_KIND[action.message], action.src, action.dst)
            if f is None:
                return f"no {action.message} from {action.src} to {action.dst} in flight on the real side"
        elif kind is A.AddVoter:
            refused = self._add_voter(action.leader, action.node)
            if refused:
                return refused
        elif kind is A.RemoveVoter:
            refused = self._remove_voter(action.leader, action.node)
            if refused:
                return refused
        elif kind is A.ResignAfterRemoval:  # the poll after RemoveVoterHandler asked the leader to resign
            node = self.nodes[action.node]
            node.poll(resign=True)
            self._collect(node)
        elif kind in (A.CutLink, A.HealLink):
            pass  # messages are held here, by the model's choice of deliveries
        else:
            return f"{kind.__name__} has no real counterpart in this adapter"
        self._send(successor)
        return None

    # --- voter changes (KIP-853) ------------------------------------------------------------------

    def _operator_request(self, leader: int, data: Any) -> Any:
        """An operator's request (kafka-metadata-quorum add-controller / remove-controller) handled by
        the leader: handle, then poll."""
        node = self.nodes[leader]
        inbound = self.RaftRequest.Inbound(
            node.channel.listenerName(), self.corr.incrementAndGet(),
            self.ApiMessageType.fromApiKey(data.apiKey()).highestSupportedVersion(True), data,
            node.time.milliseconds())
        node.client.handle(inbound)
        node.poll()
        self._collect(node)
        return inbound

    def _refused(self, what: str, inbound: Any) -> str | None:
        if not inbound.completion.isDone():
            return None  # the answer waits for the VotersRecord to commit
        code = int(inbound.completion.get().data().errorCode())
        return None if code == 0 else f"{what} answered {_err(code)}"

    def _add_voter(self, leader: int, j: int, offered: bool = False) -> str | None:
        """AddVoter: the leader handles AddRaftVoter for j (its directory id and endpoint), sends
        ApiVersions to j (AddVoterHandler), which j answers with its kraft.version range; the leader then
        checks j is caught up (LeaderState.isReplicaCaughtUp) and appends the VotersRecord. `offered`:
        a request the model refuses (negative conformance), sent as the operator would, the
        leader's connections as they are; a request it holds unanswered counts as taken."""
        J = self.J
        target = self.nodes[j]
        data = J("org.apache.kafka.raft.RaftUtil").addVoterRequest(
            CLUSTER_ID, REQUEST_TIMEOUT_MS, J("org.apache.kafka.raft.ReplicaKey").of(j, target.directory),
            target.endpoints())
        self.api_versions.pop(leader, None)
        if not offered:
            self._free_connection(leader, j)
        inbound = self._operator_request(leader, data)
        out = self.api_versions.pop(leader, None)
        if out is None:
            refused = self._refused("AddRaftVoter", inbound)
            return refused if offered else refused or "the leader sent no ApiVersions to the new voter"
        Data = J("org.apache.kafka.common.message.ApiVersionsResponseData")
        feature = J("org.apache.kafka.common.message.ApiVersionsResponseData$SupportedFeatureKey")()
        versions = J("org.apache.kafka.server.common.Feature").KRAFT_VERSION.supportedVersionRange()
        feature.setName(J("org.apache.kafka.server.common.KRaftVersion").FEATURE_NAME)
        feature.setMinVersion(versions.min()).setMaxVersion(versions.max())
        features = J("org.apache.kafka.common.message.ApiVersionsResponseData$SupportedFeatureKeyCollection")()
        features.add(feature)
        response = Data().setErrorCode(0).setSupportedFeatures(features)
        node = self.nodes[leader]
        node.channel.mockReceive(self.RaftResponse.Inbound(out.correlationId(), response, out.destination()))
        node.poll()
        self._collect(node)
        return self._refused("AddRaftVoter", inbound)

    def _voter_node(self, j: int) -> Any:
        return self.J("org.apache.kafka.common.Node")(j, f"node-{j}", PORT)

    def _connection_busy(self, leader: int, j: int) -> bool:
        """Whether the leader awaits a response from j that is in flight here (model and real)."""
        return any(f.requester == leader and j in (f.src, f.dst) and self._alive(f) for f in self.flight)

    def _free_connection(self, leader: int, j: int) -> None:
        """A request to j the leader still awaits with nothing in flight for it (a BeginQuorumEpoch whose
        NONE answer was dropped, or one the model has not sent): let it time out (RequestManager.reset),
        so that AddVoterHandler can send ApiVersions to j."""
        node = self.nodes[leader]
        rm = self.rm_field.get(node.client)
        if not rm.isReady(self._voter_node(j), node.time.milliseconds()):
            rm.reset(self._voter_node(j))

    def _remove_voter(self, leader: int, j: int) -> str | None:
        """RemoveVoter: the leader handles RemoveRaftVoter for j (RemoveVoterHandler) and appends the
        VotersRecord without j."""
        J = self.J
        data = J("org.apache.kafka.raft.RaftUtil").removeVoterRequest(
            CLUSTER_ID, J("org.apache.kafka.raft.ReplicaKey").of(j, self.nodes[j].directory))
        return self._refused("RemoveRaftVoter", self._operator_request(leader, data))

    # --- negative conformance: what the model refuses, offered to the real code ---------------------

    def refused_offers(self, state: KraftState) -> dict[str, list[Any]]:
        """The actions the model refuses in `state` by a guard of its own (not by a bound), by kind and
        case (the engine draws a case, then an action): a client append at a node that is not leader,
        the operator's AddVoter and RemoveVoter at a non-leader, or at a leader whose checks fail
        (rules.validate_add_voter, validate_remove_voter: a change pending, no HW in its epoch, a voter
        already there or not there, a new voter not caught up), and requests no node sent (FORGED).
        Nodes the adapter is holding before their next poll (a removed leader, an expired Unattached)
        are not offered anything."""
        p = self.params
        out: dict[str, list[Any]] = {}
        for i, n in enumerate(state.nodes):
            real = self.nodes[i]
            if real.stalled() or real.resign_requested():
                continue
            self._forged(state, i, out)
            at = "at the leader" if n.role == LEADER else "at a non-leader"
            if n.role != LEADER:
                out.setdefault(f"ClientAppend {at}", []).append(A.ClientAppend(i))
            if not p.dynamic or (n.role == LEADER and (state.changes >= p.voter_changes or n.leo >= p.max_log)):
                continue  # without voter changes, or refused by a bound of the model
            for j in range(p.n):
                for action in ((A.AddVoter(i, j),) if j != i else ()) + (A.RemoveVoter(i, j),):
                    if self.model.next_state(state, action) is None:
                        out.setdefault(f"{type(action).__name__} {at}", []).append(action)
        return out

    def _forged(self, state: KraftState, j: int, out: dict[str, list[Any]]) -> None:
        """The requests to node j that no node sent (FORGED: each case's epoch and senders), from each
        other node with no RPC of that kind to j in flight, that the model answers with an error or a
        vote not granted and without a change of any node."""
        top = max(n.epoch for n in state.nodes)
        for label, (kind, epoch_of, sender_ok, pre_vote) in FORGED.items():
            epoch = epoch_of(state.nodes[j], top)
            if epoch is None or epoch < 0 or (pre_vote and not (self.pre_vote and self.model.ctx.proto.pre_vote)):
                continue
            for i in range(len(state.nodes)):
                if i == j or in_flight(state, kind, i, j) or not sender_ok(state, i, j, epoch):
                    continue
                forged = ForgedRequest(MESSAGE_NAMES[kind], i, j, epoch, pre_vote)
                if self._model_refusal(state, forged) is not None:
                    out.setdefault(label, []).append(forged)

    @staticmethod
    def _forged_message(state: KraftState, f: "ForgedRequest") -> Any:
        """The model's message for a forged request, built from its sender's log as its client builds
        one (a vote or pre-vote, a Fetch from the sender's log end), awaited by its sender (live)."""
        n, kind = state.nodes[f.src], A.MESSAGE_KIND[f.message]
        end = rules_end_offset(n.log)
        if kind == VOTE_REQUEST:
            return VoteRequest(VOTE_REQUEST, f.src, f.dst, True, f.epoch, end.epoch, end.offset, f.pre_vote)
        if kind == BQE_REQUEST:
            return BeginQuorumEpochRequest(BQE_REQUEST, f.src, f.dst, True, f.epoch)
        return FetchRequest(FETCH_REQUEST, f.src, f.dst, True, f.epoch, end.offset, end.epoch, n.observer)

    def _model_refusal(self, state: KraftState, f: "ForgedRequest") -> str | None:
        """The model's answer to a forged request when it refuses it ("ERROR, granted G" for a vote,
        else "ERROR"), or None when it takes it (a node changes, or it answers NONE and grants)."""
        kind = A.MESSAGE_KIND[f.message]
        t = self.model.next_state(send(state, self._forged_message(state, f)), A.HANDLE_ACTION[kind](f.src, f.dst))
        if t is None or t.nodes != state.nodes:
            return None
        answer = _at(t, kind, f.src, f.dst)
        if answer is None or answer.kind != kind + 1:
            return None  # no answer: a BeginQuorumEpoch acknowledged (NONE is not modelled)
        if kind == VOTE_REQUEST:
            return None if answer.error == NONE and answer.granted else \
                f"{ERROR_NAMES.get(answer.error, answer.error)}, granted {int(answer.granted)}"
        return None if answer.error == NONE else ERROR_NAMES.get(answer.error, str(answer.error))

    def _forged_data(self, f: "ForgedRequest") -> Any:
        """The request body node f.src's client would build with f.epoch (RaftUtil.singletonVoteRequest,
        singletonBeginQuorumEpochRequest; KafkaRaftClient.buildFetchRequest), from its real log."""
        J, src, dst = self.J, self.nodes[f.src], self.nodes[f.dst]
        key = J("org.apache.kafka.raft.ReplicaKey")
        tp = J("org.apache.kafka.common.TopicPartition")("__cluster_metadata", 0)
        RaftUtil, kind = J("org.apache.kafka.raft.RaftUtil"), A.MESSAGE_KIND[f.message]
        last_epoch, end = int(src.log.lastFetchedEpoch()), int(src.log.endOffset().offset())
        if kind == VOTE_REQUEST:
            return RaftUtil.singletonVoteRequest(tp, CLUSTER_ID, f.epoch, key.of(f.src, src.directory),
                                                 key.of(f.dst, dst.directory), last_epoch, end, f.pre_vote)
        if kind == BQE_REQUEST:
            return RaftUtil.singletonBeginQuorumEpochRequest(tp, CLUSTER_ID, f.epoch, f.src, src.endpoints(),
                                                             key.of(f.dst, dst.directory))
        D = "org.apache.kafka.common.message.FetchRequestData"
        part = (J(D + "$FetchPartition")().setPartition(0).setCurrentLeaderEpoch(f.epoch)
                .setLastFetchedEpoch(last_epoch).setFetchOffset(end).setReplicaDirectoryId(src.directory))
        topic = J(D + "$FetchTopic")().setTopicId(src.log.topicId())
        topic.partitions().add(part)
        data = J(D)().setMaxBytes(self.krc.MAX_FETCH_SIZE_BYTES).setMaxWaitMs(0).setClusterId(CLUSTER_ID)
        data.topics().add(topic)
        return data.setReplicaState(J(D + "$ReplicaState")().setReplicaId(f.src))

    def _offer_forged(self, state: KraftState, f: "ForgedRequest") -> str | None:
        """Deliver a request node f.src never sent and poll the receiver; its answer must be the
        model's refusal (OtherRefusal otherwise, as an enabled step's answer is compared), and None
        (taken) if it answers NONE (granting, for a vote) or holds the request."""
        src = self.nodes[f.src]
        out = self.RaftRequest.Outbound(self.corr.incrementAndGet(), self._forged_data(f), self._voter_node(f.dst),
                                        src.time.milliseconds())
        kind = A.MESSAGE_KIND[f.message]
        answered = self._deliver_request(_Flight(kind, f.src, f.dst, out, out, src.incarnation, src), answer=True)
        if answered is None:
            return None  # no answer: the request is held, not refused
        data = answered.data()
        part = _partition(data)
        code = int(data.errorCode()) or int(part.errorCode())
        real = _err(code) + (f", granted {int(part.voteGranted())}" if kind == VOTE_REQUEST else "")
        if code == 0 and (kind != VOTE_REQUEST or part.voteGranted()):
            return None
        model = self._model_refusal(state, f)
        if real != model:
            raise OtherRefusal(real, str(model))
        return f"answered {real}"

    def offer(self, state: KraftState, action: Any) -> str | None:
        """Offer the real code a step the model refuses: its refusal (an error answer, or the
        NotLeaderException KafkaRaftClient.prepareAppend throws at a non-leader), or None if it took it."""
        kind = type(action)
        if kind is A.ClientAppend:
            node = self.nodes[action.node]
            try:
                node.client.prepareAppend(node.quorum().epoch(), java_list(self, ["x"]))
            except self.jpype.JException as e:
                if not self.J("org.apache.kafka.raft.errors.NotLeaderException").class_.isInstance(e):
                    raise
                return "NotLeaderException"
            node.client.schedulePreparedAppend()
            node.poll()
            self._collect(node)
            return None
        if kind is A.AddVoter:
            return self._add_voter(action.leader, action.node, offered=True)
        if kind is A.RemoveVoter:
            return self._remove_voter(action.leader, action.node)
        if kind is ForgedRequest:
            return self._offer_forged(state, action)
        raise ValueError(f"{kind.__name__} is not offered")

    def let_time_pass(self) -> None:
        """Every node's clock past every timer, one node after the other, each polled: what the
        real nodes do when no message moves (a lasso's forever, for the bug traces)."""
        for node in self.nodes:
            node.time.sleep(EXPIRE_MS)
            node.poll()
            self._collect(node)

    # --- the network ------------------------------------------------------------------------

    def _collect(self, node: "_Node") -> None:
        """Move the requests node has put on its channel into the outbox (a newer one replaces an
        older one to the same destination: the older one's sender no longer waits for it)."""
        for out in node.channel.drainSendQueue():
            if out.data().apiKey() == self.api_versions_key:
                self.api_versions[node.id] = out  # AddVoterHandler asks the new voter (answered in _add_voter)
                continue
            kind = self.api.get(out.data().apiKey())
            if kind is None:
                continue  # EndQuorumEpoch and others the model does not have (ABSTRACTIONS)
            # a bootstrap server is a Node with a negative id; its host names the voter
            self.outbox[(kind, node.id, int(str(out.destination().host()).rsplit("-", 1)[1]))] = out

    def _send(self, successor: KraftState) -> None:
        """Put in flight the requests the model sent in this step (they wait in the outbox). A
        request the model sends where a stale one of the same pair was (with stale_requests off,
        the model loses a request whose sender reset its connections) replaces it."""
        keys = {(m.kind, m.src, m.dst): m for m in successor.network}
        # the model forgets a response (or, with stale_requests off, a request) once its requester
        # has reset its connections; the real one goes too if nobody waits for it, else it stays
        # and the comparison shows it
        self.flight = [f for f in self.flight if (f.kind, f.src, f.dst) in keys or self._alive(f)]
        have = {(f.kind, f.src, f.dst): f for f in self.flight}
        for key, m in keys.items():
            if m.kind not in REQUESTS or key not in self.outbox:
                continue
            old = have.get(key)
            if old is not None and not (m.live and not self._alive(old)):
                continue
            if old is not None:
                self.flight.remove(old)
            out = self.outbox.pop(key)
            self.flight.append(_Flight(m.kind, m.src, m.dst, out, out, self.nodes[m.src].incarnation,
                                       self.nodes[m.src]))
        # requests of a sender that has reset its connections are dead in the outbox too
        for key in [k for k in self.outbox if not self.nodes[k[1]].expects(self.outbox[k])]:
            del self.outbox[key]

    def _alive(self, f: "_Flight") -> bool:
        """Whether the requester's process still waits for the response to f's request."""
        node = self.nodes[f.requester]
        return f.incarnation == node.incarnation and node.expects(f.request)

    def _take(self, kind: int, src: int, dst: int) -> "_Flight | None":
        for f in self.flight:
            if f.kind == kind and f.src == src and f.dst == dst:
                self.flight.remove(f)
                return f
        return None

    def _deliver_request(self, f: "_Flight", answer: bool = False) -> Any:
        """Handle f's request at its receiver and poll; its answer goes in flight if its sender waits
        for it. With `answer`, return the answer (None while the receiver holds the request)."""
        dst, src = self.nodes[f.dst], self.nodes[f.src]
        data = f.message.data()
        inbound = self.RaftRequest.Inbound(
            dst.channel.listenerName(), f.message.correlationId(),
            self.ApiMessageType.fromApiKey(data.apiKey()).highestSupportedVersion(True), data,
            dst.time.milliseconds())
        dst.client.handle(inbound)
        dst.poll()
        self._collect(dst)
        if not inbound.completion.isDone():
            return None
        response = inbound.completion.get()
        if not self._alive(f):
            return response if answer else None  # nobody waits for it (ABSTRACTIONS: responses nobody waits for)
        rkind = f.kind + 1
        if rkind == BQE_RESPONSE and _partition(response.data()).errorCode() == 0:
            return None  # a NONE acknowledgement (ABSTRACTIONS)
        self.flight.append(_Flight(rkind, f.dst, f.src, response, f.request, f.incarnation, dst))
        return None

    def _deliver_response(self, f: "_Flight") -> None:
        node = self.nodes[f.dst]
        node.channel.mockReceive(self.RaftResponse.Inbound(f.message.correlationId(), f.message.data(),
                                                            f.request.destination()))
        node.poll()
        self._collect(node)

    # --- observation ------------------------------------------------------------------------

    def observe(self) -> dict[str, Any]:
        view: dict[str, Any] = {}
        for node in self.nodes:
            q = node.quorum()
            role = node.role(q)
            state = self.state_field.get(q)
            voted = NO_ID
            if role in self.voted_roles:
                key = state.election().optionalVotedKey()
                voted = key.get().id() if key.isPresent() else NO_ID
            hw_opt = q.highWatermark()
            hw = node.offset(hw_opt.get().offset()) if hw_opt.isPresent() else NO_ID
            if role == RESIGNED or (role != LEADER and not self.params.follower_hw):
                hw = NO_ID
            self._node_view(view, node.id, role, q.epoch(), q.leaderIdOrSentinel(), voted, node.log_view()[0], hw)
        view["network"] = sorted(self._message_text(f) for f in self.flight)
        return view

    def abstract(self, state: KraftState) -> dict[str, Any]:
        view: dict[str, Any] = {}
        for i, n in enumerate(state.nodes):
            voted = n.voted if n.role in self.voted_roles else NO_ID
            hw = n.hw if (n.role == LEADER or self.params.follower_hw) and n.role != RESIGNED else NO_ID
            self._node_view(view, i, n.role, n.epoch, n.leader, voted, [(e, k) for e, k in n.log], hw)
        view["network"] = sorted(_model_message_text(m, self.pre_vote) for m in state.network)
        return view

    @staticmethod
    def _node_view(view: dict[str, Any], i: int, role: int, epoch: int, leader: int, voted: int,
                   log: list[tuple[int, int]], hw: int) -> None:
        view[f"node{i}.role"] = ROLE_NAMES[role] if 0 <= role < len(ROLE_NAMES) else str(role)
        view[f"node{i}.epoch"] = int(epoch)
        view[f"node{i}.leader"] = int(leader)
        view[f"node{i}.voted"] = int(voted)
        view[f"node{i}.log"] = [f"{e}:{kind_name(k) if isinstance(k, int) else k}" for e, k in log]
        view[f"node{i}.hw"] = int(hw)

    def _message_text(self, f: "_Flight") -> str:
        data = f.message.data()
        part = _partition(data)
        name = MESSAGE_NAMES[f.kind]
        if f.kind == VOTE_REQUEST:
            live = self._alive(f)
            fields = (int(live), part.replicaEpoch(), part.lastOffsetEpoch(), f.offsets["last"])
            if self.pre_vote:
                fields += (int(part.preVote()),)
        elif f.kind == VOTE_RESPONSE:
            fields = (part.leaderEpoch(), part.leaderId(), _err(part.errorCode()), int(part.voteGranted()))
        elif f.kind == BQE_REQUEST:
            live = self._alive(f)
            fields = (int(live), part.leaderEpoch())
        elif f.kind == BQE_RESPONSE:
            fields = (part.leaderEpoch(), part.leaderId(), _err(part.errorCode()))
        elif f.kind == FETCH_REQUEST:
            live = self._alive(f)
            fields = (int(live), part.currentLeaderEpoch(), f.offsets["fetch"], part.lastFetchedEpoch())
        else:
            div = part.divergingEpoch()
            div_epoch = div.epoch()
            requested = _partition(f.request.data()).lastFetchedEpoch()
            if div_epoch == 0 and div.endOffset() == 0 and requested > 0:
                div_epoch = requested  # MockLog's answer below the log's first epoch (ABSTRACTIONS)
            leader = part.currentLeader()
            records = self._records(part.records())
            fields = (leader.leaderEpoch(), leader.leaderId(), _err(part.errorCode()), div_epoch,
                      f.offsets["div"], "[" + ",".join(records) + "]", f.offsets["hw"])
        return f"{name} {f.src}->{f.dst} " + " ".join(str(x) for x in fields)

    def _records(self, records: Any) -> list[str]:
        out = []
        if records is None:
            return out
        for batch in records.batches():
            out += [f"{batch.partitionLeaderEpoch()}:{k}" for k in self._batch_kinds(batch) if k is not None]
        return out

    def _batch_kinds(self, batch: Any) -> list[str | None]:
        """The model's kind of each record of a batch: Data, LeaderChange, Voters[ids]; None for the
        records the model does not have (ABSTRACTIONS: control records)."""
        if not batch.isControlBatch():
            return [kind_name(DATA) for _ in batch]
        CRT, kinds, records = self.ControlRecordType, [], list(batch)
        types = [CRT.parse(r.key()) for r in records]
        epoch_start = any(t == CRT.LEADER_CHANGE for t in types)
        for record, t in zip(records, types):
            if t == CRT.LEADER_CHANGE:
                kinds.append(kind_name(LEADER_CHANGE))
            elif t == CRT.KRAFT_VOTERS and not epoch_start:
                voters = self.J("org.apache.kafka.common.record.ControlRecordUtils").deserializeVotersRecord(record)
                kinds.append("Voters" + str(sorted(int(v.voterId()) for v in voters.voters())))
            elif t in (CRT.KRAFT_VERSION, CRT.KRAFT_VOTERS):
                kinds.append(None)
            else:
                kinds.append(str(t))
        return kinds

    def known_divergence(self, state: KraftState, action: Any, successor: KraftState,
                         real: dict[str, Any]) -> str | None:
        return known_divergence(state, action, successor, real, self.params.bootstrap)

    def abstractions(self) -> dict[str, str]:
        """ABSTRACTIONS that apply to these jars: the pre-vote ones only where there is pre-vote."""
        out = {k: v for k, v in ABSTRACTIONS.items() if self.pre_vote or k not in PRE_VOTE_ONLY}
        if self.pre_vote:
            out["voted"] = VOTED_PRE_VOTE
        return out

    def close(self) -> None:
        self.nodes, self.flight, self.outbox = [], [], {}


PRE_VOTE_ONLY = (UNATTACHED_EXPIRED, RESIGNED_STANDS)
VOTED_PRE_VOTE = ("compared for Unattached, Prospective, Candidate and Follower (whose ElectionState keeps the vote"
                  " of its epoch, as in Kafka 4.1): Kafka's LeaderState and ResignedState keep no vote; the model"
                  " keeps the vote of the epoch there, and no rule reads it in those roles")

FOLLOWER_VOTE = ("the jars' FollowerState persists no vote (ElectionState.withElectedLeader, before KIP-996's"
                 " ElectionState with both a leader and a vote): a follower that had voted for itself restarts"
                 " as Follower, where Kafka 4.1 (the model) restarts it as Candidate")


RESIGN_IN_COMMIT_STEP = ("a leader whose own removal has committed resigns in its next poll"
                         " (RemoveVoterHandler.highWatermarkUpdated -> LeaderState.requestResign, then"
                         " KafkaRaftClient.pollLeader -> transitionToResigned), where the model lets it act"
                         " as leader (handle a request, send) before its ResignAfterRemoval step")


def known_divergence(state: KraftState, action: Any, successor: KraftState, real: dict[str, Any],
                     bootstrap: int | None = None) -> str | None:
    """The documented divergence a difference after `action` is, or None: a version gap between the
    jars (trunk of 2024-12-27) and Kafka 4.1, which the model describes, or a step the real code
    takes together with the next one."""
    for i, n in enumerate(successor.nodes if bootstrap is not None else ()):
        if n.role == LEADER and real.get(f"node{i}.role") == ROLE_NAMES[RESIGNED] \
                and real.get(f"node{i}.epoch") == n.epoch:
            voters, offset = last_voter_set(n.log, bootstrap)
            if not voters >> i & 1 and offset < n.hw:
                return RESIGN_IN_COMMIT_STEP
    if isinstance(action, A.Restart):
        i = action.node
        before, after = state.nodes[i], successor.nodes[i]
        if (before.role == FOLLOWER and before.voted == i and after.role == CANDIDATE
                and real.get(f"node{i}.role") == ROLE_NAMES[FOLLOWER] and real.get(f"node{i}.leader") == before.leader):
            return FOLLOWER_VOTE
    return None


def _polled(action: Any) -> int | None:
    """The node whose client a step polls (None: a step on the network only, or a new process)."""
    kind = type(action)
    if kind in (A.Restart, A.DiskLoss, A.DropMessage, A.CutLink, A.HealLink):
        return None
    if kind in (A.AddVoter, A.RemoveVoter):
        return action.leader
    if kind in A.HANDLE_ACTION.values():
        return action.dst
    if hasattr(action, "src"):
        return action.src
    return action.node


def _model_message_text(m: Any, pre_vote: bool = False) -> str:
    name = MESSAGE_NAMES[m.kind]
    if m.kind == VOTE_REQUEST:
        fields = (int(m.live), m.epoch, m.last_epoch, m.last_offset) + ((int(m.pre_vote),) if pre_vote else ())
    elif m.kind == VOTE_RESPONSE:
        fields = (m.epoch, m.leader, ERROR_NAMES.get(m.error, m.error), int(m.granted))
    elif m.kind == BQE_REQUEST:
        fields = (int(m.live), m.epoch)
    elif m.kind == BQE_RESPONSE:
        fields = (m.epoch, m.leader, ERROR_NAMES.get(m.error, m.error))
    elif m.kind == FETCH_REQUEST:
        fields = (int(m.live), m.epoch, m.fetch_offset, m.last_fetched_epoch)
    else:
        records = [f"{e}:{kind_name(k)}" for e, k in m.records]
        fields = (m.epoch, m.leader, ERROR_NAMES.get(m.error, m.error), m.diverging_epoch, m.diverging_offset,
                  "[" + ",".join(records) + "]", m.hw)
    return f"{name} {m.src}->{m.dst} " + " ".join(str(x) for x in fields)


def _err(code: int) -> str:
    return ERROR_NAMES.get(int(code), str(int(code)))


def _partition(data: Any) -> Any:
    """The one partition of a single-partition raft RPC body (request or response)."""
    if hasattr(data, "topics"):
        topics = data.topics()
        if hasattr(topics, "get") and topics.size() > 0:
            t = topics.get(0)
            parts = t.partitions()
            if parts.size() > 0:
                return parts.get(0)
    if hasattr(data, "responses"):
        r = data.responses()
        if r.size() > 0:
            return r.get(0).partitions().get(0)
    return data


def java_list(adapter: KraftAdapter, items: list[str]) -> Any:
    """A java.util.ArrayList of Java strings (a client append's records)."""
    lst = adapter.J("java.util.ArrayList")()
    for x in items:
        lst.add(adapter.J("java.lang.String")(x))
    return lst


class ForgedRequest(NamedTuple):
    """A negative conformance offer: a request (`message`: VoteRequest, BeginQuorumEpochRequest,
    FetchRequest) from `src` to `dst` carrying `epoch`, which src never sent (FORGED's cases); a
    VoteRequest is a pre-vote (KIP-996) with `pre_vote`."""

    message: str
    src: int
    dst: int
    epoch: int
    pre_vote: bool = False


def _not_candidate_of(state: KraftState, i: int, j: int, epoch: int) -> bool:
    """Node i is not the Candidate of `epoch` (which alone sends a standard vote in it), and j is a
    voter of its directory (an observer's INVALID_VOTER_KEY is a check of its own)."""
    n = state.nodes[i]
    return not (n.role == CANDIDATE and n.epoch == epoch) and not state.nodes[j].observer


def _not_prospective_of(state: KraftState, i: int, j: int, epoch: int) -> bool:
    """Node i is not a Prospective of `epoch` (which alone sends a pre-vote in it), and j is a voter of
    its directory."""
    n = state.nodes[i]
    return not (n.role == PROSPECTIVE and n.epoch == epoch) and not state.nodes[j].observer


def _any_sender(state: KraftState, i: int, j: int, epoch: int) -> bool:
    return True


def _stale_epoch(n: Any, top: int) -> int | None:
    """One below the receiver's epoch (none in epoch 0)."""
    return n.epoch - 1 if n.epoch >= 1 else None


def _own_epoch(n: Any, top: int) -> int | None:
    """The receiver's epoch."""
    return n.epoch


def _future_epoch(n: Any, top: int) -> int | None:
    """One above every node's epoch."""
    return top + 1


def _own_epoch_at_a_non_leader(n: Any, top: int) -> int | None:
    """The receiver's epoch, where the receiver does not lead it."""
    return n.epoch if n.role != LEADER else None


# The forged requests offered (refused_offers), by case: (kind, the epoch it carries from the receiver
# and the highest epoch of any node, which senders, a pre-vote). Each is offered only where the model
# refuses it; the pre-votes only where the model and the jars have KIP-996's pre-vote. The real code's
# checks: KafkaRaftClient.handleVoteRequest (INVALID_REQUEST for a last epoch not below the request's, or
# above it for a pre-vote, then validateVoterOnlyRequest: FENCED_LEADER_EPOCH below the receiver's epoch,
# then EpochState.canGrantVote), handleBeginQuorumEpochRequest (validateVoterOnlyRequest),
# handleFetchRequest (INVALID_REQUEST for a last fetched epoch above the request's, then
# tryCompleteFetchRequest's validateLeaderOnlyRequest: FENCED_LEADER_EPOCH below, UNKNOWN_LEADER_EPOCH above
# the receiver's epoch, NOT_LEADER_OR_FOLLOWER at a non-leader).
FORGED: dict[str, tuple[int, Any, Any, bool]] = {
    "VoteRequest with a stale epoch": (VOTE_REQUEST, _stale_epoch, _any_sender, False),
    "VoteRequest from a non-candidate": (VOTE_REQUEST, _own_epoch, _not_candidate_of, False),
    "VoteRequest (pre-vote) with a stale epoch": (VOTE_REQUEST, _stale_epoch, _any_sender, True),
    "VoteRequest (pre-vote) from a non-prospective": (VOTE_REQUEST, _own_epoch, _not_prospective_of, True),
    "BeginQuorumEpochRequest with a stale epoch": (BQE_REQUEST, _stale_epoch, _any_sender, False),
    "FetchRequest with a stale epoch": (FETCH_REQUEST, _stale_epoch, _any_sender, False),
    "FetchRequest with a future epoch": (FETCH_REQUEST, _future_epoch, _any_sender, False),
    "FetchRequest at a non-leader": (FETCH_REQUEST, _own_epoch_at_a_non_leader, _any_sender, False),
}


class _Flight:
    """A real message in flight, mirroring the model's message of the same (kind, src, dst)."""

    __slots__ = ("kind", "src", "dst", "message", "request", "incarnation", "offsets")

    def __init__(self, kind: int, src: int, dst: int, message: Any, request: Any, incarnation: int,
                 offsets: "_Node | None" = None) -> None:
        self.kind, self.src, self.dst, self.message = kind, src, dst, message
        self.request = request  # the RaftRequest.Outbound this message is (or answers)
        self.incarnation = incarnation  # of the requester's process (a restart makes a new one)
        # the model's offsets, read against the log of the node that wrote the message, when it did
        # (that node may lose its disk while the message is in flight)
        self.offsets: dict[str, int] = {}
        if offsets is not None:
            part = _partition(message.data())
            if kind == VOTE_REQUEST:
                self.offsets["last"] = offsets.offset(part.lastOffset())
            elif kind == FETCH_REQUEST:
                self.offsets["fetch"] = offsets.offset(part.fetchOffset())
            elif kind == FETCH_RESPONSE:
                self.offsets["div"] = offsets.offset(part.divergingEpoch().endOffset())
                self.offsets["hw"] = offsets.offset(part.highWatermark())

    @property
    def requester(self) -> int:
        return self.src if self.kind in REQUESTS else self.dst


class _Node:
    """One model node: its disk (MockLog, MockQuorumStateStore) outlives its process (the client)."""

    def __init__(self, adapter: KraftAdapter, node_id: int, seed: int) -> None:
        self.a, self.id, self.seed = adapter, node_id, seed
        self.incarnation = 0
        J = adapter.J
        self.time = J("org.apache.kafka.common.utils.MockTime")(0, 0, 0)

    def fresh_disk(self) -> None:
        J = self.a.J
        ctx = J("org.apache.kafka.common.utils.LogContext")(f"[Node {self.id}] ")
        self.log = J("org.apache.kafka.raft.MockLog")(
            J("org.apache.kafka.common.TopicPartition")("__cluster_metadata", 0),
            J("org.apache.kafka.common.Uuid").METADATA_TOPIC_ID, ctx)
        self.store = J("org.apache.kafka.raft.MockQuorumStateStore")()
        if self.a.kraft_version == 1:  # the bootstrap checkpoint 0-0.checkpoint `kafka-storage format` writes
            writer = (J("org.apache.kafka.snapshot.RecordsSnapshotWriter$Builder")()
                      .setRawSnapshotWriter(self.log.createNewSnapshotUnchecked(
                          J("org.apache.kafka.snapshot.Snapshots").BOOTSTRAP_SNAPSHOT_ID).get())
                      .setKraftVersion(J("org.apache.kafka.server.common.KRaftVersion").KRAFT_VERSION_1)
                      .setVoterSet(J("java.util.Optional").of(self.a.bootstrap))
                      .build(J("org.apache.kafka.raft.internals.StringSerde")()))
            writer.freeze()
            writer.close()

    def new_directory(self) -> None:
        """A new disk's directory id (meta.properties): a restart keeps it, a lost disk's replacement
        has a new one."""
        self.disks = getattr(self, "disks", 0) + 1
        self.directory = self.a.J("org.apache.kafka.common.Uuid")(0x6b63686563000000 + self.id, 0x1000 + self.disks)

    def endpoints(self) -> Any:
        J = self.a.J
        return J("org.apache.kafka.raft.Endpoints").fromInetSocketAddresses(J("java.util.Collections").singletonMap(
            J("org.apache.kafka.raft.MockNetworkChannel").LISTENER_NAME,
            J("java.net.InetSocketAddress").createUnresolved(f"node-{self.id}", PORT)))

    def start(self) -> None:
        """A new process on this node's disk: a new client, channel and queue (KafkaRaftClient.initialize)."""
        a, J = self.a, self.a.J
        self.incarnation += 1
        ctx = J("org.apache.kafka.common.utils.LogContext")(f"[Node {self.id}] ")
        self.channel = J("org.apache.kafka.raft.MockNetworkChannel")(a.corr)
        self.queue = J("org.apache.kafka.raft.MockMessageQueue")()
        Collections = J("java.util.Collections")
        endpoints = self.endpoints()
        self.random = a.pinned_random(self.seed * 7919 + self.incarnation)
        self.client = a.ctor.newInstance(
            J("java.util.OptionalInt").of(self.id), self.directory,
            J("org.apache.kafka.raft.internals.StringSerde")(), self.channel, self.queue, self.log,
            J("org.apache.kafka.raft.internals.BatchMemoryPool")(MEMORY_BATCHES, a.krc.MAX_BATCH_SIZE_BYTES), self.time,
            J("org.apache.kafka.raft.MockExpirationService")(self.time),
            a.Integer(0), J("java.lang.Boolean")(True), CLUSTER_ID, a.bootstrap_servers(), endpoints,
            J("org.apache.kafka.server.common.Feature").KRAFT_VERSION.supportedVersionRange(), ctx,
            self.random, a.quorum_config)
        static = a.voter_addrs if a.kraft_version == 0 else J("java.util.HashMap")()
        self.client.initialize(static, self.store, J("org.apache.kafka.common.metrics.Metrics")(self.time))

    def quorum(self) -> Any:
        return self.a.quorum_m.invoke(self.client)

    def role(self, q: Any = None) -> int:
        q = q if q is not None else self.quorum()
        if q.isLeader():
            return LEADER
        if q.isCandidate():
            return CANDIDATE
        if self.a.pre_vote and q.isProspective():
            return PROSPECTIVE
        if q.isFollower():
            return FOLLOWER
        if q.isResigned():
            return RESIGNED
        if q.isUnattached():
            return UNATTACHED
        return -1

    def position(self) -> tuple[int, int]:
        q = self.quorum()
        return self.role(q), q.epoch()

    def poll(self, resign: bool = False) -> None:
        """Up to POLLS polls, and two more per message still queued. Without `resign`, stop at a
        leader whose removal has just committed (RemoveVoterHandler asked it to resign): the next
        poll would resign it, the model's separate ResignAfterRemoval. Stop too at an Unattached
        voter whose election timer has already expired (ABSTRACTIONS, UNATTACHED_EXPIRED): its next
        poll makes it Prospective, the model's separate ElectionTimeout."""
        for _ in range(POLLS):
            self.client.poll()
            if (not resign and self.resign_requested()) or self.stalled():
                return
        while not self.queue.isEmpty():
            self.client.poll()
            if (not resign and self.resign_requested()) or self.stalled():
                return
            self.client.poll()

    def stalled(self) -> bool:
        """An Unattached voter whose election timer has expired: with pre-vote, what a Prospective
        whose election timed out (and, in Kafka 4.1, a Resigned leader whose timer expired) becomes
        (QuorumState.transitionToUnattached keeps the expired timer's remaining time, 0)."""
        if not self.a.pre_vote:
            return False
        q = self.quorum()
        if not q.isUnattached() or not q.isVoter():
            return False
        return bool(self.a.state_field.get(q).hasElectionTimeoutExpired(self.time.milliseconds()))

    def resign_requested(self) -> bool:
        q = self.quorum()
        return bool(q.isLeader() and q.leaderStateOrThrow().isResignRequested())

    def expects(self, out: Any) -> bool:
        """Whether this process's RequestManager still waits for the response to `out`."""
        rm = self.a.rm_field.get(self.client)
        return bool(rm.isResponseExpected(out.destination(), out.correlationId()))

    def log_view(self) -> tuple[list[tuple[int, str]], list[int]]:
        """The log as the model sees it, (epoch, kind) per entry, and for each real offset up to the
        log end the number of those entries below it (the model's offset)."""
        entries: list[tuple[int, str]] = []
        index: list[int] = []
        end = self.log.endOffset().offset()
        while len(index) < end:  # MockLog.read returns at most two batches
            for batch in self.log.read(len(index), self.a.Isolation.UNCOMMITTED).records.batches():
                for kind in self.a._batch_kinds(batch):
                    index.append(len(entries))
                    if kind is not None:
                        entries.append((batch.partitionLeaderEpoch(), kind))
        index.append(len(entries))
        return entries, index

    def offset(self, offset: int) -> int:
        """A real offset of this node's log as the model's (entries below it); -1 stays -1."""
        if offset < 0:
            return int(offset)
        index = self.log_view()[1]
        return index[offset] if offset < len(index) else int(offset) - len(index) + 1 + index[-1]


ADAPTER = KraftAdapter
