"""Wall time of the test suite per tier: the fast tier (``-m "not slow"``) and the whole suite.

Runs pytest as ``scripts/test.sh`` does (offline flags, ``-n auto``), once per tier, and
writes ``benchmarks/test_tiers.json`` and ``benchmarks/test_tiers.md`` (command, machine, date,
commit, counts, pytest's own time and the process wall time). Targets: the fast tier
<= 180 s of pytest on the project's 2-core machine; the whole ``.ci/run`` <= 15 min.

    python benchmarks/bench_test_tiers.py [--tier fast|all ...] [--workers auto] [--out benchmarks]

Run it from the repository root on an otherwise idle machine, after ``bash scripts/setup.sh``
(the venv must exist; the checks before pytest, ruff, mypy and mkdocs, are not timed here).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TIERS = {"fast": ["-m", "not slow"], "all": []}
TARGETS = {"fast": 180.0}
#: pytest's closing line, e.g. "592 passed, 31 deselected in 566.80s (0:09:26)" (framed by "=" without -q)
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ \w+.*?) in (?P<seconds>[\d.]+)s", re.M)


def machine() -> str:
    """CPU model and core count (``/proc/cpuinfo`` where it exists)."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line
        ]
        model = names[0] if names else model
    return f"{model}, {os.cpu_count()} CPUs"


def commit() -> str:
    """The checkout's short commit hash."""
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()


def parse_summary(output: str) -> dict[str, Any]:
    """``{"counts": {"passed": 592, ...}, "pytest_seconds": 566.8}`` from pytest's last summary line."""
    matches = list(SUMMARY.finditer(output))
    if not matches:
        raise ValueError("no pytest summary line in the output:\n" + output[-2000:])
    last = matches[-1]
    counts = {word: int(number) for number, word in re.findall(r"(\d+) (\w+)", last["counts"])}
    return {"counts": counts, "pytest_seconds": float(last["seconds"])}


def run_tier(tier: str, workers: str) -> dict[str, Any]:
    """Run one tier and return its record (the command, counts, times, the ten slowest tests)."""
    command = [sys.executable, "-m", "pytest", "-q", "-n", workers, "--durations=10", *TIERS[tier]]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    record: dict[str, Any] = {
        "tier": tier,
        "command": " ".join(["python", *command[1:]]),
        "returncode": result.returncode,
    }
    record |= parse_summary(result.stdout)
    record["wall_seconds"] = round(wall, 1)
    slowest = re.findall(r"^(\d+\.\d+)s (call|setup|teardown)\s+(\S+)", result.stdout, flags=re.M)
    record["slowest"] = [f"{seconds}s {phase} {test}" for seconds, phase, test in slowest]
    if tier in TARGETS:
        record["target_seconds"] = TARGETS[tier]
        record["meets_target"] = record["pytest_seconds"] <= TARGETS[tier]
    return record


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Test suite wall time per tier",
        "",
        f"{report['date']}, commit {report['commit']}, {report['machine']}, "
        f"`python benchmarks/bench_test_tiers.py` (pytest-xdist `-n {report['workers']}`).",
        "",
        "| tier | command | passed | skipped | pytest (s) | wall (s) | target |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for tier in report["tiers"]:
        counts = tier["counts"]
        target = (
            f"<= {tier['target_seconds']:.0f} s: {'met' if tier['meets_target'] else 'MISSED'}"
            if "target_seconds" in tier
            else ""
        )
        cells = [tier["tier"], f"`{tier['command']}`"]
        # (pytest-xdist's summary does not count the deselected tests: not shown)
        cells += [str(counts.get(word, 0)) for word in ("passed", "skipped")]
        cells += [f"{tier['pytest_seconds']:.1f}", f"{tier['wall_seconds']:.1f}", target]
        lines.append("| " + " | ".join(cells) + " |")
    for tier in report["tiers"]:
        lines += ["", f"Slowest tests, {tier['tier']} tier:", ""]
        lines += [f"- `{entry}`" for entry in tier["slowest"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", action="append", choices=list(TIERS), help="default: fast, then all")
    parser.add_argument("--workers", default="auto", help="pytest-xdist -n (default: auto)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "machine": machine(),
        "load_before": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "workers": args.workers,
        "tiers": [],
    }
    for tier in args.tier or list(TIERS):
        print(f"running the {tier} tier ...", file=sys.stderr, flush=True)
        report["tiers"].append(run_tier(tier, args.workers))
        print(json.dumps(report["tiers"][-1], indent=1), file=sys.stderr, flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "test_tiers.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (args.out / "test_tiers.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return 0 if all(tier["returncode"] == 0 for tier in report["tiers"]) else 1


if __name__ == "__main__":
    sys.exit(main())
