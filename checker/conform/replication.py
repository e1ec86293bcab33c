"""The replication model's conformance adapter: its controller against Kafka's ReplicationControlManager.

One real `ReplicationControlManager` (with its ClusterControlManager, FeatureControlManager and
ConfigurationControlManager over one SnapshotRegistry, built as Kafka's ReplicationControlManagerTest
builds its test context) holds the model's one partition, topic "t" partition 0. Every controller
action of the model becomes the request or event that makes Kafka's controller do the same thing,
and the records it returns are replayed into it, as QuorumController does once they are written:

- FenceBroker b: b's heartbeat session expires (MockTime passes the session timeout while every
  other broker's session is kept), maybeFenceOneStaleBroker fences it (handleBrokerFenced).
- UnfenceBroker b: a heartbeat from b, caught up, not asking to be fenced (processBrokerHeartbeat:
  handleBrokerUnfenced).
- HandleAlterPartition: alterPartition with the request's broker id, broker epoch, leader and
  partition epochs, ISR with broker epochs (AlterPartition v3, topic id) and recovery state.
- ElectLeaders: electLeaders for partition t-0, PREFERRED or UNCLEAN.
- AlterPartitionReassignments: alterPartitionReassignments of t-0 to the target replicas.
- ControlledShutdown b: heartbeats from b asking to shut down (CONTROLLED_SHUTDOWN while it
  leads, then SHUTDOWN_NOW once the other brokers heartbeat past its shutdown offset).
- Restart b: registerBroker with a new incarnation and the model's new broker epoch, after b's
  session has expired; an unclean shutdown is handled there (handleBrokerUncleanShutdown).
- CommitMetadata / ControllerFailover (controller_failovers > 0): the records of each write are
  replayed at once, as the active controller does before they commit; a commit drops the
  SnapshotRegistry's snapshots up to the write's offset, a failover reverts to the last committed
  offset and deactivates/activates the ClusterControlManager (QuorumController.renounce, claim).
- Every broker-side action (Fetch, produce, replay, AlterPartition responses, crashes, message
  loss) changes nothing at the controller: the step only compares.

After each step `observe` reads the partition registration and the broker registrations; the
answer to each request (its error code, and on NONE the registration AlterPartition answers with)
is compared inside `step`, whose one-line result reports a different answer.
"""
from __future__ import annotations

import collections
from typing import Any, NamedTuple

from checker.config import ConfigError
from checker.conform.adapter import OtherRefusal
from model.replication.state import AP_ERRORS

TOPIC = "t"
REQUIRED = ("org.apache.kafka.controller.ReplicationControlManager",
            "org.apache.kafka.controller.PartitionChangeBuilder",
            "org.apache.kafka.common.utils.MockTime")
SESSION_TIMEOUT_MS = 1000

# Where the model is coarser than Kafka's controller, or an input is fixed (spec/replication.md,
# "Conformance with Kafka's controller"); the engine reports these with every verdict.
ABSTRACTIONS = {
    "partition.isr": "ISR, ELR and LastKnownELR are compared as sets: the model keeps sorted tuples, Kafka keeps "
                     "lists in the order its records wrote them (a reordering-only AlterPartition is not sent)",
    "metadata.version": "Kafka's controller runs at MetadataVersion.latestTesting() of the jars (ELR supported, "
                        "directory assignment, BrokerRegistrationChangeRecord), the model at Kafka 4.1's latest; "
                        "eligible.leader.replicas.version is 1 exactly when the model's elr_enabled is",
    "topic": "the model's one partition is topic 't' partition 0 (its id is CreateTopics' random one; "
             "incarnation ids are random too, and no rule reads them), one log directory per broker (every "
             "directory online); AlterPartition goes as version 3 (topic ids, member epochs)",
    "Restart": "Kafka's jars (trunk of 2024-12-27) call the unclean-shutdown handler for every new incarnation; "
               "Kafka 4.1 skips it when the broker's previous epoch shows a clean shutdown. The adapter's handler "
               "calls handleBrokerUncleanShutdown only for a broker without the model's clean-shutdown marker. "
               "MockTime passes the session timeout before the registration (the old session has expired)",
    "ControlledShutdown": "the model's one step is Kafka's heartbeats with wantShutDown: the shutdown is granted "
                          "in the same step, the other unfenced brokers heartbeating at the latest offset",
    "FenceBroker": "the session expiry: MockTime passes the session timeout while every other broker's session "
                   "is kept, so that only this broker is stale",
    "answer timing": "QuorumController's purgatory (DeferredEventQueue), which holds an answer until its write "
                     "commits, is outside ReplicationControlManager and not driven: the model's held answers are "
                     "compared when the request is handled",
    "broker side": "ReplayMetadata, SendFetch, HandleFetch, HandleFetchResponse, ShrinkIsr, "
                   "HandleAlterPartitionResponse, Produce, Crash, LossyCrash, DropMessage: Scala in Kafka's core "
                   "(Partition, ReplicaManager), not in the jars; these steps only compare the controller's state",
    "broker.in_controlled_shutdown": "compared for unfenced brokers only: after a controlled shutdown of a "
                                     "leader Kafka's fenced registration keeps inControlledShutdown until the broker "
                                     "registers again (handleBrokerFenced writes only the fencing), the model "
                                     "clears it; no decision reads it on a fenced broker (isActive and ISR "
                                     "eligibility test fenced "
                                     "first)",
    "KAFKA-19522": "Kafka 4.1 elects the last known leader only when it is acceptable (KAFKA-19522); the jars' "
                   "trunk of 2024-12-27 predates the fix and elects it fenced or uncleanly restarted: "
                   "a difference of that shape is reported as this divergence (known_divergence), not as agreement",
    "broker.epoch": "broker epochs are the model's (1, 2, ...), given to Kafka's registrations; Kafka derives them "
                    "from the metadata log offset of the registration",
}

