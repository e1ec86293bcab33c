"""Table-driven tests of model.replication.partition against Kafka's own unit tests.

Each case names the Kafka test it follows: LeaderEpochFileCacheTest (storage), PartitionTest and
AbstractFetcherThreadTest (core). A log is a tuple of LogEntry; entry i sits at offset i.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.replication import partition as P
from model.replication.records import LogEntry

UNDEFINED = (P.UNDEFINED_EPOCH, P.UNDEFINED_EPOCH_OFFSET)


def log(*runs: tuple[int, int], value: int = 0) -> tuple[LogEntry, ...]:
    """log((epoch, count), ...): `count` records written in `epoch`, in order."""
    return tuple(LogEntry(epoch, value) for epoch, count in runs for _ in range(count))


# PartitionTest#testLastFetchedOffsetValidation: epochs 0 x2, 3 x6, 4 x5, 7 x1, 9 x3 (LEO 17),
# and the leader's current epoch 10 assigned at 17 by makeLeader.
LAST_FETCHED_LOG = log((0, 2), (3, 6), (4, 5), (7, 1), (9, 3))
LAST_FETCHED_CURRENT = (10, 17)


# ---------------------------------------------------------------------------------------------
# The epoch cache (LeaderEpochFileCache.assign / endOffsetFor over explicit entries)
# ---------------------------------------------------------------------------------------------

def cache_of(*assigns: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    cache: list[tuple[int, int]] = []
    for epoch, start in assigns:
        P._assign(cache, epoch, start)
    return tuple(cache)


@pytest.mark.parametrize(
    "assigns, expected",
    [
        pytest.param([(2, 9), (2, 10)], ((2, 9),), id="LeaderEpochFileCacheTest#shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned"),
        pytest.param([(2, 9), (3, 9)], ((3, 9),), id="LeaderEpochFileCacheTest#shouldEnforceMonotonicallyIncreasingStartOffsets"),
        pytest.param([(2, 6), (2, 7)], ((2, 6),), id="LeaderEpochFileCacheTest#shouldNotUpdateEpochAndStartOffsetIfItDidNotChange"),
        pytest.param([(5, 11), (6, 12), (7, 13), (7, 12)], ((5, 11), (7, 12)),
                     id="LeaderEpochFileCacheTest#shouldTruncateIfMatchingEpochButEarlierStartingOffset"),
        pytest.param([(0, 0), (1, 0)], ((1, 0),), id="LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes-assign"),
    ],
)
def test_assign(assigns, expected):
    assert cache_of(*assigns) == expected


@pytest.mark.parametrize(
    "assigns, requested, leo, expected",
    [
        pytest.param([(2, 10)], 2, 11, (2, 11), id="LeaderEpochFileCacheTest#shouldAddEpochAndMessageOffsetToCache"),
        pytest.param([(2, 11), (2, 12)], 2, 14, (2, 14), id="LeaderEpochFileCacheTest#shouldReturnLogEndOffsetIfLatestEpochRequested"),
        pytest.param([(2, 11), (3, 12)], -1, 0, UNDEFINED, id="LeaderEpochFileCacheTest#shouldReturnUndefinedOffsetIfUndefinedEpochRequested"),
        pytest.param([], 0, 0, UNDEFINED, id="LeaderEpochFileCacheTest#shouldReturnUnsupportedIfNoEpochRecorded"),
        pytest.param([], -1, 73, UNDEFINED, id="LeaderEpochFileCacheTest#shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested"),
        pytest.param([(5, 11), (6, 12), (7, 13)], 4, 0, (4, 11), id="LeaderEpochFileCacheTest#shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch"),
        pytest.param([(5, 11), (6, 12), (7, 13), (7, 12)], 5, 0, (5, 12), id="LeaderEpochFileCacheTest#shouldTruncateIfMatchingEpochButEarlierStartingOffset-5"),
        pytest.param([(5, 11), (6, 12), (7, 13), (7, 12)], 6, 0, (5, 12), id="LeaderEpochFileCacheTest#shouldTruncateIfMatchingEpochButEarlierStartingOffset-6"),
        pytest.param([(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)], 2, 17, (2, 15),
                     id="LeaderEpochFileCacheTest#shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch"),
        pytest.param([(0, 10), (2, 13), (4, 17)], 1, 0, (0, 13), id="LeaderEpochFileCacheTest#shouldReturnNextAvailableEpoch-1"),
        pytest.param([(0, 10), (2, 13), (4, 17)], 2, 0, (2, 17), id="LeaderEpochFileCacheTest#shouldReturnNextAvailableEpoch-2"),
        pytest.param([(0, 10), (2, 13), (4, 17)], 3, 0, (2, 17), id="LeaderEpochFileCacheTest#shouldReturnNextAvailableEpoch-3"),
        pytest.param([(2, 100)], 3, 100, UNDEFINED, id="LeaderEpochFileCacheTest#shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked"),
        pytest.param([(0, 0), (1, 0)], 0, 0, (0, 0), id="LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes-0"),
        pytest.param([(0, 0), (1, 0), (2, 5)], 1, 10, (1, 5), id="LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes-1"),
    ],
)
def test_end_offset_for_cache(assigns, requested, leo, expected):
    assert P._end_offset_for(cache_of(*assigns), requested, leo) == expected


# ---------------------------------------------------------------------------------------------
# end_offset_for_epoch over logs (+ the leader's current epoch)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "the_log, epoch, current, expected",
    [
        pytest.param((), 0, None, UNDEFINED, id="LeaderEpochFileCacheTest#shouldFetchEndOffsetOfEmptyCache"),
        pytest.param(log((0, 3), (1, 3), (2, 3)), 0, None, (0, 3), id="LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages-0"),
        pytest.param(log((0, 3), (1, 3), (2, 3)), 1, None, (1, 6), id="LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages-1"),
        pytest.param(log((0, 3), (1, 3), (2, 3)), 2, None, (2, 9), id="LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages-2"),
        pytest.param(log((0, 3), (1, 3), (2, 3)), 3, None, UNDEFINED, id="endOffsetFor-larger-than-latest"),
        pytest.param(log((0, 3), (1, 3), (2, 3)), -1, None, UNDEFINED, id="endOffsetFor-undefined-epoch"),
        pytest.param(log((3, 2), (5, 2)), 1, None, (1, 0), id="endOffsetFor-below-first-epoch"),
        pytest.param(log((3, 2), (5, 2)), 4, None, (3, 2), id="endOffsetFor-gap"),
        # PartitionTest#testMakeLeaderUpdatesEpochCache: epochs 0 x2, 5 x2, leader epoch 8 assigned at LEO 4
        pytest.param(log((0, 2), (5, 2)), 8, (8, 4), (8, 4), id="PartitionTest#testMakeLeaderUpdatesEpochCache"),
        pytest.param(log((0, 2), (5, 2)), 5, (8, 4), (5, 4), id="makeLeader-epoch-entry-ends-previous-epoch"),
        pytest.param(log((0, 2), (5, 2)), 7, (8, 4), (5, 4), id="makeLeader-epoch-entry-gap"),
        pytest.param(log((0, 2), (5, 2)), 9, (8, 4), UNDEFINED, id="makeLeader-epoch-entry-larger"),
        # current epoch with records already: consistent entry, nothing changes
        pytest.param(log((0, 2), (5, 2)), 5, (5, 2), (5, 4), id="makeLeader-epoch-already-in-log"),
        pytest.param((), 3, (3, 0), (3, 0), id="makeLeader-empty-log"),
    ],
)
def test_end_offset_for_epoch(the_log, epoch, current, expected):
    assert P.end_offset_for_epoch(the_log, epoch, current) == expected


# ---------------------------------------------------------------------------------------------
# fetch_divergence (Partition.readRecords for a follower fetch)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "last_fetched_epoch, fetch_offset, expected",
    [
        pytest.param(2, 5, (0, 2), id="PartitionTest#testLastFetchedOffsetValidation-2@5"),
        pytest.param(0, 4, (0, 2), id="PartitionTest#testLastFetchedOffsetValidation-0@4"),
        pytest.param(6, 6, (4, 13), id="PartitionTest#testLastFetchedOffsetValidation-6@6"),
        pytest.param(5, 9, (4, 13), id="PartitionTest#testLastFetchedOffsetValidation-5@9"),
        pytest.param(10, 18, (10, 17), id="PartitionTest#testLastFetchedOffsetValidation-10@18"),
        pytest.param(0, 2, None, id="PartitionTest#testLastFetchedOffsetValidation-0@2"),
        pytest.param(7, 14, None, id="PartitionTest#testLastFetchedOffsetValidation-7@14"),
        pytest.param(9, 17, None, id="PartitionTest#testLastFetchedOffsetValidation-9@17"),
        pytest.param(10, 17, None, id="PartitionTest#testLastFetchedOffsetValidation-10@17"),
        pytest.param(11, 5, P.OFFSET_OUT_OF_RANGE, id="PartitionTest#testLastFetchedOffsetValidation-11@5-out-of-range"),
        pytest.param(-1, 40, None, id="FetchRequest-no-last-fetched-epoch-no-check"),
    ],
)
def test_fetch_divergence(last_fetched_epoch, fetch_offset, expected):
    got = P.fetch_divergence(LAST_FETCHED_LOG, LAST_FETCHED_CURRENT, fetch_offset=fetch_offset,
                             last_fetched_epoch=last_fetched_epoch)
    assert got == expected


def test_fetch_divergence_diverging_epochs():
    # AbstractFetcherThreadTest#testDivergingEpochs: leader [0, 2, 5], follower [0, 2, 4] fetching at 3
    leader = log((0, 1), (2, 1), (5, 1))
    assert P.fetch_divergence(leader, (5, 2), fetch_offset=3, last_fetched_epoch=4) == (2, 2)


# ---------------------------------------------------------------------------------------------
# follower_truncation (AbstractFetcherThread.getOffsetTruncationState)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "follower, diverging, kwargs, expected",
    [
        # AbstractFetcherThreadTest#testDivergingEpochs: follower [0, 2, 4], leader answers (2, 2)
        pytest.param(log((0, 1), (2, 1), (4, 1)), (2, 2), {}, (2, True), id="AbstractFetcherThreadTest#testDivergingEpochs"),
        # AbstractFetcherThreadTest#testTruncation, step by step (leader [1, 3, 5])
        pytest.param(log((0, 1), (2, 1), (4, 1)), (3, 2), {}, (2, False), id="AbstractFetcherThreadTest#testTruncation-1-unknown-epoch"),
        pytest.param(log((0, 1), (2, 1)), (1, 1), {}, (1, False), id="AbstractFetcherThreadTest#testTruncation-2-unknown-epoch"),
        pytest.param(log((0, 1)), (0, 0), {}, (0, True), id="AbstractFetcherThreadTest#testTruncation-3-same-epoch"),
        # F == E': min(X, O', LEO)
        pytest.param(log((1, 5), (2, 3)), (1, 3), {}, (3, True), id="getOffsetTruncationState-leader-offset-smaller"),
        pytest.param(log((1, 5), (2, 3)), (1, 7), {}, (5, True), id="getOffsetTruncationState-follower-offset-smaller"),
        pytest.param(log((1, 5)), (1, 9), {}, (5, True), id="getOffsetTruncationState-never-above-leo"),
        # F != E': min(X, LEO), not complete
        pytest.param(log((1, 5), (3, 3)), (2, 6), {}, (5, False), id="getOffsetTruncationState-epoch-unknown-to-follower"),
        # undefined answers
        pytest.param(log((1, 5)), (-1, -1), {}, (5, True), id="getOffsetTruncationState-UNDEFINED_EPOCH_OFFSET-fetch-offset"),
        pytest.param(log((1, 5)), (-1, -1), dict(fetch_offset=2), (2, True), id="testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable-initial-offset"),
        pytest.param(log((1, 5)), (-1, 3), {}, (3, True), id="getOffsetTruncationState-UNDEFINED_EPOCH"),
        pytest.param((), (2, 3), {}, (0, True), id="getOffsetTruncationState-follower-has-no-epochs"),
        pytest.param(log((1, 5)), (3, 2), {}, (2, True), id="getOffsetTruncationState-follower-endOffsetForEpoch-undefined"),
        # below the follower's first epoch: (E', 0) from endOffsetFor, so F == E'
        pytest.param(log((3, 2)), (1, 1), {}, (0, True), id="getOffsetTruncationState-below-first-epoch"),
        # a follower that led epoch 4 without writing: its cache holds (4, 3)
        pytest.param(log((2, 3)), (4, 3), dict(current=(4, 3)), (3, True), id="getOffsetTruncationState-assigned-epoch-no-records"),
    ],
)
def test_follower_truncation(follower, diverging, kwargs, expected):
    got = P.follower_truncation(follower, diverging_epoch=diverging[0], diverging_end_offset=diverging[1], **kwargs)
    assert got == expected


# out_of_range_truncation (AbstractFetcherThread.fetchOffsetAndTruncate)
@pytest.mark.parametrize(
    "follower_leo, leader_end_offset, expected",
    [
        # the leader's log was cleared under a follower at 3: it truncates to 0, below its HW
        pytest.param(3, 0, 0, id="AbstractFetcherThreadTest#testFollowerFetchOutOfRangeHigh"),
        pytest.param(3, 2, 2, id="fetchOffsetAndTruncate-leader-behind"),
        # a leader at or past the follower: nothing is truncated, the fetch resumes at the LEO
        pytest.param(3, 3, 3, id="fetchOffsetAndTruncate-leader-level"),
        pytest.param(1, 5, 1, id="fetchOffsetAndTruncate-leader-ahead-keep-log"),
    ],
)
def test_out_of_range_truncation(follower_leo, leader_end_offset, expected):
    assert P.out_of_range_truncation(follower_leo=follower_leo, leader_end_offset=leader_end_offset) == expected


def test_truncation_reconciles_logs():
    # AbstractFetcherThreadTest#testTruncation: the fetch/truncate loop ends with the follower a prefix of the leader
    leader = log((1, 1), (3, 1), (5, 1))
    follower = log((0, 1), (2, 1), (4, 1))
    truncations = []
    for _ in range(10):
        last = follower[-1].epoch if follower else -1
        diverging = P.fetch_divergence(leader, (5, 2), fetch_offset=len(follower), last_fetched_epoch=last)
        if diverging is None:
            break
        offset, done = P.follower_truncation(follower, diverging_epoch=diverging[0], diverging_end_offset=diverging[1])
        truncations.append((offset, done))
        follower = follower[:offset]
    assert truncations == [(2, False), (1, False), (0, True)]
    assert follower == leader[: len(follower)]


# ---------------------------------------------------------------------------------------------
# leader_hw (Partition.maybeIncrementLeaderHW)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs, expected",
    [
        # PartitionTest#testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR (min ISR 3, ISR {0, 1})
        pytest.param(dict(hw=0, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1), min_isr=3, follower_leo={1: 10, 2: -1}),
                     0, id="testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR-1"),
        pytest.param(dict(hw=0, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1, 2), min_isr=3, follower_leo={1: 10, 2: 10}),
                     0, id="testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR-maximal-isr-not-enough"),
        pytest.param(dict(hw=0, leader_leo=10, isr=(0, 1, 2), maximal_isr=(0, 1, 2), min_isr=3, follower_leo={1: 10, 2: 10}),
                     10, id="testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR-isr-complete"),
        # R12 variant: the HW advances below min ISR
        pytest.param(dict(hw=0, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1), min_isr=3, follower_leo={1: 10, 2: -1},
                          strict_min_isr=False), 10, id="R12-hw-ignores-min-isr"),
        # effective min ISR = min(min.insync.replicas, RF) (Partition.effectiveMinIsr)
        pytest.param(dict(hw=0, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1), min_isr=3, follower_leo={1: 10},
                          replication_factor=2), 10, id="Partition.effectiveMinIsr"),
        # PartitionTest#testHighWatermarkIncreasesWithFencedOrShutdownFollower (after the ISR shrank to {0})
        pytest.param(dict(hw=10, leader_leo=20, isr=(0,), maximal_isr=(0,), min_isr=1, follower_leo={1: 10},
                          caught_up_eligible=(1,)), 10, id="testHighWatermarkIncreasesWithFencedOrShutdownFollower-unfenced"),
        pytest.param(dict(hw=10, leader_leo=20, isr=(0,), maximal_isr=(0,), min_isr=1, follower_leo={1: 10}),
                     20, id="testHighWatermarkIncreasesWithFencedOrShutdownFollower-fenced-or-shutdown"),
        # maximal ISR (KIP-497): a pending expansion already holds the HW back
        pytest.param(dict(hw=5, leader_leo=10, isr=(0,), maximal_isr=(0, 1), min_isr=1, follower_leo={1: 7}),
                     7, id="maybeIncrementLeaderHW-maximal-isr"),
        # a follower outside the maximal ISR and not caught up does not count
        pytest.param(dict(hw=5, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1), min_isr=1, follower_leo={1: 9, 2: 3}),
                     9, id="maybeIncrementLeaderHW-min-over-isr"),
        # unknown LEO (-1 or missing) of an ISR member: no advance
        pytest.param(dict(hw=4, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1), min_isr=1, follower_leo={1: -1}),
                     4, id="maybeIncrementLeaderHW-unknown-leo"),
        pytest.param(dict(hw=4, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1), min_isr=1, follower_leo={}),
                     4, id="maybeIncrementLeaderHW-missing-leo"),
        # never backwards (UnifiedLog.maybeIncrementHighWatermark)
        pytest.param(dict(hw=8, leader_leo=10, isr=(0, 1), maximal_isr=(0, 1), min_isr=1, follower_leo={1: 6}),
                     8, id="maybeIncrementHighWatermark-never-backwards"),
        # the leader's own LEO bounds the HW; the leader id in the ISR is not a follower
        pytest.param(dict(hw=0, leader_leo=3, isr=(0, 1), maximal_isr=(0, 1), min_isr=2, follower_leo={0: 0, 1: 5}),
                     3, id="maybeIncrementLeaderHW-leader-leo-bound"),
    ],
)
def test_leader_hw(kwargs, expected):
    kwargs.setdefault("leader_id", 0)
    assert P.leader_hw(**kwargs) == expected


# ---------------------------------------------------------------------------------------------
# can_expand_isr (Partition.maybeExpandIsr / isFollowerInSync)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs, expected",
    [
        # PartitionTest#testIsrExpansion: LESO 10 (10 records of epoch 4, leader epoch 5)
        pytest.param(dict(follower_leo=3, leader_hw=0, leso=10), False, id="PartitionTest#testIsrExpansion-at-3"),
        pytest.param(dict(follower_leo=10, leader_hw=0, leso=10), True, id="PartitionTest#testIsrExpansion-at-10"),
        # PartitionTest#testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch (HW 1, LESO 5)
        pytest.param(dict(follower_leo=0, leader_hw=1, leso=5), False, id="testFollowerDoesNotJoinISRUntilCaughtUp-below-hw"),
        pytest.param(dict(follower_leo=1, leader_hw=1, leso=5), False, id="testFollowerDoesNotJoinISRUntilCaughtUp-below-leso"),
        pytest.param(dict(follower_leo=5, leader_hw=1, leso=5), True, id="testFollowerDoesNotJoinISRUntilCaughtUp-at-leso"),
        pytest.param(dict(follower_leo=5, leader_hw=7, leso=2), False, id="isFollowerInSync-below-hw"),
        # R5 variant: LESO not checked
        pytest.param(dict(follower_leo=3, leader_hw=0, leso=10, check_leso=False), True, id="R5-no-leso-check"),
        # PartitionTest#testIsrNotExpandedIfReplicaIsFencedOrShutdown / testIsrNotExpandedIfReplicaIsInControlledShutdown
        pytest.param(dict(follower_leo=10, leader_hw=0, leso=10, eligible=False), False,
                     id="PartitionTest#testIsrNotExpandedIfReplicaIsFencedOrShutdown"),
        # PartitionTest#testSingleInFlightAlterIsr / testIsrNotExpandedIfUpdateFails: one AlterPartition at a time
        pytest.param(dict(follower_leo=10, leader_hw=0, leso=10, pending=True), False, id="PartitionTest#testSingleInFlightAlterIsr"),
        pytest.param(dict(follower_leo=10, leader_hw=0, leso=None), False, id="isFollowerInSync-no-leso"),
        pytest.param(dict(follower_leo=10, leader_hw=0, leso=-1), False, id="isFollowerInSync-unknown-leso"),
    ],
)
def test_can_expand_isr(kwargs, expected):
    kwargs.setdefault("eligible", True)
    kwargs.setdefault("pending", False)
    assert P.can_expand_isr(**kwargs) == expected


# ---------------------------------------------------------------------------------------------
# Properties (Hypothesis)
# ---------------------------------------------------------------------------------------------

epochs_runs = st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3)), max_size=4)


def monotone(runs, base=0, value=0):
    out, epoch = [], base
    for step, count in runs:
        epoch += step + (1 if out else 0)
        out.extend(LogEntry(epoch, value) for _ in range(count))
    return tuple(out), epoch


@settings(max_examples=300, deadline=None)
@given(runs=epochs_runs, requested=st.integers(-1, 12))
def test_property_end_offset_matches_brute_force(runs, requested):
    """LeaderEpochFileCache.endOffsetFor on a monotone log, against a direct count of the log."""
    the_log, _ = monotone(runs)
    got = P.end_offset_for_epoch(the_log, requested)
    epochs = [e.epoch for e in the_log]
    if requested < 0 or not epochs or requested > epochs[-1]:
        assert got == UNDEFINED
    elif requested == epochs[-1]:
        assert got == (requested, len(the_log))
    elif requested < epochs[0]:
        assert got == (requested, 0)
    else:
        assert got == (max(e for e in epochs if e <= requested), sum(1 for e in epochs if e <= requested))


@settings(max_examples=300, deadline=None)
@given(common=epochs_runs, leader_tail=epochs_runs, follower_tail=epochs_runs, gap=st.integers(0, 2))
def test_property_divergence_then_truncation_keeps_common_prefix(common, leader_tail, follower_tail, gap):
    """KIP-101/KIP-279: fetch/truncate converges to a prefix of the leader's log, never below the common prefix.

    The two suffixes were written in disjoint epochs after the common prefix (the follower's in an
    older epoch range than the leader's, as after an election).
    """
    prefix, last = monotone(common)
    f_tail, f_last = monotone(follower_tail, base=last + 1, value=2)
    l_tail, l_last = monotone(leader_tail, base=max(last, f_last) + 1 + gap, value=1)
    leader, follower = prefix + l_tail, prefix + f_tail
    current = (max([last, f_last, l_last]) + 1, len(leader))
    for _ in range(50):
        last_epoch = follower[-1].epoch if follower else -1
        diverging = P.fetch_divergence(leader, current, fetch_offset=len(follower), last_fetched_epoch=last_epoch)
        assert diverging != P.OFFSET_OUT_OF_RANGE
        if diverging is None:
            break
        offset, _ = P.follower_truncation(follower, diverging_epoch=diverging[0], diverging_end_offset=diverging[1])
        assert 0 <= offset <= len(follower)
        assert offset < len(follower), "no progress"
        follower = follower[:offset]
    else:
        pytest.fail("did not converge")
    assert follower == leader[: len(follower)]
    assert follower == prefix  # exactly the common prefix: nothing committed in it is lost


@settings(max_examples=300, deadline=None)
@given(
    hw=st.integers(0, 10), leo=st.integers(0, 10), isr=st.sets(st.integers(1, 3)), extra=st.sets(st.integers(1, 3)),
    leos=st.dictionaries(st.integers(1, 3), st.integers(-1, 10)), min_isr=st.integers(1, 4), strict=st.booleans(),
)
def test_property_leader_hw_monotone_and_bounded(hw, leo, isr, extra, leos, min_isr, strict):
    """Partition.maybeIncrementLeaderHW never moves the HW backwards, nor past the slowest maximal-ISR member."""
    hw = min(hw, leo)
    isr_t = tuple(sorted({0} | isr))
    maximal = tuple(sorted(set(isr_t) | extra))
    new = P.leader_hw(hw=hw, leader_leo=leo, isr=isr_t, maximal_isr=maximal, min_isr=min_isr, leader_id=0,
                      follower_leo=leos, strict_min_isr=strict)
    assert new >= hw
    if new > hw:
        assert new <= leo
        assert all(leos.get(r, -1) >= new for r in maximal if r != 0)
        assert not strict or len(isr_t) >= min_isr
