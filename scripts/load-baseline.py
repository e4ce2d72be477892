#!/usr/bin/env python3
"""The baseline of BenchmarkReportScaling's load measure: a plain Python csv
group-by computing what hoh's load does before any table, the mean over tasks
of each task's mean over repetitions, per (benchmark, configuration,
condition, checkpoint, metric). Prints the number of series and the process's
CPU seconds and peak memory to stderr.
Usage: scripts/load-baseline.py RECORDS.csv..."""
import csv
import resource
import sys
from collections import defaultdict


def main(paths):
    acc = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))  # series -> task -> [sum, n]
    for path in paths:
        with open(path, newline="") as f:
            rows = csv.reader(f)
            ix = {name: i for i, name in enumerate(next(rows))}
            b, c, co, cp, t, m, v = (ix[k] for k in ("benchmark", "config", "condition", "checkpoint", "task", "metric", "value"))
            for row in rows:
                s = acc[(row[b], row[c], row[co], row[cp], row[m])][row[t]]
                s[0] += float(row[v])
                s[1] += 1
    means = {k: sum(s / n for s, n in tasks.values()) / len(tasks) for k, tasks in acc.items()}
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"series {len(means)} cpu_s {ru.ru_utime + ru.ru_stime:.3f} maxrss_kb {ru.ru_maxrss}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