_BROKER_SIDE = frozenset({"ReplayMetadata", "SendFetch", "HandleFetch", "HandleFetchResponse", "ShrinkIsr",
                          "HandleAlterPartitionResponse", "Produce", "Crash", "LossyCrash", "DropMessage"})


def known_divergence(state: Any, action: Any, successor: Any, real: dict[str, Any]) -> str | None:
    """The documented divergence a difference after `action` is, or None.

    KAFKA-19522 (Kafka 4.1; the jars' trunk of 2024-12-27 predates it): the last known leader is
    elected only when it is an acceptable leader. Without the fix, a partition whose ISR and ELR are
    empty elects its one LastKnownELR member even while that broker is fenced or has just shut down
    uncleanly (the jars' canElectLastKnownLeader only logs): where the model keeps the partition
    leaderless, the jars' controller makes that broker the RECOVERING sole ISR member."""
    m = successor.controller.partition
    if m.leader != -1 or m.isr or m.elr or len(m.last_known_elr) != 1:
        return None
    x = m.last_known_elr[0]
    if real.get("partition.leader") == x and real.get("partition.isr") == [x] and real.get("partition.recovering"):
        return "KAFKA-19522: the jars elect the last known leader although it is not an acceptable leader"
    return None


class _Reflect:
    """Calls to package-private Kafka methods (JPype exposes public members only): the controller
    classes' methods are package-private, so they are reached through java.lang.reflect, as the
    class path allows."""

    def __init__(self) -> None:
        import jpype
        self._jpype = jpype
        self._methods: dict[tuple[Any, str, int], Any] = {}
        self._box = {
            "int": jpype.JClass("java.lang.Integer").valueOf,
            "long": jpype.JClass("java.lang.Long").valueOf,
            "short": jpype.JClass("java.lang.Short").valueOf,
            "boolean": jpype.JClass("java.lang.Boolean").valueOf,
        }

    def method(self, cls: Any, name: str, arity: int) -> Any:
        key = (str(cls.getName()), name, arity)
        m = self._methods.get(key)
        if m is None:
            c = cls
            while c is not None and m is None:
                for candidate in c.getDeclaredMethods():
                    if candidate.getName() == name and candidate.getParameterCount() == arity:
                        m = candidate
                        break
                c = c.getSuperclass()
            if m is None:
                raise LookupError(f"{cls.getName()}.{name}/{arity}")
            m.setAccessible(True)
            self._methods[key] = m
        return m

    def args(self, m: Any, args: tuple) -> Any:
        jpype = self._jpype
        out = jpype.JArray(jpype.JObject)(len(args))
        for i, (t, a) in enumerate(zip(m.getParameterTypes(), args)):
            box = self._box.get(str(t.getName()))
            out[i] = box(a) if box is not None else a
        return out

    def call(self, obj: Any, name: str, *args: Any) -> Any:
        m = self.method(obj.getClass(), name, len(args))
        return m.invoke(obj, self.args(m, args))

    def new(self, class_name: str, *args: Any) -> Any:
        cls = self._jpype.JClass("java.lang.Class").forName(class_name)
        for c in cls.getDeclaredConstructors():
            if c.getParameterCount() == len(args):
                c.setAccessible(True)
                return c.newInstance(self.args(c, args))
        raise LookupError(f"{class_name}/{len(args)}")


def _ints(xs: Any) -> list[int]:
    return [int(x) for x in xs]


