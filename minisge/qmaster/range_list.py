"""Task ids as ranges: a job's pending tasks, the tasks a command names.

Grid Engine keeps an array job's pending task ids as a range list
(``JB_ja_n_h_ids``, elements ``RN_min``, ``RN_max``, ``RN_step``), never
one element per task: a 75,000-task array (sge_conf(5) ``max_aj_tasks``)
is one range, and dispatching, re-queuing or deleting a task touches one
range, not the list.  :class:`RangeList` is that, for the ids of one array:
they all lie on the lattice ``first + k * step`` of the array (a task id is
one of the job's), so the ranges are intervals of that lattice, sorted and
disjoint, ``[lo, hi]`` each.

:class:`TaskSelection` is what ``qdel 5.1-4:2``, ``qmod -sj 5.3`` name: a
list of ranges tested without expanding them (``5.1-2147483647`` is fine).
"""

from __future__ import annotations

import bisect
import typing
from collections.abc import Container, Iterable, Iterator

from minisge.formats.submit_options import ParseError, parse_range

Range = tuple[int, int, int]  # lo, hi, step


#: the bounds of a range list without ids (a tuple: never changed, RangeList._own)
_NO_BOUNDS: list[int] = typing.cast("list[int]", ())
#: the shared one-bound tuples of small ids (RangeList.__init__), made as first asked
_ONE_BOUND: dict[int, list[int]] = {}


def _bounds(tid: int) -> list[int]:
    """The bounds of a first range at ``tid``: a tuple, shared for ids up to 1024."""
    found = _ONE_BOUND.get(tid)
    if found is None:
        found = typing.cast("list[int]", (tid,))
        if 0 <= tid <= 1024:
            _ONE_BOUND[tid] = found
    return found


