#!/usr/bin/env python3
"""Prints the deterministic numbers of a tilesim output in a stable text form (scripts/results-fingerprint.sh).

  results_canonical.py run REPORT.json        per backend and op: cycles, times, bytes, plans
  results_canonical.py validation FILE.json   every number of validate/calibrate-model output
  results_canonical.py sweep RESULTS.csv      every row of a sweep, sorted, without host timings

Host wall times, dates, versions, revisions and machine provenance are left out: they change between
runs of the same model and say nothing about its results.
"""
import csv
import json
import os
import sys

# Keys whose values describe the run, not its results.
VOLATILE = ("wall", "host", "version", "revision", "utc", "date", "provenance", "elapsed", "file", "dir", "path",
            "simulated_cycles_per_s", "hash", "started", "finished")



ROOT = os.getcwd()  # the checkout (results-fingerprint.sh runs from its root)


def volatile(key):
    # Whole underscore-separated words only: "multiupdateadd_..." is a figure, not a date.
    words = key.lower().split("_")
    return key.lower() in VOLATILE or any(w in VOLATILE or w.rstrip("s") in VOLATILE for w in words)


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not volatile(k)}
    if isinstance(value, list):
        return [strip(v) for v in value]
    if isinstance(value, str) and value.startswith(ROOT):
        return "<repo>" + value[len(ROOT):]  # checkouts in other folders give the same fingerprint
    if isinstance(value, str) and value.startswith("/") and value.endswith(".json"):
        # A file the run wrote under its output folder (a published entry's report): the folder is the
        # caller's choice, the last three names are the run's.
        return "<out>/" + "/".join(value.split("/")[-3:])
    return value


def dump(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def run(path):
    report = json.load(open(path))
    for b in report["results"]:
        print("backend", b["backend"], b.get("kind"), "time_s", dump(b.get("time_s")), "cycles", dump(b.get("cycles")))
        for key, value in sorted(strip(b).items()):
            if key == "ops":
                for op in value:
                    print("  op", dump(op))
            elif key not in ("backend", "kind", "time_s", "cycles"):
                print("  ", key, dump(value))


def validation(path):
    print(json.dumps(strip(json.load(open(path))), sort_keys=True, indent=1))


def sweep(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    keep = [c for c in rows[0].keys() if not volatile(c)]
    print(",".join(keep))
    for line in sorted(",".join(r[c] for c in keep) for r in rows):
        print(line)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("run", "validation", "sweep"):
        sys.exit(__doc__)
    {"run": run, "validation": validation, "sweep": sweep}[sys.argv[1]](sys.argv[2])