class ReplicationAdapter:
    """A real ReplicationControlManager driven along the replication model's controller actions."""

    model_name = "replication"

    def __init__(self, model: Any) -> None:
        import jpype
        import jpype.imports  # noqa: F401
        from checker.conform.jvm import has_class
        missing = [c for c in REQUIRED if not has_class(c)]
        if missing:
            raise ConfigError(f"the class path lacks {', '.join(missing)}: the replication conformance needs Kafka's "
                              "metadata, server-common and clients jars (and MockTime, in the clients test jar)")
        self.model = model
        self.p = model.params
        self.jpype = jpype
        self.r = _Reflect()
        J = jpype.JClass
        self.J = J
        self.Integer = J("java.lang.Integer")
        self.Uuid = J("org.apache.kafka.common.Uuid")
        self.topic_id: Any = None  # CreateTopics draws it
        self.cluster_id = "kcheck-conform"
        self.dirs = [self.Uuid.fromString("TESTBROKER%05dDIRAAAA" % b) for b in range(self.p.n)]
        self.mv = J("org.apache.kafka.server.common.MetadataVersion").latestTesting()
        self.failovers = self.p.controller_failovers > 0
        self.rcm: Any = None
        self.answers: collections.Counter = collections.Counter()  # AlterPartition answers by error, over all resets

    # ------------------------------------------------------------------ building the controller
    def reset(self, state: Any) -> None:
        J, r = self.J, self.r
        from java.util import Collections, HashMap, Optional
        self.time = J("org.apache.kafka.common.utils.MockTime")()
        log_context = J("org.apache.kafka.common.utils.LogContext")()
        self.snapshots = J("org.apache.kafka.timeline.SnapshotRegistry")(log_context)
        config_b = r.new("org.apache.kafka.controller.ConfigurationControlManager$Builder")
        for name, arg in (("setSnapshotRegistry", self.snapshots), ("setStaticConfig", HashMap()),
                          ("setKafkaConfigSchema", self._config_schema())):
            r.call(config_b, name, arg)
        self.config = r.call(config_b, "build")
        QuorumFeatures = J("org.apache.kafka.controller.QuorumFeatures")
        feature_b = J("org.apache.kafka.controller.FeatureControlManager$Builder")()
        quorum = QuorumFeatures(0, QuorumFeatures.defaultSupportedFeatureMap(True),
                                Collections.singletonList(self.Integer.valueOf(0)))
        for name, arg in (("setSnapshotRegistry", self.snapshots), ("setQuorumFeatures", quorum),
                          ("setMetadataVersion", self.mv)):
            r.call(feature_b, name, arg)
        self.features = r.call(feature_b, "build")
        ElrVersion = J("org.apache.kafka.server.common.EligibleLeaderReplicasVersion")
        level = (ElrVersion.ELRV_1 if self.p.elr else ElrVersion.ELRV_0).featureLevel()
        self.features.replay(J("org.apache.kafka.common.metadata.FeatureLevelRecord")()
                             .setName(ElrVersion.FEATURE_NAME).setFeatureLevel(level))
        handler_iface = J("org.apache.kafka.controller.ClusterControlManager$BrokerUncleanShutdownHandler")
        self.unclean_restart = True  # set by Restart from the model's clean-shutdown marker
        adapter = self

        @self.jpype.JImplements(handler_iface)
        class Handler:
            @self.jpype.JOverride
            def addRecordsForShutdown(self, broker_id: Any, records: Any) -> None:
                if adapter.unclean_restart:
                    r.call(adapter.rcm, "handleBrokerUncleanShutdown", int(broker_id), records)

        self._handler = Handler()
        cluster_b = r.new("org.apache.kafka.controller.ClusterControlManager$Builder")
        placer = J("org.apache.kafka.metadata.placement.StripedReplicaPlacer")(J("java.util.Random")(0))
        for name, arg in (("setLogContext", log_context), ("setTime", self.time), ("setClusterId", self.cluster_id),
                          ("setSnapshotRegistry", self.snapshots),
                          ("setSessionTimeoutNs", SESSION_TIMEOUT_MS * 1_000_000), ("setReplicaPlacer", placer),
                          ("setFeatureControlManager", self.features),
                          ("setBrokerUncleanShutdownHandler", self._handler)):
            r.call(cluster_b, name, arg)
        self.cluster = r.call(cluster_b, "build")
        rcm_b = r.new("org.apache.kafka.controller.ReplicationControlManager$Builder")
        for name, arg in (("setSnapshotRegistry", self.snapshots), ("setLogContext", log_context),
                          ("setMaxElectionsPerImbalance", 2 ** 31 - 1), ("setConfigurationControl", self.config),
                          ("setClusterControl", self.cluster), ("setCreateTopicPolicy", Optional.empty())):
            r.call(rcm_b, name, arg)
        r.call(rcm_b, "setFeatureControl", self.features)
        self.rcm = r.call(rcm_b, "build")
        self.cluster.activate()
        self.offset = 0
        self.pending: list[int] = []  # end offsets of the writes not yet committed (controller_failovers > 0)
        self.committed = 0
        for b, reg in enumerate(state.controller.brokers):
            rec = J("org.apache.kafka.common.metadata.RegisterBrokerRecord")()
            rec.setBrokerId(b).setBrokerEpoch(reg.epoch).setFenced(reg.fenced).setRack(None)
            rec.setIncarnationId(self.Uuid.randomUuid())
            rec.setLogDirs(Collections.singletonList(self.dirs[b]))
            endpoint = J("org.apache.kafka.common.metadata.RegisterBrokerRecord$BrokerEndpoint")
            rec.endPoints().add(self._endpoint(endpoint, b))
            self._replay([J("org.apache.kafka.server.common.ApiMessageAndVersion")(rec, 3)])
        self._create_topic(state)
        self._commit_all()

    def _endpoint(self, cls: Any, b: int) -> Any:
        return cls().setName("PLAINTEXT").setHost("localhost").setPort(9092 + b).setSecurityProtocol(0)

    def _config_schema(self) -> Any:
        """The two topic configs the controller reads, with Kafka's defaults (the schema of
        KafkaConfig/LogConfig lives in core; the metadata tests' FakeKafkaConfigSchema is the same)."""
        J = self.J
        from java.util import Collections, HashMap
        ConfigDef = J("org.apache.kafka.common.config.ConfigDef")
        Type = J("org.apache.kafka.common.config.ConfigDef$Type")
        Importance = J("org.apache.kafka.common.config.ConfigDef$Importance")
        Resource = J("org.apache.kafka.common.config.ConfigResource$Type")
        defs, synonyms = HashMap(), HashMap()
        for resource in (Resource.BROKER, Resource.TOPIC):
            d = ConfigDef()
            d.define("unclean.leader.election.enable", Type.BOOLEAN, "false", Importance.HIGH, "")
            d.define("min.insync.replicas", Type.INT, "1", Importance.HIGH, "")
            defs.put(resource, d)
        Synonym = J("org.apache.kafka.server.config.ConfigSynonym")
        for name in ("unclean.leader.election.enable", "min.insync.replicas"):
            synonyms.put(name, Collections.singletonList(Synonym(name)))
        return J("org.apache.kafka.metadata.KafkaConfigSchema")(defs, synonyms)

    def _context(self, api: str) -> Any:
        """An anonymous request context at the API's latest version (as ControllerRequestContextUtil)."""
        J = self.J
        key = getattr(J("org.apache.kafka.common.protocol.ApiKeys"), api)
        header = J("org.apache.kafka.common.message.RequestHeaderData")()
        header.setRequestApiKey(key.id).setRequestApiVersion(key.latestVersion())
        return J("org.apache.kafka.controller.ControllerRequestContext")(
            header, J("org.apache.kafka.common.security.auth.KafkaPrincipal").ANONYMOUS,
            J("java.util.OptionalLong").empty())

    def _create_topic(self, state: Any) -> None:
        J = self.J
        from java.util import Collections
        Req = J("org.apache.kafka.common.message.CreateTopicsRequestData")
        topic = J("org.apache.kafka.common.message.CreateTopicsRequestData$CreatableTopic")().setName(TOPIC)
        topic.setNumPartitions(-1).setReplicationFactor(-1)
        reg = state.controller.partition
        assignment = J("org.apache.kafka.common.message.CreateTopicsRequestData$CreatableReplicaAssignment")()
        assignment.setPartitionIndex(0).setBrokerIds(self._list(reg.replicas))
        topic.assignments().add(assignment)
        Cfg = J("org.apache.kafka.common.message.CreateTopicsRequestData$CreatableTopicConfig")
        min_isr = str(self.model.config["min_insync_replicas"])
        topic.configs().add(Cfg().setName("min.insync.replicas").setValue(min_isr))
        topic.configs().add(Cfg().setName("unclean.leader.election.enable").setValue(str(self.p.unclean).lower()))
        request = Req()
        request.topics().add(topic)
        result = self.r.call(self.rcm, "createTopics", self._context("CREATE_TOPICS"), request,
                             Collections.singleton(TOPIC))
        error = int(result.response().topics().find(TOPIC).errorCode())
        if error != 0:
            raise RuntimeError(f"CreateTopics answered error code {error}")
        self._replay(result.records())
        # The created topic's id is random: the model's one partition is found by name.
        self.topic_id = self.r.call(self.rcm, "getTopicId", TOPIC)

    def _list(self, xs: Any) -> Any:
        from java.util import ArrayList
        out = ArrayList()
        for x in xs:
            out.add(self.Integer.valueOf(int(x)))
        return out

    # ------------------------------------------------------------------ writing records
    def _replay(self, records: Any) -> int:
        """Replay records as the active controller does after writing them; returns how many."""
        n = 0
        RegisterBrokerRecord = self.J("org.apache.kafka.common.metadata.RegisterBrokerRecord")
        for rv in records:
            self.offset += 1
            n += 1
            msg = rv.message()
            if isinstance(msg, RegisterBrokerRecord):
                self.cluster.replay(msg, self.offset)
                continue
            for target in (self.cluster, self.config, self.rcm, self.features):
                try:
                    target.replay(msg)
                except TypeError:
                    continue  # no replay(record) of this type on this manager
        return n

    def _write(self, records: Any) -> int:
        """One controller event's records: replayed, and with a quorum a pending write."""
        if self.failovers:
            self.snapshots.idempotentCreateSnapshot(self.offset)
        n = self._replay(records)
        if n and self.failovers:
            self.pending.append(self.offset)
        return n

    def _commit_all(self) -> None:
        self.pending.clear()
        self.committed = self.offset
        self.snapshots.deleteSnapshotsUpTo(self.offset)

    # ------------------------------------------------------------------ the step map
    def step(self, state: Any, action: Any, successor: Any) -> str | None:
        kind = type(action).__name__
        if kind in _BROKER_SIDE:
            return None
        try:
            return getattr(self, "_" + kind)(state, action, successor)
        except Exception as e:
            # an ApiException is how the controller refuses a request (QuorumController answers
            # with its error code): a refusal. Any other exception is not an answer: the engine
            # names it as a finding of its own (EXCEPTION).
            if not self._is_api_error(e):
                raise
            text = str(e).splitlines()[0] if str(e) else ""
            return f"{type(e).__name__}: {text}"[:300]

    def _is_api_error(self, e: Exception) -> bool:
        api = self.J("org.apache.kafka.common.errors.ApiException")
        for x in (e, getattr(e, "getCause", lambda: None)()):
            if x is not None and hasattr(x, "getClass") and api.class_.isInstance(x):
                return True
        return False

    def _heartbeat(self, b: int, epoch: int, *, shutdown: bool = False) -> Any:
        J = self.J
        self.r.call(self.cluster, "trackBrokerHeartbeat", b, epoch)
        request = J("org.apache.kafka.common.message.BrokerHeartbeatRequestData")()
        request.setBrokerId(b).setBrokerEpoch(epoch).setCurrentMetadataOffset(self.offset)
        request.setWantFence(False).setWantShutDown(shutdown)
        registered = self.cluster.registerBrokerRecordOffset(b)
        result = self.r.call(self.rcm, "processBrokerHeartbeat", request,
                             registered.getAsLong() if registered.isPresent() else 0)
        return result

    def _FenceBroker(self, state: Any, action: Any, successor: Any) -> str | None:
        b = action.broker
        regs = state.controller.brokers
        self.r.call(self.cluster, "trackBrokerHeartbeat", b, regs[b].epoch)
        self.time.sleep(SESSION_TIMEOUT_MS + 1)
        for o, reg in enumerate(regs):  # every other broker keeps its session
            if o != b:
                self.r.call(self.cluster, "trackBrokerHeartbeat", o, reg.epoch)
        while not self.cluster.registration(b).fenced():
            result = self.r.call(self.rcm, "maybeFenceOneStaleBroker")
            self._write(result.records())
            if not bool(result.response()):
                break
        if not self.cluster.registration(b).fenced():
            return f"broker {b}'s session expired but maybeFenceOneStaleBroker did not fence it"
        return None

    def _UnfenceBroker(self, state: Any, action: Any, successor: Any) -> str | None:
        b = action.broker
        result = self._heartbeat(b, state.controller.brokers[b].epoch)
        self._write(result.records())
        if result.response().isFenced():
            return f"broker {b}'s heartbeat left it fenced"
        return None

    def _HandleAlterPartition(self, state: Any, action: Any, successor: Any) -> str | None:
        req = action.request
        real = self._alter_partition(req)
        model = self._model_answer(state, req, successor)
        self.answers[real[0]] += 1
        if model != real:
            return f"AlterPartition answered {real}, the model {model}"
        return None

    def _alter_partition(self, req: Any) -> tuple:
        """alterPartition with the request's broker id, broker epoch, leader and partition epochs, ISR with
        broker epochs and recovery state; its records written. The answer as the model writes one: (error,)
        or on NONE (NONE, leader, leader epoch, ISR, partition epoch, recovering)."""
        J = self.J
        D = "org.apache.kafka.common.message.AlterPartitionRequestData"
        members = J("java.util.ArrayList")()
        for m in req.new_isr:
            members.add(J(D + "$BrokerState")().setBrokerId(m.broker_id).setBrokerEpoch(m.broker_epoch))
        part = J(D + "$PartitionData")().setPartitionIndex(0).setLeaderEpoch(req.leader_epoch)
        part.setPartitionEpoch(req.partition_epoch).setLeaderRecoveryState(1 if req.recovering else 0)
        part.setNewIsrWithEpochs(members)
        topic = J(D + "$TopicData")().setTopicName(TOPIC).setTopicId(self.topic_id)
        topic.partitions().add(part)
        data = J(D)().setBrokerId(req.leader).setBrokerEpoch(req.broker_epoch)
        data.topics().add(topic)
        try:
            result = self.r.call(self.rcm, "alterPartition", self._context("ALTER_PARTITION"), data)
        except Exception as e:
            cause = e.getCause() if hasattr(e, "getCause") else None
            if cause is None or str(cause.getClass().getSimpleName()) != "StaleBrokerEpochException":
                raise
            return ("STALE_BROKER_EPOCH",)  # QuorumController answers the whole request with it
        self._write(result.records())
        answer = result.response().topics().get(0).partitions().get(0)
        code = int(answer.errorCode())
        name = str(self.J("org.apache.kafka.common.protocol.Errors").forCode(code).name())
        return (name,) if name != "NONE" else (name, int(answer.leaderId()), int(answer.leaderEpoch()),
                                                sorted(_ints(answer.isr())), int(answer.partitionEpoch()),
                                                int(answer.leaderRecoveryState()) == 1)

    @staticmethod
    def _model_answer(state: Any, req: Any, successor: Any) -> tuple:
        def responses(s: Any) -> list:
            held = [r for batch in s.controller.uncommitted for r in batch.responses]
            return [r for r in list(s.ap_responses) + held if r.request == req]
        new = responses(successor)
        for old in responses(state):
            if old in new:
                new.remove(old)
        if len(new) != 1:
            return ("no answer in the model",)
        resp = new[0]
        name = AP_ERRORS[resp.error]
        if name != "NONE":
            return (name,)
        reg = resp.registration[0]
        return (name, reg.leader, reg.leader_epoch, sorted(reg.isr), reg.partition_epoch, reg.recovering)

    def _ElectLeaders(self, state: Any, action: Any, successor: Any) -> str | None:
        J = self.J
        D = "org.apache.kafka.common.message.ElectLeadersRequestData"
        ElectionType = J("org.apache.kafka.common.ElectionType")
        request = J(D)().setElectionType(getattr(ElectionType, action.election).value)
        tp = J(D + "$TopicPartitions")().setTopic(TOPIC).setPartitions(self._list([0]))
        coll = J(D + "$TopicPartitionsCollection")()
        coll.add(tp)
        request.setTopicPartitions(coll)
        result = self.r.call(self.rcm, "electLeaders", request)
        code = int(result.response().replicaElectionResults().get(0).partitionResult().get(0).errorCode())
        self._write(result.records())
        if code != 0:
            name = self.J("org.apache.kafka.common.protocol.Errors").forCode(code).name()
            return f"ElectLeaders {action.election} answered {name}, the model NONE"
        return None

    def _AlterPartitionReassignments(self, state: Any, action: Any, successor: Any) -> str | None:
        J = self.J
        D = "org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData"
        part = J(D + "$ReassignablePartition")().setPartitionIndex(0).setReplicas(self._list(action.target))
        topic = J(D + "$ReassignableTopic")().setName(TOPIC)
        topic.partitions().add(part)
        request = J(D)()
        request.topics().add(topic)
        result = self.r.call(self.rcm, "alterPartitionReassignments", request)
        code = int(result.response().responses().get(0).partitions().get(0).errorCode())
        self._write(result.records())
        if code != 0:
            name = self.J("org.apache.kafka.common.protocol.Errors").forCode(code).name()
            return f"AlterPartitionReassignments to {list(action.target)} answered {name}, the model NONE"
        return None

    def _ControlledShutdown(self, state: Any, action: Any, successor: Any) -> str | None:
        b = action.broker
        regs = state.controller.brokers
        epoch = regs[b].epoch
        for _ in range(3):
            result = self._heartbeat(b, epoch, shutdown=True)
            self._replay(result.records())
            reply = result.response()
            if reply.shouldShutDown():
                break
            if reply.inControlledShutdown():
                manager = self.r.call(self.cluster, "heartbeatManager")
                self.r.call(manager, "maybeUpdateControlledShutdownOffset", b, self.offset)
            for o, reg in enumerate(regs):  # the others heartbeat past the shutdown's records
                if o != b and not reg.fenced and not reg.in_controlled_shutdown:
                    self._replay(self._heartbeat(o, reg.epoch).records())
        else:
            return f"broker {b}'s controlled shutdown was not granted"
        if self.failovers:
            self._commit_all()
        return None

    def _Restart(self, state: Any, action: Any, successor: Any) -> str | None:
        J = self.J
        b = action.broker
        self.time.sleep(SESSION_TIMEOUT_MS + 1)  # the old incarnation's session has expired
        D = "org.apache.kafka.common.message.BrokerRegistrationRequestData"
        request = J(D)().setBrokerId(b).setClusterId(self.cluster_id).setIncarnationId(self.Uuid.randomUuid())
        request.setRack(None).setLogDirs(J("java.util.Collections").singletonList(self.dirs[b]))
        listener = J(D + "$Listener")().setName("PLAINTEXT").setHost("localhost").setPort(9092 + b)
        listener.setSecurityProtocol(0)
        request.listeners().add(listener)
        features = J(D + "$Feature")().setName("metadata.version")
        features.setMinSupportedVersion(self.mv.featureLevel()).setMaxSupportedVersion(self.mv.featureLevel())
        request.features().add(features)
        ElrVersion = J("org.apache.kafka.server.common.EligibleLeaderReplicasVersion")
        elr = J(D + "$Feature")().setName(ElrVersion.FEATURE_NAME).setMinSupportedVersion(0)
        elr.setMaxSupportedVersion(ElrVersion.ELRV_1.featureLevel())
        request.features().add(elr)
        self.unclean_restart = not state.brokers[b].clean
        finalized = self.r.call(self.features, "finalizedFeatures", 2 ** 63 - 1)
        new_epoch = successor.controller.brokers[b].epoch
        result = self.cluster.registerBroker(request, new_epoch, finalized)
        self._replay(result.records())
        if self.failovers:
            self._commit_all()
        return None

    def _CommitMetadata(self, state: Any, action: Any, successor: Any) -> str | None:
        if not self.pending:
            return "the model commits a controller write that Kafka's controller did not make"
        self.committed = self.pending.pop(0)
        self.snapshots.deleteSnapshotsUpTo(self.committed)
        return None

    def _ControllerFailover(self, state: Any, action: Any, successor: Any) -> str | None:
        self.snapshots.revertToSnapshot(self.committed)
        self.offset = self.committed
        self.pending.clear()
        self.cluster.deactivate()
        self.cluster.activate()
        return None

    # ------------------------------------------------------------------ the abstraction map
    def observe(self) -> dict[str, Any]:
        part = self.r.call(self.rcm, "getPartition", self.topic_id, 0)
        out: dict[str, Any] = {
            "partition.replicas": _ints(part.replicas),
            "partition.isr": sorted(_ints(part.isr)),
            "partition.elr": sorted(_ints(part.elr)),
            "partition.last_known_elr": sorted(_ints(part.lastKnownElr)),
            "partition.leader": int(part.leader),
            "partition.leader_epoch": int(part.leaderEpoch),
            "partition.partition_epoch": int(part.partitionEpoch),
            "partition.recovering": str(part.leaderRecoveryState.name()) == "RECOVERING",
            "partition.removing": _ints(part.removingReplicas),
            "partition.adding": _ints(part.addingReplicas),
        }
        for b in range(self.p.n):
            reg = self.cluster.registration(b)
            out[f"broker{b}.epoch"] = int(reg.epoch())
            out[f"broker{b}.fenced"] = bool(reg.fenced())
            # a fenced registration keeps Kafka's flag until the broker registers again: read only unfenced
            out[f"broker{b}.in_controlled_shutdown"] = bool(reg.inControlledShutdown()) and not reg.fenced()
        if self.failovers:
            out["controller.uncommitted_writes"] = len(self.pending)
        return out

    def abstract(self, state: Any) -> dict[str, Any]:
        reg = state.controller.partition
        out: dict[str, Any] = {
            "partition.replicas": list(reg.replicas),
            "partition.isr": sorted(reg.isr),
            "partition.elr": sorted(reg.elr),
            "partition.last_known_elr": sorted(reg.last_known_elr),
            "partition.leader": reg.leader,
            "partition.leader_epoch": reg.leader_epoch,
            "partition.partition_epoch": reg.partition_epoch,
            "partition.recovering": reg.recovering,
            "partition.removing": list(reg.removing),
            "partition.adding": list(reg.adding),
        }
        for b, broker in enumerate(state.controller.brokers):
            out[f"broker{b}.epoch"] = broker.epoch
            out[f"broker{b}.fenced"] = broker.fenced
            out[f"broker{b}.in_controlled_shutdown"] = broker.in_controlled_shutdown and not broker.fenced
        if self.failovers:
            out["controller.uncommitted_writes"] = len(state.controller.uncommitted)
        return out

    # --- negative conformance: what the model refuses, offered to the real controller -------------

    def refused_offers(self, state: Any) -> dict[str, list[Any]]:
        """The requests the model's controller rules refuse in `state` (the rule's own error, never a
        bound or a budget of the model): ElectLeaders PREFERRED or UNCLEAN that
        rules.elect_leader_request answers with an error (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
        ELIGIBLE_LEADERS_NOT_AVAILABLE), a reassignment rules.alter_partition_reassignment refuses, and
        AlterPartition requests no leader sent (FORGED_ALTER_PARTITION) that rules.validate_alter_partition
        refuses."""
        from model.replication import actions as A
        from model.replication import controller as rules

        reg, brokers, p = state.controller.partition, state.controller.brokers, self.p
        out: dict[str, list[Any]] = {}
        for election in (rules.PREFERRED, rules.UNCLEAN):
            error, _ = rules.elect_leader_request(reg, brokers, election, min_isr=p.min_isr, elr_enabled=p.elr,
                                                  reassignment_epoch_bump=self.model.ctx.r.reassignment_epoch_bump)
            if error != rules.NONE:
                out.setdefault(f"ElectLeaders {election}", []).append(A.ElectLeaders(election))
        if not rules.reassigning(reg):
            for target in self.model._targets:
                if target == reg.replicas:
                    continue
                error, _ = rules.alter_partition_reassignment(
                    reg, brokers, target, min_isr=p.min_isr, elr_enabled=p.elr,
                    reassignment_epoch_bump=self.model.ctx.r.reassignment_epoch_bump)
                if error != rules.NONE:
                    out.setdefault("AlterPartitionReassignments", []).append(A.AlterPartitionReassignments(target))
        for label, forge in FORGED_ALTER_PARTITION.items():
            for req in forge(reg, brokers):
                if self._model_alter_partition(state, req) != rules.NONE:
                    out.setdefault(label, []).append(ForgedAlterPartition(req))
        return out

    def _model_alter_partition(self, state: Any, req: Any) -> str:
        """The model controller's answer to an AlterPartition request (rules.validate_alter_partition, with
        the variant's member checks), before any change."""
        from model.replication import controller as rules

        return rules.validate_alter_partition(
            state.controller.partition, state.controller.brokers, broker_id=req.leader, broker_epoch=req.broker_epoch,
            leader_epoch=req.leader_epoch, partition_epoch=req.partition_epoch, new_isr=req.new_isr,
            recovering=req.recovering, check_member_epochs=self.model.ctx.r.member_broker_epochs,
            check_member_fenced=self.model.ctx.r.member_fenced_check)

    def offer(self, state: Any, action: Any) -> str | None:
        """Offer the real controller a request the model refuses: its error answer with the model's beside
        it, None if it answered NONE; OtherRefusal if it refused with another error than the model's (the
        answers are compared as for an enabled step)."""
        from model.replication import controller as rules

        reg, brokers, p = state.controller.partition, state.controller.brokers, self.p
        bump = self.model.ctx.r.reassignment_epoch_bump
        if isinstance(action, ForgedAlterPartition):
            expected = self._model_alter_partition(state, action.request)
            real = self._alter_partition(action.request)[0]
            if real == "NONE":
                return None
            if real != expected:
                raise OtherRefusal(real, expected)
            return f"answered {real} (model: {expected})"
        if type(action).__name__ == "ElectLeaders":
            expected, _ = rules.elect_leader_request(reg, brokers, action.election, min_isr=p.min_isr,
                                                     elr_enabled=p.elr, reassignment_epoch_bump=bump)
            refused = self._ElectLeaders(state, action, None)
        else:
            expected, _ = rules.alter_partition_reassignment(reg, brokers, action.target, min_isr=p.min_isr,
                                                             elr_enabled=p.elr, reassignment_epoch_bump=bump)
            refused = self._AlterPartitionReassignments(state, action, None)
        if refused is None:
            return None
        answer = refused.split(" answered ", 1)[1].split(",", 1)[0]
        if answer != expected:
            raise OtherRefusal(answer, expected)
        return f"answered {answer} (model: {expected})"

    def abstractions(self) -> dict[str, str]:
        return dict(ABSTRACTIONS)

    def close(self) -> None:
        self.rcm = None


