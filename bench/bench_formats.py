"""Parse and write speed of the classic formats (issue: the foundation).

Prints the median of a few runs for:
- 10,000 queue instances' worth of configuration: 100 cluster queues, each
  with 100 hosts and a host-specific slots, h_rt and complex_values entry
  for every host (queue_conf(5) ``[host=value]`` syntax), parsed and written;
- the same 10,000 instances as 10,000 plain single-host queue files;
- 100,000 accounting(5) lines, parsed and written.

    python bench/bench_formats.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from minisge.formats import accounting, queue_conf


def _queue_with_overrides(i: int, hosts: int) -> str:
    t = queue_conf.template(f"q{i}.q")
    names = [f"node{j:03d}" for j in range(hosts)]
    text = queue_conf.write(t)
    lines = []
    for line in text.splitlines():
        if line.startswith("hostlist"):
            line = "hostlist " + " ".join(names)
        elif line.startswith("slots "):
            line = "slots 1," + ",".join(f"[{h}={j % 8 + 1}]" for j, h in enumerate(names))
        elif line.startswith("h_rt "):
            line = "h_rt INFINITY," + ",".join(f"[{h}={j}:00:00]" for j, h in enumerate(names))
        elif line.startswith("complex_values "):
            line = "complex_values NONE," + ",".join(f"[{h}=license={j}]" for j, h in enumerate(names))
        lines.append(line)
    return "\n".join(lines) + "\n"


def _timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    big = [_queue_with_overrides(i, 100) for i in range(100)]
    parsed_big = [queue_conf.parse(t) for t in big]
    small = [queue_conf.write(queue_conf.template(f"q{i}.q")).replace("hostlist              NONE",
                                                                     f"hostlist              node{i}")
             for i in range(10000)]
    parsed_small = [queue_conf.parse(t) for t in small]

    golden = open("tests/golden/accounting_raw_lines").read().splitlines()
    golden = [g for g in golden if g and not g.startswith("#")]
    lines = [golden[i % len(golden)] for i in range(100000)]
    text = accounting.header() + "\n".join(lines) + "\n"
    records = list(accounting.read_file(text))

    rows = [
        ("queue_conf: parse 100 queues x 100 host overrides (10k instances)",
         _timed(lambda: [queue_conf.parse(t) for t in big], args.repeat)),
        ("queue_conf: write the same", _timed(lambda: [queue_conf.write(q) for q in parsed_big], args.repeat)),
        ("queue_conf: parse 10,000 single-host queue files",
         _timed(lambda: [queue_conf.parse(t) for t in small], args.repeat)),
        ("queue_conf: write 10,000 single-host queue files",
         _timed(lambda: [queue_conf.write(q) for q in parsed_small], args.repeat)),
        ("accounting: parse 100,000 lines", _timed(lambda: list(accounting.read_file(text)), args.repeat)),
        ("accounting: write 100,000 lines", _timed(lambda: [accounting.write_line(r) for r in records], args.repeat)),
    ]
    for name, secs in rows:
        print(f"{name:70s} {secs * 1000:9.1f} ms")


if __name__ == "__main__":
    main()
