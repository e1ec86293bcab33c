"""The broker's decisions for one partition replica: epoch end offsets, fetch divergence, follower
truncation, the leader's high watermark and ISR expansion.

Each function is pure and follows one Kafka method (Apache Kafka 4.1): `LeaderEpochFileCache`
(storage), `UnifiedLog.endOffsetForEpoch`, `Partition` (core/cluster/Partition.scala) and
`AbstractFetcherThread` (core/server).

Model conventions: a log is a tuple of LogEntry, entry i at offset i (the log start offset is 0,
there is no retention), so LEO = len(log). The leader epoch cache is the one the log implies
(one entry per epoch change, at the first offset written in that epoch), plus optionally the
entry Partition.makeLeader assigns for the leader's current epoch at its LEO before any record
of that epoch exists (`current`).
"""
from __future__ import annotations

from typing import Mapping

from model.replication.records import LogEntry

UNDEFINED_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH / EpochEndOffset.UNDEFINED_EPOCH
UNDEFINED_EPOCH_OFFSET = -1  # EpochEndOffset.UNDEFINED_EPOCH_OFFSET
# fetch_divergence's answer when Kafka fails the fetch with OFFSET_OUT_OF_RANGE instead.
OFFSET_OUT_OF_RANGE = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def _assign(cache: list[tuple[int, int]], epoch: int, start: int) -> None:
    """LeaderEpochFileCache.assign: append (epoch, start) unless it is already known.

    An update is needed when the latest entry has another epoch or a later start offset; entries
    with an epoch >= the new one or a start offset >= the new one are removed first
    (maybeTruncateNonMonotonicEntries).
    """
    if epoch < 0 or start < 0:
        return  # Kafka rejects these (IllegalArgumentException); batches without an epoch are not assigned
    if cache and cache[-1][0] == epoch and start >= cache[-1][1]:
        return
    while cache and (cache[-1][0] >= epoch or cache[-1][1] >= start):
        cache.pop()
    cache.append((epoch, start))


def _epoch_cache(log: tuple[LogEntry, ...], current: tuple[int, int] | None = None) -> tuple[tuple[int, int], ...]:
    """The (epoch, start offset) entries of the leader epoch cache implied by `log` (+ `current`)."""
    cache: list[tuple[int, int]] = []
    for offset, entry in enumerate(log):
        _assign(cache, entry.epoch, offset)
    if current is not None:
        _assign(cache, current[0], current[1])
    return tuple(cache)


def _end_offset_for(cache: tuple[tuple[int, int], ...], requested: int, log_end_offset: int,
                    floor_epoch: bool = True) -> tuple[int, int]:
    """LeaderEpochFileCache.endOffsetFor over explicit cache entries (sorted by epoch).

    floor_epoch=False is variant R3 (pre-KIP-279): the answer names the requested epoch itself
    with the start of the first larger epoch, so the follower cannot see that its epoch is
    unknown to the leader."""
    if requested == UNDEFINED_EPOCH:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if cache and cache[-1][0] == requested:
        return requested, log_end_offset
    higher = next((e for e in cache if e[0] > requested), None)
    if higher is None:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if not floor_epoch:
        return requested, higher[1]
    floor = None
    for e in cache:
        if e[0] <= requested:
            floor = e
    if floor is None:
        return requested, higher[1]
    return floor[0], higher[1]


def end_offset_for_epoch(
    log: tuple[LogEntry, ...], epoch: int, current: tuple[int, int] | None = None, floor_epoch: bool = True
) -> tuple[int, int]:
    """LeaderEpochFileCache.endOffsetFor: (largest known epoch <= `epoch`, its end offset).

    Over the epoch cache implied by `log` plus `current` = (leader epoch, start offset) when the
    leader's current epoch has no record yet (Partition.makeLeader assigns it at the LEO):
    - `epoch` is UNDEFINED_EPOCH (-1): (-1, -1);
    - `epoch` is the latest cached epoch: (epoch, LEO);
    - no cached epoch is larger than `epoch` (incl. an empty cache): (-1, -1);
    - `epoch` is below every cached epoch: (epoch, start offset of the first cached epoch);
    - else (largest cached epoch <= `epoch`, start offset of the first cached epoch > `epoch`).
    floor_epoch=False is variant R3 (see _end_offset_for).
    """
    return _end_offset_for(_epoch_cache(log, current), epoch, len(log), floor_epoch)


def fetch_divergence(
    leader_log: tuple[LogEntry, ...],
    current: tuple[int, int] | None,
    *,
    fetch_offset: int,
    last_fetched_epoch: int,
    floor_epoch: bool = True,
) -> tuple[int, int] | None:
    """Partition.readRecords (fetchRecords from a follower): the diverging (epoch, end offset), or None.

    With a last fetched epoch (a negative one means absent: no check), the leader looks up
    (E', O') = endOffsetForEpoch(last fetched epoch) over its log and its current epoch entry
    `current`. If E' < last fetched epoch or O' < fetch offset it answers divergingEpoch (E', O')
    with no records, and the caller must not record the follower's position (KAFKA-13141).
    If the end offset cannot be determined ((-1, -1): a last fetched epoch larger than any the
    leader knows) Kafka fails the fetch with OFFSET_OUT_OF_RANGE; this function then returns
    OFFSET_OUT_OF_RANGE == (-1, -1), which the caller must not send as a diverging epoch.
    floor_epoch=False is variant R3 (the leader's lookup of end_offset_for_epoch).
    """
    if last_fetched_epoch < 0:
        return None
    epoch, end = end_offset_for_epoch(leader_log, last_fetched_epoch, current, floor_epoch)
    if end == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH:
        return OFFSET_OUT_OF_RANGE
    if fetch_offset < 0:  # below the log start offset (0): also OFFSET_OUT_OF_RANGE
        return OFFSET_OUT_OF_RANGE
    if epoch < last_fetched_epoch or end < fetch_offset:
        return epoch, end
    return None