class ForgedAlterPartition(NamedTuple):
    """A negative conformance offer: an AlterPartition request (model.replication.state.AlterPartitionRequest)
    that no leader sent, offered to the controller as it is."""

    request: Any


def _forged_alter_partitions(change: Any) -> Any:
    """A case of FORGED_ALTER_PARTITION: from the registration and the brokers, the requests whose fields
    `change` makes from the current leader's request keeping the registration as it is (its epochs and
    broker epoch, the ISR with the members' registered epochs, the recovery state)."""
    from model.replication.state import AlterPartitionRequest, IsrMember

    def forge(reg: Any, brokers: Any) -> list[Any]:
        def request(sender: int, **fields: Any) -> Any:
            base = dict(leader=sender, broker_epoch=brokers[sender].epoch, leader_epoch=reg.leader_epoch,
                        partition_epoch=reg.partition_epoch,
                        new_isr=tuple(IsrMember(b, brokers[b].epoch) for b in reg.isr), recovering=reg.recovering)
            base.update(fields)
            return AlterPartitionRequest(**base)
        return [r for r in change(reg, brokers, request) if r is not None]
    return forge


def _non_leaders(reg: Any, brokers: Any, request: Any) -> list[Any]:
    return [request(b) for b in range(len(brokers)) if b != reg.leader and brokers[b] is not None]


