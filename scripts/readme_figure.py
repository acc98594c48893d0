"""The README's figure, ``docs/figures/report_study.png``: a screenshot of the study's report page.

Builds the page as docs/report.md says (``mteb-evalrank report docs/study/run/results``, into a
temporary folder; ``--page`` takes one already built), opens it in headless Chromium (Debian's
``chromium`` and ``chromedriver``: ``bash scripts/install_browser.sh``) in a 1400 × 1000 window,
scrolls to the correlation section (the mean ρ table and the heatmap) and writes the view as a PNG
(about 200 KB).

    PYTHONPATH=$PWD .venv/bin/python scripts/readme_figure.py [--page SITE/index.html] [--out PNG]
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STUDY = REPO / "docs" / "study" / "run" / "results"
WINDOW = (1400, 1000)  # the window; the page gets about 1400 × 860 of it


def build_page(site: Path) -> Path:
    """The study's page, written by the CLI in a second process (as a reader runs it)."""
    command = [sys.executable, "-m", "mteb_evalrank.cli", "report", str(STUDY), "--out", str(site)]
    subprocess.run(command, check=True, cwd=REPO)
    return site / "index.html"


def screenshot(page: Path, profile: Path) -> bytes:
    """The PNG of the window scrolled to the page's ``#correlation`` section."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     f"--user-data-dir={profile}", "--force-device-scale-factor=1"):  # fmt: skip
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_window_size(*WINDOW)
        driver.get(page.resolve().as_uri())
        driver.execute_script("document.getElementById('correlation').scrollIntoView();")
        return bytes(driver.get_screenshot_as_png())
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=Path, help="an already built study page (default: build it)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "figures" / "report_study.png")
    args = parser.parse_args()
    from PIL import Image

    with tempfile.TemporaryDirectory(prefix="readme-figure-") as folder:
        page = args.page or build_page(Path(folder) / "site")
        png = screenshot(page, Path(folder) / "chromium")
    image = Image.open(io.BytesIO(png)).convert("RGB")  # no alpha channel: a smaller file
    image.save(args.out, optimize=True)
    print(f"wrote {args.out} ({image.width} × {image.height}, {args.out.stat().st_size / 1e3:.0f} KB)")


if __name__ == "__main__":
    main()