def follower_truncation(
    follower_log: tuple[LogEntry, ...],
    *,
    diverging_epoch: int,
    diverging_end_offset: int,
    current: tuple[int, int] | None = None,
    fetch_offset: int | None = None,
) -> tuple[int, bool]:
    """AbstractFetcherThread.getOffsetTruncationState: (offset to truncate to, truncation complete?).

    The leader answered (E', O'). Cases, in Kafka's order (LEO = len(follower_log)):
    - O' undefined (-1): truncate to the fetch state's offset (`fetch_offset`, default LEO), done;
    - E' undefined (-1): min(O', LEO), done;
    - the follower's own (F, X) = endOffsetForEpoch(E') is undefined: min(O', LEO), done;
    - F != E': min(X, LEO), not done (fetch again with the new last fetched epoch);
    - F == E': min(X, O', LEO), done.
    The follower never truncates to its HW (KIP-101). The result is clamped to [0, LEO].
    `current` is an epoch entry the follower assigned without records (when it led that epoch).
    """
    leo = len(follower_log)

    def clamp(offset: int) -> int:
        return max(0, min(offset, leo))

    if diverging_end_offset == UNDEFINED_EPOCH_OFFSET:
        return clamp(leo if fetch_offset is None else fetch_offset), True
    if diverging_epoch == UNDEFINED_EPOCH:
        return clamp(diverging_end_offset), True
    epoch, end = end_offset_for_epoch(follower_log, diverging_epoch, current)
    if end == UNDEFINED_EPOCH_OFFSET:
        return clamp(diverging_end_offset), True
    if epoch != diverging_epoch:
        return clamp(end), False
    return clamp(min(end, diverging_end_offset)), True


def out_of_range_truncation(*, follower_leo: int, leader_end_offset: int) -> int:
    """AbstractFetcherThread.fetchOffsetAndTruncate: the offset a follower truncates to after OFFSET_OUT_OF_RANGE.

    The follower asks the leader for its log end offset (ListOffsets LATEST). A leader behind the
    follower makes it truncate to the leader's end offset, below its HW if need be (Kafka's
    comment: "a potential for a mismatch ... we don't fix this mismatch"); otherwise it keeps its
    log and fetches from its own LEO (the log start offset is always 0 here).
    """
    return leader_end_offset if 0 <= leader_end_offset < follower_leo else follower_leo


def leader_hw(
    *,
    hw: int,
    leader_leo: int,
    isr: tuple[int, ...],
    maximal_isr: tuple[int, ...],
    min_isr: int,
    leader_id: int,
    follower_leo: Mapping[int, int],
    caught_up_eligible: tuple[int, ...] = (),
    strict_min_isr: bool = True,
    replication_factor: int | None = None,
) -> int:
    """Partition.maybeIncrementLeaderHW: the leader's new high watermark (never below `hw`).

    With strict_min_isr (KIP-966), nothing moves while the committed ISR is smaller than the
    effective min ISR (min(min_isr, replication_factor) when the factor is given; isUnderMinIsr).
    Otherwise the candidate is the minimum of the leader's LEO and the LEO of every follower that
    is in the maximal ISR (KIP-497) or is caught up and ISR-eligible but not yet in it
    (`caught_up_eligible`); an unknown follower LEO counts as -1. The HW only moves forward
    (UnifiedLog.maybeIncrementHighWatermark). strict_min_isr=False is variant R12.
    """
    effective_min_isr = min_isr if replication_factor is None else min(min_isr, replication_factor)
    if strict_min_isr and len(isr) < effective_min_isr:
        return hw
    candidate = leader_leo
    for r in set(maximal_isr) | set(caught_up_eligible):
        if r == leader_id:
            continue
        leo = follower_leo.get(r, -1)
        if leo < candidate:
            candidate = leo
    return candidate if candidate > hw else hw


def can_expand_isr(
    *,
    follower_leo: int,
    leader_hw: int,
    leso: int | None,
    eligible: bool,
    pending: bool,
    check_leso: bool = True,
) -> bool:
    """Partition.maybeExpandIsr (canAddReplicaToIsr + isFollowerInSync): may the leader propose adding it?

    True when no AlterPartition is in flight, the follower is ISR-eligible (isReplicaIsrEligible:
    not fenced, not in controlled shutdown, fetch broker epoch -1 or equal to the cached one),
    its LEO >= the leader's HW and >= the leader epoch start offset (LESO; an unknown LESO, None or
    negative, never qualifies). The caller checks that it is not already in the ISR.
    check_leso=False drops the LESO condition (variant R5).
    """
    if pending or not eligible:
        return False
    if follower_leo < leader_hw:
        return False
    if check_leso and (leso is None or leso < 0 or follower_leo < leso):
        return False
    return True


__all__ = [
    "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "OFFSET_OUT_OF_RANGE",
    "end_offset_for_epoch", "fetch_divergence", "follower_truncation", "out_of_range_truncation", "leader_hw",
    "can_expand_isr",
]
