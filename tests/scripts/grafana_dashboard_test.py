#!/usr/bin/env python3
"""The Grafana dashboard against a running node.

Usage: grafana_dashboard_test.py <logosdelivery> <dashboard.json>

Starts the node program with every service that has metrics (relay, store with store-sync, filter,
lightpush, peer exchange) and its metrics server on a free port, scrapes /metrics once, and checks
that every query of every panel names only metric families the node exports (a histogram's
_bucket/_sum/_count included), and that every {{label}} of a legend is a label those series carry
(or one Prometheus adds: instance, job). Also checks the dashboard's own shape: unique panel IDs,
a datasource variable, every panel on the 24-column grid.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

FUNCTIONS_OR_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
    "offset", "inf", "nan",
}
PROMETHEUS_LABELS = {"instance", "job"}


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def start_node(binary, tmp):
    args = [
        binary, "--listen-address=127.0.0.1", "--tcp-port=0", "--relay=true", "--store=true",
        f"--store-message-db-url=sqlite://{tmp}/store.sqlite3", "--store-sync=true",
        "--filter=true", "--lightpush=true", "--peer-exchange=true", "--metrics-server=true",
        "--metrics-server-address=127.0.0.1", "--metrics-server-port=0", "--log-level=INFO",
    ]
    log = open(os.path.join(tmp, "node.log"), "w+")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    url_re = re.compile(r"Metrics HTTP server started at (http://[\d.]+:(\d+)/metrics)")
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            fail(f"the node exited with {proc.returncode}:\n{log.read()}")
        log.seek(0)
        m = url_re.search(log.read())
        if m and int(m.group(2)) > 0:
            return proc, m.group(1)
        time.sleep(0.1)
    proc.kill()
    fail("the node did not log its metrics URL within 60 s")


def scrape(url):
    """{family: type} and {sample name: set of label names} of the exposition."""
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    families, labels = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            families[name] = kind
        elif line and not line.startswith("#"):
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s", line)
            if m:
                names = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
                labels.setdefault(m.group(1), set()).update(names)
    return families, labels


def exported_names(families):
    names = set()
    for name, kind in families.items():
        names.add(name)
        if kind == "histogram":
            names.update({name + "_bucket", name + "_sum", name + "_count"})
    return names


def metric_names(expr):
    """The metric names a PromQL expression reads (selectors), without functions, keywords, label
    matchers, grouping clauses, strings and durations."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    names = []
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in FUNCTIONS_OR_KEYWORDS:
            continue
        names.append(word)
    return names


def grouping_labels(expr):
    """Labels kept by the outermost `by (...)`, or None when the expression keeps all."""
    m = re.search(r"\bby\s*\(([^)]*)\)", expr)
    return None if m is None else {x.strip() for x in m.group(1).split(",") if x.strip()}


def all_panels(dash):
    for p in dash.get("panels", []):
        yield p
        for q in p.get("panels", []):
            yield q


def check_shape(dash):
    ids = [p["id"] for p in all_panels(dash)]
    if len(ids) != len(set(ids)):
        fail(f"panel IDs repeat: {ids}")
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    if variables.get("datasource", {}).get("type") != "datasource":
        fail("no datasource variable")
    for p in all_panels(dash):
        g = p["gridPos"]
        if g["x"] < 0 or g["x"] + g["w"] > 24 or g["w"] <= 0 or g["h"] <= 0:
            fail(f"panel {p['title']!r} is off the grid: {g}")


def main():
    binary, dashboard = sys.argv[1], sys.argv[2]
    dash = json.load(open(dashboard))
    check_shape(dash)
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_node(binary, tmp)
        try:
            families, labels = scrape(url)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    exported = exported_names(families)
    problems, queries = [], 0
    for p in all_panels(dash):
        for t in p.get("targets", []):
            expr = t["expr"]
            queries += 1
            names = metric_names(expr)
            if not names:
                problems.append(f"{p['title']!r}: no metric in {expr!r}")
            for n in names:
                if n not in exported:
                    problems.append(f"{p['title']!r}: {n} is not exported by the node ({expr!r})")
            legend = set(re.findall(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}", t.get("legendFormat", "")))
            kept = grouping_labels(expr)
            for label in legend - PROMETHEUS_LABELS:
                if kept is not None and label not in kept:
                    problems.append(f"{p['title']!r}: legend label {label} is not kept by {expr!r}")
                seen = [labels[n] for n in names if n in labels]
                if kept is None and seen and not any(label in s for s in seen):
                    problems.append(f"{p['title']!r}: no series of {names} has the label {label}")
    if problems:
        fail("\n".join(problems))
    print(f"dashboard: {queries} queries in {sum(1 for _ in all_panels(dash))} panels, "
          f"every metric among the {len(families)} families the node exports")


if __name__ == "__main__":
    main()
