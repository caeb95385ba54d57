"""The scheduler: a pure function from a snapshot of the cell to a plan.

No I/O, no clock, no global state: :func:`schedule` takes an immutable
:class:`Snapshot` and returns a :class:`Plan` (dispatches, each waiting
job's reasons, the pass's global messages).  Each stage of a pass in its
module, named for Grid Engine's word (README.md in this folder says more):

==========================  ==================================================
the input and the output    :mod:`.snapshot` (:mod:`.complexes`: the complex list)
the pass                    :mod:`.dispatch` (:func:`schedule`)
queue instances dropped     :mod:`.queue_filter` (global messages)
the order of the jobs       :mod:`.dispatch_order`, :mod:`.job_order` (sge_priority(5))
job categories              :mod:`.category_cache`
does a task fit an instance :mod:`.queue_match`; ``-l``: :mod:`.matching`
queue sort, ``-soft``       :mod:`.queue_sort`
parallel jobs               :mod:`.pe_allocation` (sge_pe(5) allocation_rule)
booking                     :mod:`.booking`
resource quotas             :mod:`.quota` (sge_resource_quota(5), qquota)
load and suspend alarms     :mod:`.load_alarms` (queue_conf(5) thresholds, subordination)
one task being placed       :mod:`.assignment`
resource reservation        :mod:`.reservation` (sched_conf(5) max_reservation, qsub -R y)
==========================  ==================================================
"""

from minisge.scheduler.booking import consumption, debit, debits
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.dispatch import schedule
from minisge.scheduler.dispatch_order import dispatch_figures
from minisge.scheduler.snapshot import (
    PE,
    Dispatch,
    HostInfo,
    PendingTask,
    Plan,
    QInstance,
    Reservation,
    ScheduleEntry,
    Snapshot,
    pending_tasks,
)

__all__ = [
    "PE", "ComplexIndex", "Dispatch", "HostInfo", "PendingTask", "Plan", "QInstance", "Reservation",
    "ScheduleEntry", "Snapshot",
    "consumption", "debit", "debits", "dispatch_figures", "pending_tasks", "schedule",
]
