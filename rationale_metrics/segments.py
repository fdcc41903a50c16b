"""Vectors of different lengths stored end to end, and sorting within each of them.

Soft scores come one vector per (instance, document): 20,000 vectors of 16 scores for
e-SNLI, 959 of 4,761 for Evidence Inference. Keeping them in one array and working on
all segments at once avoids a numpy call per vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Segments:
    """Float vectors stored end to end: vector i is `values[starts[i] : starts[i] + lengths[i]]`."""

    values: np.ndarray
    lengths: np.ndarray

    @property
    def starts(self) -> np.ndarray:
        return np.cumsum(self.lengths) - self.lengths

    def __len__(self) -> int:
        return len(self.lengths)

    def take(self, rows: np.ndarray) -> Segments:
        starts, lengths = self.starts[rows], self.lengths[rows]
        return Segments(self.values[ranges(starts, lengths)], lengths)

    @staticmethod
    def from_vectors(vectors: Sequence[np.ndarray]) -> Segments:
        lengths = np.fromiter(map(len, vectors), dtype=np.int64, count=len(vectors))
        values = np.concatenate(vectors) if len(vectors) else np.zeros(0)
        return Segments(values.astype(np.float64, copy=False), lengths)

    @staticmethod
    def concat(parts: Sequence[Segments]) -> Segments:
        return Segments(
            np.concatenate([p.values for p in parts]), np.concatenate([p.lengths for p in parts])
        )


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending: np.unique, without the masked-array check by which
    np.unique imports numpy.ma (8 ms of a scoring process's start-up)."""
    ordered = np.sort(values)
    fresh = np.ones(len(ordered), dtype=bool)
    fresh[1:] = ordered[1:] != ordered[:-1]
    return ordered[fresh]


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indexes start, ..., start + length - 1 of every (start, length), concatenated."""
    total = int(lengths.sum())
    firsts = np.cumsum(lengths) - lengths
    return np.repeat(starts - firsts, lengths) + np.arange(total)


def _as_rows(values: np.ndarray, lengths: np.ndarray, fill: float) -> np.ndarray | None:
    """Segments as the rows of a matrix padded with `fill`, or None when padding would more
    than double the work (segments of very different lengths)."""
    n = len(lengths)
    longest = int(lengths.max())
    if n * longest == len(values):
        return values.reshape(n, longest)
    if n * longest > 2 * len(values) + 4096:
        return None
    starts = np.cumsum(lengths) - lengths
    segment = np.repeat(np.arange(n), lengths)
    rows = np.full((n, longest), fill)
    rows[segment, np.arange(len(values)) - starts[segment]] = values
    return rows


def descending_within_segments(
    values: np.ndarray, lengths: np.ndarray, *, stable: bool = True
) -> np.ndarray:
    """Positions of `values` ordered segment by segment and, within a segment, from the
    highest value to the lowest. With `stable`, equal values keep their order (the earlier
    first); without, their order is arbitrary and the sort is faster."""
    n = len(lengths)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    kind = "stable" if stable else "quicksort"
    starts = np.cumsum(lengths) - lengths
    rows = _as_rows(-values, lengths, np.inf)  # padding sorts last
    if rows is not None:
        order = np.argsort(rows, axis=1, kind=kind)
        positions = order + starts[:, None]
        return (
            positions.reshape(-1)
            if rows.size == len(values)
            else positions[order < lengths[:, None]]
        )
    if lengths.mean() > 512:
        # Few long segments of different lengths: sort each alone.
        return np.concatenate(
            [
                s + np.argsort(-values[s : s + m], kind=kind)
                for s, m in zip(starts.tolist(), lengths.tolist(), strict=True)
            ]
        )
    return np.lexsort((-values, np.repeat(np.arange(n), lengths)))


def ascending_within_segments(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The values sorted within each segment, from the lowest, segments in place.

    The values only: sorting them costs about half of finding their order (argsort)."""
    n = len(lengths)
    if n == 0:
        return values[:0].copy()
    rows = _as_rows(values, lengths, np.inf)  # padding sorts last
    if rows is not None:
        rows = np.sort(rows, axis=1)
        if rows.size == len(values):
            return rows.reshape(-1)
        return rows[np.arange(rows.shape[1]) < lengths[:, None]]
    if lengths.mean() > 512:
        # Few long segments of different lengths: sort each alone.
        starts = np.cumsum(lengths) - lengths
        return np.concatenate(
            [
                np.sort(values[s : s + m])
                for s, m in zip(starts.tolist(), lengths.tolist(), strict=True)
            ]
        )
    return values[np.lexsort((values, np.repeat(np.arange(n), lengths)))]


# Work on about this many values at a time: a few megabytes per temporary array, which
# the allocator hands back and reuses. One pass over Evidence Inference's 4.5 million soft
# scores at once made 36 MB temporaries that were mapped and unmapped per operation:
# 40,000 page faults, a quarter of a second of system time.
CHUNK_ELEMENTS = 1 << 18


def chunk_bounds(lengths: np.ndarray, chunk_elements: int) -> list[tuple[int, int]]:
    """(first, end) segment ranges, in order, each holding at most `chunk_elements` values
    or a single segment."""
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    chunks, start = [], 0
    while start < len(lengths):
        end = int(np.searchsorted(bounds, bounds[start] + chunk_elements, "right")) - 1
        end = min(max(start + 1, end), len(lengths))
        chunks.append((start, end))
        start = end
    return chunks


def top_k_within_segments(values: np.ndarray, lengths: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k highest values of each segment (all of a shorter one), ascending;
    of equal values at the cut, the earlier are taken."""
    if len(values) <= CHUNK_ELEMENTS:
        return _top_k(values, lengths, k)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    return np.concatenate(
        [
            bounds[first] + _top_k(values[bounds[first] : bounds[end]], lengths[first:end], k)
            for first, end in chunk_bounds(lengths, CHUNK_ELEMENTS)
        ]
    )


def _top_k(values: np.ndarray, lengths: np.ndarray, k: int) -> np.ndarray:
    n = len(lengths)
    if n == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    rows = _as_rows(values, lengths, -np.inf)  # padding is never among the k highest
    if rows is None:
        order = descending_within_segments(values, lengths)
        starts = np.cumsum(lengths) - lengths
        segment = np.repeat(np.arange(n), lengths)
        rank = np.arange(len(order)) - starts[segment[order]]
        return np.sort(order[rank < k])
    width = rows.shape[1]
    starts = np.cumsum(lengths) - lengths
    if k >= width:
        row, column = np.nonzero(np.arange(width) < lengths[:, None])
        return starts[row] + column
    # The k-th highest value of each row (the (width - k)-th lowest), found in linear time;
    # then one pass for the candidates, the values at least that high: few beyond k, unless
    # many equal it. Of those, all above it are taken, and as many of the equal ones as
    # there is room left for, the earliest first.
    cut = np.partition(rows, width - k, axis=1)[:, width - k]
    row, column = np.divmod(np.flatnonzero(rows >= cut[:, None]), width)  # faster than nonzero
    if rows.size != len(values):
        inside = column < lengths[row]  # a row shorter than k has its padding as the cut
        row, column = row[inside], column[inside]
    at_cut = rows[row, column] == cut[row]
    room = k - np.bincount(row[~at_cut], minlength=n)
    tie_rank = np.cumsum(at_cut)  # 1-based over all rows, made per row below
    first_tie = np.searchsorted(row, np.arange(n))
    tie_rank -= np.concatenate(([0], tie_rank))[first_tie][row]
    keep = ~at_cut | (tie_rank <= room[row])
    return starts[row[keep]] + column[keep]