class RangeList:
    """A set of task ids on one lattice (``step``), kept as sorted disjoint
    intervals.  Membership, adding and removing one id cost O(log r + r)
    for r ranges (r is 1 for an untouched array), ``first(n)`` O(n)."""

    __slots__ = ("step", "_los", "_his", "_count")

    def __init__(self, ranges: Iterable[Range] = (), step: int = 1):
        self.step = max(1, int(step))
        # the bounds: until the list changes other than by its first range,
        # shared tuples (_bounds: a long queue's one-task jobs hold the same
        # two), then lists of its own (_own)
        self._los: list[int] = _NO_BOUNDS
        self._his: list[int] = _NO_BOUNDS
        self._count = 0
        for lo, hi, rstep in ranges:
            if rstep == self.step:
                self.add_range(lo, hi)
            else:
                for tid in range(lo, hi + 1, rstep):
                    self.add(tid)

    @classmethod
    def of_array(cls, first: int, last: int, step: int) -> RangeList:
        """The tasks of ``qsub -t first-last:step``."""
        out = cls(step=step)
        out.add_range(first, last)
        return out

    @classmethod
    def of_ids(cls, ids: Iterable[int]) -> RangeList:
        """Task ids one by one (a spool of before the ranges); lattice step 1."""
        out = cls()
        for tid in sorted(set(ids)):
            out.add(int(tid))
        return out

    # ------------------------------------------------------------ reading
    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[int]:
        step = self.step
        for lo, hi in zip(self._los, self._his, strict=True):
            yield from range(lo, hi + 1, step)

    def __contains__(self, tid: object) -> bool:
        if not isinstance(tid, int):
            return False
        i = bisect.bisect_right(self._los, tid) - 1
        return i >= 0 and tid <= self._his[i] and (tid - self._los[i]) % self.step == 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RangeList):
            return self._count == other._count and list(self) == list(other)
        if isinstance(other, (list, tuple)):  # the ids, in order
            return self._count == len(other) and list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"RangeList({self.ranges()!r}, step={self.step})"

    def ranges(self) -> list[Range]:
        """``[(lo, hi, step), ...]``, ascending (the spool's form)."""
        return [(lo, hi, self.step) for lo, hi in zip(self._los, self._his, strict=True)]

    def runs(self) -> Iterator[tuple[int, int]]:
        """The maximal runs of consecutive ids ``(first, last)``, ascending
        (an interval each on lattice 1, one per id on a wider one)."""
        if self.step == 1:
            yield from zip(self._los, self._his, strict=True)
        else:
            for tid in self:
                yield tid, tid

    def first(self, n: int, skip: Container[int] = ()) -> list[int]:
        """The ``n`` lowest ids not in ``skip``, ascending."""
        out: list[int] = []
        if n <= 0:
            return out
        if not skip and self._los:  # (the usual case: the first range's ids, no generator)
            lo, hi, step = self._los[0], self._his[0], self.step
            out = list(range(lo, min(hi, lo + (n - 1) * step) + 1, step))
            if len(out) >= n or len(self._los) == 1:
                return out
            out = []
        for tid in self:
            if tid in skip:
                continue
            out.append(tid)
            if len(out) >= n:
                break
        return out

    def select(self, selection: TaskSelection) -> RangeList:
        """The ids that ``selection`` names (this list unchanged)."""
        return self.copy().take(selection)

    def __deepcopy__(self, memo: dict) -> RangeList:
        return self.copy()

    def copy(self) -> RangeList:
        out = RangeList(step=self.step)
        shared = type(self._los) is tuple  # (shared bounds stay shared: see __init__)
        out._los, out._his = (self._los, self._his) if shared else (list(self._los), list(self._his))
        out._count = self._count
        return out

    # ------------------------------------------------------------ changing
    def _check(self, tid: int) -> None:
        if self._los and (tid - self._los[0]) % self.step:
            raise ValueError(f"task {tid} is not on the lattice of {self!r}")

    def add_range(self, lo: int, hi: int) -> None:
        """Add ``lo, lo+step, ..., hi``: O(log r) plus the ranges it joins."""
        if hi < lo:
            return
        self._check(lo)
        step = self.step
        hi = lo + (hi - lo) // step * step
        if not self._los:  # the first range: shared bounds (a long queue's jobs have one)
            self._los, self._his, self._count = _bounds(lo), _bounds(hi), (hi - lo) // step + 1
            return
        self._own()
        i = bisect.bisect_left(self._his, lo - step)  # the first range that ends at or past lo - step
        j = bisect.bisect_right(self._los, hi + step)  # the ranges before j start at or before hi + step
        if i < j:  # they overlap or touch [lo, hi]: one range now
            self._count -= sum((b - a) // step + 1 for a, b in zip(self._los[i:j], self._his[i:j], strict=True))
            lo, hi = min(lo, self._los[i]), max(hi, self._his[j - 1])
        self._los[i:j] = [lo]
        self._his[i:j] = [hi]
        self._count += (hi - lo) // step + 1

    def add(self, tid: int) -> None:
        """Add one id (a task pending again)."""
        self.add_range(tid, tid)

    def discard(self, tid: int) -> bool:
        """Remove one id (a task dispatched or deleted); True if it was there."""
        if tid not in self:
            return False
        self._own()
        i = bisect.bisect_right(self._los, tid) - 1
        lo, hi = self._los[i], self._his[i]
        if lo == hi:
            del self._los[i]
            del self._his[i]
        elif tid == lo:
            self._los[i] = lo + self.step
        elif tid == hi:
            self._his[i] = hi - self.step
        else:
            self._his[i] = tid - self.step
            self._los.insert(i + 1, tid + self.step)
            self._his.insert(i + 1, hi)
        self._count -= 1
        return True

    def clear(self) -> None:
        self._los = self._his = _NO_BOUNDS
        self._count = 0

    def _own(self) -> None:
        """Lists of its own for the bounds, before they change (see __init__)."""
        if type(self._los) is tuple:
            self._los, self._his = list(self._los), list(self._his)

    def take(self, selection: TaskSelection) -> RangeList:
        """Remove the ids that ``selection`` names and return them: a block of
        this lattice (a selection range of step 1, the usual ``5.1-1000``)
        costs O(ranges) however many ids it holds, other steps O(ids taken)."""
        taken = RangeList(step=self.step)
        for lo, hi, sstep in selection.ranges:
            if not self._los:
                break
            anchor, step = self._los[0], self.step
            if step % sstep == 0:  # every id of this lattice in [lo, hi] is named, or none is
                if (anchor - lo) % sstep == 0:
                    a = anchor + -(-(lo - anchor) // step) * step
                    b = anchor + (hi - anchor) // step * step
                    self._take_block(a, b, taken)
                continue
            for tid in range(lo, hi + 1, sstep):  # O(ids named): a coarser or skewed step
                if self.discard(tid):
                    taken.add(tid)
        return taken

    def _take_block(self, a: int, b: int, taken: RangeList) -> None:
        """Remove the lattice ids from ``a`` to ``b`` (both on the lattice) into ``taken``."""
        if a > b:
            return
        self._own()
        step = self.step
        i = max(0, bisect.bisect_right(self._los, a) - 1)
        j = i
        los: list[int] = []
        his: list[int] = []
        while j < len(self._los) and self._los[j] <= b:
            lo, hi = self._los[j], self._his[j]
            if hi < a:  # before the block
                los.append(lo)
                his.append(hi)
            else:
                cut_lo, cut_hi = max(lo, a), min(hi, b)
                taken.add_range(cut_lo, cut_hi)
                self._count -= (cut_hi - cut_lo) // step + 1
                if lo < cut_lo:
                    los.append(lo)
                    his.append(cut_lo - step)
                if cut_hi < hi:
                    los.append(cut_hi + step)
                    his.append(hi)
            j += 1
        self._los[i:j] = los
        self._his[i:j] = his


class TaskSelection:
    """The tasks a command names after a job id (``5.1-4:2,7``): ranges,
    tested without expanding them."""

    __slots__ = ("ranges",)

    def __init__(self, ranges: Iterable[Range]):
        self.ranges = tuple(ranges)

    @classmethod
    def parse(cls, text: str) -> TaskSelection | None:
        """``n[-m[:s]][,...]`` as qdel and qmod read it; None for text that is no range."""
        ranges = []
        for word in text.split(","):
            try:
                r = parse_range(word, step_allowed=True, inf_allowed=False) if word else None
            except ParseError:
                r = None
            if r is None:
                return None
            ranges.append(r)
        return cls(ranges)

    def __contains__(self, tid: object) -> bool:
        return isinstance(tid, int) and any(lo <= tid <= hi and (tid - lo) % step == 0
                                            for lo, hi, step in self.ranges)
