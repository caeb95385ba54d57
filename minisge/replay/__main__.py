"""``minisge replay`` (run as ``python -m minisge.replay``: it needs the
qmaster's code, which the ``minisge`` command does not load).

    minisge replay [--config FILE.toml | --cell DIR]... [--passes interval|events]
                   [--why JOB] [--csv FILE] [--json FILE] [--plot DIR] TRACE
    minisge replay --describe [--cell DIR]

Exit status: 0 done, 1 an input that cannot be used (a missing trace, a bad
line, a bad configuration: ``FILE: what``), 2 a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from minisge.cell import DEFAULT_CELL, default_root
from minisge.formats.errors import FormatError
from minisge.formats.swf import parse_trace
from minisge.qmaster.qmaster import gc_paused
from minisge.replay import config, metrics, simulate
from minisge.replay.result import ReplayResult

DESCRIPTION = ("Replay a workload trace (SWF, or a Grid Engine accounting file) through the qmaster's own "
               "scheduler in simulated time, and report wait, turnaround, slowdown, utilisation and makespan.")
PLOTS_MISSING = "error: --plot needs matplotlib: pip install 'minisge[teach]'"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


class _Add(argparse.Action):
    """--config and --cell, in the order given (the columns of the what-if table)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        namespace.setups = [*(getattr(namespace, "setups", None) or []), (self.dest, str(values))]


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="minisge replay", description=DESCRIPTION, add_help=False,
                epilog="Without --config or --cell: the cell of $SGE_ROOT/$SGE_CELL (only read). "
                       "The bounded slowdown's bound is 10 s. docs/teaching.md has a worked lesson.")
    p.add_argument("-help", "-h", "--help", action="help", help="print this and exit")
    p.add_argument("trace", nargs="?", help="an SWF file or a Grid Engine accounting file")
    p.add_argument("--config", action=_Add, dest="config", metavar="FILE.toml",
                   help="a configuration (a TOML description); repeat to compare")
    p.add_argument("--cell", action=_Add, dest="cell", metavar="DIR",
                   help="a cell's directory $SGE_ROOT/$SGE_CELL (its spool is only read); repeat to compare")
    p.add_argument("--why", type=int, metavar="JOB",
                   help="the pending reasons of trace job JOB at each pass it waited through (qstat -j's words)")
    p.add_argument("--passes", choices=(simulate.INTERVAL, simulate.EVENTS), default=simulate.INTERVAL,
                   help="when scheduling passes run: every schedule_interval as Grid Engine 8.1.9 (interval, "
                        "the default), or after every submission and end as minisge's daemon (events)")
    p.add_argument("--csv", metavar="FILE", help="write the table as CSV")
    p.add_argument("--json", metavar="FILE",
                   help="write the metrics, the busy slots and pending tasks over time and every task as JSON")
    p.add_argument("--plot", metavar="DIR", help="write the plots (PNG and SVG) into DIR (needs matplotlib)")
    p.add_argument("--describe", action="store_true",
                   help="print the TOML description of the cell (--cell, else $SGE_ROOT/$SGE_CELL) and exit")
    p.add_argument("--cwd", help=argparse.SUPPRESS)  # minisge replay runs this from "/"
    p.set_defaults(setups=[])
    return p


def default_cell() -> str:
    root = os.environ.get("SGE_ROOT") or default_root()
    return os.path.join(root, os.environ.get("SGE_CELL") or DEFAULT_CELL)


def load_setup(kind: str, where: str) -> config.ReplayConfig:
    return config.from_toml(where) if kind == "config" else config.from_cell(where)


def unique_labels(setups: list[config.ReplayConfig]) -> None:
    """Two configurations of the same name (a/x.toml, b/x.toml) get a number each."""
    seen: dict[str, int] = {}
    for s in setups:
        seen[s.label] = seen.get(s.label, 0) + 1
    count: dict[str, int] = {}
    for s in setups:
        if seen[s.label] > 1:
            count[s.label] = count.get(s.label, 0) + 1
            s.label = f"{s.label}#{count[s.label]}"


def write_file(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def why_text(job: int, label: str, passes: Sequence[tuple[float, Sequence[str]]], started: float | None) -> str:
    head = f"job {job} under {label}:"
    if not passes:
        return f"{head} never waited through a scheduling pass\n"
    out = [head]
    for t, lines in passes:
        out.append(f"  t={t:g}s")
        out.extend(f"    {line}" for line in lines or ["(no reason given)"])
    out.append(f"  started at t={started:g}s" if started is not None else "  never started")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.cwd:
        os.chdir(args.cwd)
    # a cell's configuration read as the qmaster reads it logs what it keeps without
    # effect: the daemon's business, not a replay's
    logging.getLogger("minisge").setLevel(logging.ERROR)
    try:
        if args.describe:
            cells = [w for k, w in args.setups if k == "cell"]
            if args.trace or len(args.setups) > len(cells) or len(cells) > 1:
                parser().error("--describe takes one --cell at most, and no trace")
            sys.stdout.write(config.describe(config.from_cell(cells[0] if cells else default_cell()).config))
            return 0
        if not args.trace:
            parser().error("a trace is needed")
        setups = [load_setup(k, w) for k, w in args.setups] or [config.from_cell(default_cell())]
        try:
            with open(args.trace, encoding="utf-8", errors="surrogateescape") as f:
                trace = parse_trace(f.read(), args.trace)
        except OSError as e:
            print(f"error: {args.trace}: {e.strerror}", file=sys.stderr)
            return 1
    except (config.ConfigError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.why is not None and not any(j.job_id == args.why for j in trace.jobs):
        why_not = dict(trace.skipped).get(args.why)
        print(f"error: job {args.why} is not a job of {args.trace}" if why_not is None else
              f"error: job {args.why} of {args.trace} is not replayed: {why_not}", file=sys.stderr)
        return 1
    plots = None
    if args.plot:
        try:
            plots = importlib.import_module("minisge.replay.plots")
        except ModuleNotFoundError as e:
            print(PLOTS_MISSING if (e.name or "").startswith("matplotlib") or e.name == "minisge.replay.plots"
                  else f"error: --plot: {e}", file=sys.stderr)
            return 1
    unique_labels(setups)
    if trace.skipped:
        print(f"note: {len(trace.skipped)} jobs of the trace not replayed (never ran, or unknown run time "
              f"or processors): {', '.join(str(j) for j, _ in trace.skipped[:10])}"
              f"{' ...' if len(trace.skipped) > 10 else ''}", file=sys.stderr)
    results: list[ReplayResult] = []
    whys = []
    with gc_paused():
        for setup in setups:
            result, replay = simulate.run(trace, setup, args.why, args.passes)
            results.append(result)
            for note in replay.notes:
                print(f"note: {setup.label}: {note}", file=sys.stderr)
            if args.why is not None:
                started = next((t.start_time for t in result.tasks if t.job_id == args.why), None)
                whys.append(why_text(args.why, setup.label, replay.why_passes, started))
    summaries = [metrics.summarise(r) for r in results]
    sys.stdout.write(metrics.table(summaries))
    for text in whys:
        sys.stdout.write("\n" + text)
    try:
        if args.csv:
            write_file(args.csv, metrics.csv_text(summaries))
        if args.json:
            write_file(args.json, metrics.json_text(summaries, results))
        if plots is not None:
            os.makedirs(args.plot, exist_ok=True)
            for name in plots.write_plots(results, args.plot):
                print(f"wrote {name}")
    except OSError as e:
        print(f"error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
