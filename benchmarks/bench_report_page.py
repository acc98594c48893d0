"""Size and time of the study's report page: ``mteb-evalrank report docs/study/run/results --out SITE``.

Runs the command (``python -m mteb_evalrank.cli report``, a fresh process each run) ``--repeats``
times and reports each run's wall time, its CPU time (user + system of the process) and the
1-minute load average before it; the page's size and what it is made of (inline SVG, the scatter
panels' data, the tables, the rest); where the time goes (one more run in this process under
cProfile: the cumulative seconds of the page's steps, inflated by the profiler, and the imports
before it); and, with ``--browser``, how long headless Chromium (``bash scripts/install_browser.sh``)
takes to open the page and then to draw every figure with every section open. Targets: a page of at
most 3 MB, the command at most 30 s on the project's 2-core machine.

    PYTHONPATH=$PWD python benchmarks/bench_report_page.py [--repeats 3] [--browser] [--out benchmarks]

writes ``report_page.json`` and ``report_page.md`` into ``--out``. Run it from the repository root
on an otherwise idle machine (the load average before each run is in the report).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import json
import os
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_test_tiers import commit, machine

REPO = Path(__file__).resolve().parents[1]
STUDY = Path("docs/study/run/results")
TARGET_MB, TARGET_S = 3.0, 30.0
#: the page's steps in the profile: (module file, function) -> what it is
STEPS = {
    ("correlation/table.py", "load_results"): "reading the result files",
    ("correlation/core.py", "correlate"): "`correlate`: ρ, bootstrap CIs, permutations",
    ("correlation/figures.py", "heatmap"): "the heatmap (matplotlib SVG)",
    ("correlation/figures.py", "scatter_grid"): "the scatter grids (matplotlib SVG)",
    ("correlation/figures.py", "scatter_panels"): "the scatter panels' data",
    ("html_report/page.py", "_family_sections"): "the families' own ρ",
    ("html_report/page.py", "render"): "the HTML (jinja2)",
    ("html_report/page.py", "write_report"): "the whole page",
}
PARTS = {  # what the page is made of: the markup of each part
    "inline SVG (matplotlib)": re.compile(r"<svg.*?</svg>", re.S),
    "scatter panels' data": re.compile(r'<div class="panels".*?</div>', re.S),
    "tables": re.compile(r"<table.*?</table>", re.S),
}


def run_command(site: Path) -> dict[str, Any]:
    """One run of the command in a new process: wall and CPU seconds, the load before it."""
    command = [sys.executable, "-m", "mteb_evalrank.cli", "report", str(STUDY), "--out", str(site)]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=REPO, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_before": round(load, 2)}


def composition(page: Path) -> dict[str, int]:
    """Bytes of the page and of each of its parts (``PARTS``; the rest: styles, scripts, text)."""
    text = page.read_text(encoding="utf-8")
    sizes = {name: sum(len(m.encode()) for m in pattern.findall(text)) for name, pattern in PARTS.items()}
    total = len(text.encode())
    return {"page": total, **sizes, "the rest": total - sum(sizes.values())}


def profile(site: Path) -> dict[str, Any]:
    """The imports' wall seconds, then one page under cProfile: cumulative seconds per step."""
    start = time.perf_counter()
    import matplotlib.pyplot  # noqa: F401  (imported by the page's first figure)
    import mteb  # noqa: F401

    from mteb_evalrank.html_report import write_report

    imports = time.perf_counter() - start
    profiler = cProfile.Profile()
    profiler.runcall(write_report, REPO / STUDY, site)
    found: dict[str, float] = {}
    for (file, _, function), row in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]
        for (suffix, name), step in STEPS.items():
            if function == name and file.endswith(suffix):
                found[step] = round(row[3], 2)
    return {"imports_s": round(imports, 2), "steps_s": {step: found.get(step) for step in STEPS.values()}}


def browser(page: Path, profile_dir: Path) -> dict[str, float]:
    """Headless Chromium: seconds to open the page (load event), then to open every section and
    draw every figure in it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile_dir}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_window_size(1400, 1000)
        start = time.perf_counter()
        driver.get(page.resolve().as_uri())
        opened = time.perf_counter() - start
        drawn = driver.execute_async_script("""
            const done = arguments[arguments.length - 1], start = performance.now();
            document.querySelectorAll('details').forEach((d) => { d.open = true; });
            const wait = () => [...document.querySelectorAll('div.panels')].every((p) => 'drawn' in p.dataset)
              ? requestAnimationFrame(() => done(performance.now() - start)) : setTimeout(wait, 5);
            wait();
        """)
    finally:
        driver.quit()
    return {"open_s": round(opened, 2), "open_every_section_s": round(float(drawn) / 1000, 2)}


def markdown(report: dict[str, Any]) -> str:
    runs = report["runs"]
    size = report["composition"]
    lines = [
        "# The study's report page: size and time",
        "",
        f"{report['date']}, commit {report['commit']}, {report['machine']}: `{report['command']}` "
        f"(`PYTHONPATH=$PWD python benchmarks/bench_report_page.py{report['arguments']}`).",
        "",
        "| run | wall (s) | CPU (s) | load average before (1 min) |",
        "|---:|---:|---:|---:|",
        *[f"| {i} | {r['wall_s']} | {r['cpu_s']} | {r['load_before']} |" for i, r in enumerate(runs, 1)],
        "",
        f"Median wall time {report['median_wall_s']} s (target ≤ {TARGET_S:.0f} s: "
        f"{'met' if report['median_wall_s'] <= TARGET_S else 'missed'}); page {size['page'] / 1e6:.2f} MB "
        f"(target ≤ {TARGET_MB:.0f} MB: {'met' if size['page'] <= TARGET_MB * 1e6 else 'missed'}).",
        "",
        "| part of the page | bytes |",
        "|---|---:|",
        *[f"| {part} | {n:,} |" for part, n in size.items()],
        "",
        f"Where the time goes: importing mteb, the plugin and matplotlib {report['profile']['imports_s']} s "
        "(wall), then one page under cProfile (cumulative seconds, inflated by the profiler):",
        "",
        "| step | s |",
        "|---|---:|",
        *[f"| {step} | {s} |" for step, s in report["profile"]["steps_s"].items() if s is not None],
    ]
    if "browser" in report:
        b = report["browser"]
        lines += ["", f"Headless Chromium: the page opens in {b['open_s']} s; opening every section and "
                  f"drawing every figure takes {b['open_every_section_s']} s more."]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="also time the page in headless Chromium")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks")
    args = parser.parse_args(argv)
    options = (f" --repeats {args.repeats}" if args.repeats != 3 else "") + (
        " --browser" if args.browser else ""
    )
    with tempfile.TemporaryDirectory(prefix="bench-report-page-") as folder:
        site = Path(folder) / "site"
        runs = []
        for i in range(args.repeats):
            runs.append(run_command(site))
            print(f"run {i + 1}: {runs[-1]}", file=sys.stderr, flush=True)
        report: dict[str, Any] = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit(),
            "machine": machine(),
            "command": f"mteb-evalrank report {STUDY} --out SITE",
            "arguments": options,
            "runs": runs,
            "median_wall_s": round(statistics.median(r["wall_s"] for r in runs), 2),
            "composition": composition(site / "index.html"),
            "profile": profile(Path(folder) / "profiled"),
        }
        if args.browser:
            report["browser"] = browser(site / "index.html", Path(folder) / "chromium")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report_page.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (args.out / "report_page.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
