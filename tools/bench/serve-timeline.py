#!/usr/bin/env python3
"""Samples a running `fencepost serve` once a second while tools/bench/serve loads it: per second,
the location posts answered and their latency percentiles (from the service's own request
histogram, differenced between scrapes), the live writer's groups, fixes per group, commit, sync
and log-restart times (its histograms), and the size of the store's write-ahead log file.

    serve-timeline.py URL DB SECONDS OUT.tsv     (prints the slowest seconds when done)
"""
import os, re, sys, time, urllib.request

url, db, seconds, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
LINE = re.compile(r'^(\w+)(?:\{(.*)\})? ([0-9.eE+-]+|\+Inf|NaN)$')


def scrape():
    """{(name, labels): value} of every sample."""
    samples = {}
    with urllib.request.urlopen(url + "/metrics", timeout=5) as response:
        for line in response.read().decode().splitlines():
            match = LINE.match(line)
            if match:
                samples[(match.group(1), match.group(2) or "")] = float(match.group(3))
    return samples


def buckets(samples, name, label_filter):
    """Cumulative bucket counts of a histogram by upper bound, summed over matching series."""
    result = {}
    for (metric, labels), value in samples.items():
        if metric != name + "_bucket" or label_filter not in labels:
            continue
        bound = re.search(r'le="([^"]+)"', labels).group(1)
        bound = float("inf") if bound == "+Inf" else float(bound)
        result[bound] = result.get(bound, 0) + value
    return result


def percentile(cumulative, q):
    """The upper bound of the bucket holding the q-th quantile (coarse, but never optimistic)."""
    total = cumulative.get(float("inf"), 0)
    if total <= 0:
        return float("nan")
    for bound in sorted(cumulative):
        if cumulative[bound] >= q * total:
            return bound
    return float("inf")


def delta(now, before):
    return {bound: now.get(bound, 0) - before.get(bound, 0) for bound in now}


def total(samples, name):
    return sum(value for (metric, _), value in samples.items() if metric == name)


rows = []
previous = scrape()
start = time.time()
while time.time() - start < seconds:
    time.sleep(max(0.0, 1.0 - (time.time() - start) % 1.0))
    try:
        current = scrape()
    except Exception:
        continue
    requests = delta(buckets(current, "fencepost_http_request_duration_seconds", 'route="/v1/devices/{device}/locations"'),
                     buckets(previous, "fencepost_http_request_duration_seconds", 'route="/v1/devices/{device}/locations"'))
    commits = delta(buckets(current, "fencepost_writer_commit_seconds", ""), buckets(previous, "fencepost_writer_commit_seconds", ""))
    syncs = delta(buckets(current, "fencepost_writer_sync_seconds", ""), buckets(previous, "fencepost_writer_sync_seconds", ""))
    restarts = delta(buckets(current, "fencepost_writer_log_restart_seconds", ""),
                     buckets(previous, "fencepost_writer_log_restart_seconds", ""))
    groups = total(current, "fencepost_writer_group_fixes_count") - total(previous, "fencepost_writer_group_fixes_count")
    fixes = total(current, "fencepost_writer_group_fixes_sum") - total(previous, "fencepost_writer_group_fixes_sum")
    try:
        log = os.path.getsize(db + "-wal") / 1048576
    except OSError:
        log = float("nan")
    rows.append((round(time.time() - start), requests.get(float("inf"), 0), percentile(requests, 0.5), percentile(requests, 0.99),
                 percentile(requests, 1.0), groups, fixes / groups if groups else 0, percentile(commits, 1.0),
                 percentile(syncs, 1.0), restarts.get(float("inf"), 0), percentile(restarts, 1.0), log))
    previous = current

with open(out, "w") as f:
    f.write("second\trequests\tp50_le_s\tp99_le_s\tmax_le_s\tgroups\tfixes_per_group\tcommit_max_le_s\tsync_max_le_s\tlog_restarts\trestart_max_le_s\tlog_mib\n")
    for row in rows:
        f.write("\t".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + "\n")
worst = sorted(rows, key=lambda r: (r[4], r[3]), reverse=True)[:5]
print(f"timeline: {len(rows)} seconds in {out}; slowest seconds (latency bucket bounds, s):")
for row in worst:
    print(f"  second {row[0]:>3}: {int(row[1])} requests, p99 <= {row[3]}, max <= {row[4]}; {int(row[5])} groups, "
          f"commit max <= {row[7]}, sync max <= {row[8]}, {int(row[9])} log restarts (max <= {row[10]}), log {row[11]:.1f} MiB")