def _leaders(change: Any) -> Any:
    """Requests from the current leader (none while the partition has no leader)."""
    return lambda reg, brokers, request: [change(reg, brokers, request)] if reg.leader >= 0 else []


# The forged AlterPartition requests offered (refused_offers), by case; each offered only where the
# model's rules.validate_alter_partition refuses it. The real controller's checks, in
# ReplicationControlManager.alterPartition: ClusterControlManager.checkBrokerEpoch (STALE_BROKER_EPOCH for
# the whole request), then validateAlterPartitionData: NOT_CONTROLLER for a leader or partition epoch above
# the registration's, FENCED_LEADER_EPOCH for a leader epoch below it, INVALID_REQUEST from a broker that is
# not the leader, INVALID_UPDATE_VERSION for a partition epoch below it, INVALID_REQUEST for an ISR without
# the leader or a RECOVERING state it cannot take (RECOVERED -> RECOVERING, or with more than one member).
FORGED_ALTER_PARTITION = {
    "AlterPartition with a future leader epoch":
        _forged_alter_partitions(_leaders(lambda reg, b, r: r(reg.leader, leader_epoch=reg.leader_epoch + 1))),
    "AlterPartition with a future partition epoch":
        _forged_alter_partitions(_leaders(lambda reg, b, r: r(reg.leader, partition_epoch=reg.partition_epoch + 1))),
    "AlterPartition with a stale leader epoch":
        _forged_alter_partitions(_leaders(lambda reg, b, r: r(reg.leader, leader_epoch=reg.leader_epoch - 1)
                                          if reg.leader_epoch > 0 else None)),
    "AlterPartition with a stale partition epoch":
        _forged_alter_partitions(_leaders(lambda reg, b, r: r(reg.leader, partition_epoch=reg.partition_epoch - 1)
                                          if reg.partition_epoch > 0 else None)),
    "AlterPartition with a stale broker epoch":
        _forged_alter_partitions(_leaders(lambda reg, b, r: r(reg.leader, broker_epoch=b[reg.leader].epoch - 1))),
    "AlterPartition from a non-leader": _forged_alter_partitions(_non_leaders),
    "AlterPartition with an ISR without the leader":
        _forged_alter_partitions(_leaders(lambda reg, b, r: r(reg.leader, new_isr=tuple(
            m for m in r(reg.leader).new_isr if m.broker_id != reg.leader)))),
    "AlterPartition asking RECOVERING":
        _forged_alter_partitions(_leaders(lambda reg, b, r: r(reg.leader, recovering=True))),
}


ADAPTER = ReplicationAdapter

__all__ = ["ADAPTER", "ABSTRACTIONS", "ReplicationAdapter", "known_divergence"]
