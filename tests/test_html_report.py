"""``mteb-evalrank report``: the page of a results folder, checked against numbers computed here from
the result files (scipy for ρ), and in a real browser (headless Chromium from Debian, driven by
selenium through Debian's chromedriver; ``scripts/install_browser.sh`` installs both).

Fixtures are copies of the committed study's results (``docs/study/run/results``): real scores of
real models, a few models and tasks so that the page is built in seconds.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from second_process import second_process

from mteb_evalrank.html_report import Options, write_report

REPO = Path(__file__).resolve().parent.parent
STUDY = REPO / "docs" / "study" / "run" / "results"
#: base model -> its family in the zoo (models/zoo.py) and the number of its variants taken here
FAMILIES = {
    "all-mpnet-base-v2": ("all-mpnet-base-v2", 3),  # its truncation is -dim384, not taken
    "bge-small-en-v1.5-int8": ("bge-small-en-v1.5", 4),
    "paraphrase-MiniLM-L3-v2": ("paraphrase-MiniLM-L3-v2", 4),
}
MODELS = [f"evalrank/{base}{variant}" for base in FAMILIES for variant in ("", "-abtt", "-whiten", "-dim192")]
MODELS = [m for m in MODELS if (STUDY / m.replace("/", "__")).is_dir()]
TASKS = ("EvalRankSent", "WordSimMEN", "STSBenchmark", "SentEvalMR", "SentEvalCR")
INTRINSIC, DOWNSTREAM = ("EvalRankSent", "STSBenchmark", "WordSimMEN"), ("SentEvalCR", "SentEvalMR")
QUICK = Options(n_bootstrap=200, n_permutations=200)
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def copy_results(out: Path, models: list[str], tasks: tuple[str, ...]) -> Path:
    """``out/results/<model>/<revision>/`` holding the study's files of these models and tasks (those
    it has)."""
    for model in models:
        for source in (STUDY / model.replace("/", "__")).iterdir():
            target = out / "results" / source.parent.name / source.name
            target.mkdir(parents=True)
            for name in [*(f"{t}.json" for t in tasks), "model_meta.json"]:
                if (source / name).is_file():  # a task the model did not run: left out
                    shutil.copy(source / name, target / name)
    return out


def main_score(model: str, task: str) -> float:
    """A task's main score read from the study's file: the mean over its test subsets."""
    (folder,) = (STUDY / model.replace("/", "__")).iterdir()
    data = json.loads((folder / f"{task}.json").read_text(encoding="utf-8"))
    return float(np.mean([entry["main_score"] for entry in data["scores"]["test"]]))


class Cells(HTMLParser):
    """The text of every table's cells, and every attribute that loads something."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.loads: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.loads += [  # an in-page anchor or inline data (the heatmap's pixels) loads nothing
            f"{tag} {k}={v}"
            for k, v in attrs
            if k in ("src", "href", "xlink:href") and not (v or "").startswith(("#", "data:"))
        ]
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join(" ".join(self._cell).split()))
            self._cell = None


def parse(page: Path) -> Cells:
    cells = Cells()
    cells.feed(page.read_text(encoding="utf-8"))
    return cells


def table_with(cells: Cells, header: str) -> list[list[str]]:
    """The first table whose header row has a cell starting with ``header``."""
    return next(t for t in cells.tables if any(c.startswith(header) for c in t[0]))


@pytest.fixture(scope="module")
def small_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = copy_results(tmp_path_factory.mktemp("results"), MODELS, TASKS)
    return write_report(folder, folder / "site", QUICK)


def test_the_score_table_shows_every_models_main_score_and_marks_the_best(small_page: Path) -> None:
    table = table_with(parse(small_page), "EvalRankSent")
    head = table[0]
    column = next(i for i, c in enumerate(head) if c.startswith("EvalRankSent"))
    assert head[column] == "EvalRankSent cosine_mrr"  # the headline metric is named
    rows = {row[0]: row for row in table[1:]}
    assert sorted(rows) == sorted(MODELS)
    scores = {m: main_score(m, "EvalRankSent") for m in MODELS}
    best = max(scores, key=scores.__getitem__)
    for model, score in scores.items():
        expected = f"{100 * score:.1f}" + (" ★" if model == best else "")
        assert rows[model][column] == expected
    assert head[-1] == "family" and rows[MODELS[0]][-1] == "all-mpnet-base-v2"  # the zoo's family, last


def test_each_intrinsic_tasks_mean_rho_is_the_mean_of_scipys_spearman(small_page: Path) -> None:
    table = table_with(parse(small_page), "intrinsic")
    shown = {row[0]: float(row[1]) for row in table[1:]}
    assert set(shown) == set(INTRINSIC)
    for intrinsic in INTRINSIC:
        x = [main_score(m, intrinsic) for m in MODELS]
        rhos = [stats.spearmanr(x, [main_score(m, d) for m in MODELS]).statistic for d in DOWNSTREAM]
        assert shown[intrinsic] == pytest.approx(100 * np.mean(rhos), abs=0.051)


def test_the_pairs_table_gives_scipys_rho_for_every_pair_and_a_p_value(small_page: Path) -> None:
    pairs = table_with(parse(small_page), "downstream")
    assert pairs[0] == ["intrinsic", "downstream", "ρ ×100", "CI 95%", "models", "families", "p holm"]
    assert len(pairs) - 1 == len(INTRINSIC) * len(DOWNSTREAM)
    for intrinsic, downstream, rho, ci, n, families, p in pairs[1:]:
        x = [main_score(m, intrinsic) for m in MODELS]
        expected = stats.spearmanr(x, [main_score(m, downstream) for m in MODELS]).statistic
        assert float(rho) == pytest.approx(100 * expected, abs=0.051)
        low, high = map(float, ci.strip("[]").split(", "))
        assert low <= float(rho) <= high
        assert (n, families) == (str(len(MODELS)), str(len(FAMILIES)))
        assert 0 < float(p) <= 1


def test_the_scatter_titles_give_scipys_rho_and_a_ci_around_it(small_page: Path) -> None:
    text = small_page.read_text(encoding="utf-8")
    x = [main_score(m, "STSBenchmark") for m in MODELS]
    rho = stats.spearmanr(x, [main_score(m, "SentEvalMR") for m in MODELS]).statistic
    titles = re.findall(r"ρ = (-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\], n = (\d+)", text)
    assert len(titles) == len(INTRINSIC) * len(DOWNSTREAM)  # one panel per pair
    assert (f"{rho:.2f}", str(len(MODELS))) in {(r, n) for r, _, _, n in titles}
    assert all(float(lo) <= float(r) <= float(hi) for r, lo, hi, _ in titles)


def test_the_page_loads_nothing_and_names_coverage_families_and_provenance(small_page: Path) -> None:
    cells = parse(small_page)
    assert cells.loads == []  # nothing is requested
    coverage = table_with(cells, "WordSimMEN")
    assert any(row[0] == MODELS[0] for row in table_with(cells, "revision")[1:])
    text = small_page.read_text(encoding="utf-8")
    assert "WordSimMEN coverage" in {head for t in cells.tables for head in t[0]}
    assert coverage
    for family, k in FAMILIES.values():
        assert f"<summary>{family} ({k} models)</summary>" in text
    assert "v1.0.0" in text and "2.26" in text  # the dataset revision, mteb's version


def test_a_one_model_one_task_folder_gives_a_page_without_correlations(tmp_path: Path) -> None:
    folder = copy_results(tmp_path, MODELS[:1], ("EvalRankSent",))
    cells = parse(write_report(folder, tmp_path / "site", QUICK))
    table = table_with(cells, "EvalRankSent")
    assert table[1][0] == MODELS[0]
    column = table[0].index("EvalRankSent cosine_mrr")
    assert table[1][column] == f"{100 * main_score(MODELS[0], 'EvalRankSent'):.1f}"  # no best among one
    assert not any(t[0][0] == "intrinsic" for t in cells.tables)
    text = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert re.search(r"<li>no correlations: they need at least 8 models .*; here 1: the comparison", text)
    assert text.count("<li>") == 1  # that note alone


def test_the_cli_takes_a_families_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mteb_evalrank.cli import main

    folder = copy_results(tmp_path, MODELS, ("EvalRankSent", "SentEvalMR"))
    families = {m: "static" if m.endswith(("-abtt", "-whiten")) else "plain" for m in MODELS}
    (tmp_path / "families.csv").write_text(
        "model,family\n" + "".join(f"{m},{f}\n" for m, f in families.items()), encoding="utf-8"
    )
    main(
        [
            "report",
            str(folder / "results"),
            "--out",
            str(tmp_path / "site"),
            "--families",
            str(tmp_path / "families.csv"),
        ]
    )
    assert capsys.readouterr().out.startswith(f"wrote {tmp_path / 'site' / 'index.html'} (")
    page = tmp_path / "site" / "index.html"
    rows = table_with(parse(page), "EvalRankSent")[1:]
    assert {row[0]: row[-1] for row in rows} == families
    text = page.read_text(encoding="utf-8")
    for family in ("plain", "static"):
        assert f"<summary>{family} ({list(families.values()).count(family)} models)</summary>" in text


@second_process
def test_a_damaged_result_file_is_named_on_the_page_and_the_rest_shown(tmp_path: Path) -> None:
    folder = copy_results(tmp_path, MODELS, TASKS)
    (damaged,) = (folder / "results" / MODELS[1].replace("/", "__")).glob("*/SentEvalMR.json")
    damaged.write_bytes(damaged.read_bytes()[:1000])  # cut short
    with pytest.warns(UserWarning, match="SentEvalMR.json"):
        page = write_report(folder, tmp_path / "site", QUICK)
    text = page.read_text(encoding="utf-8")
    assert f"{damaged}: not valid JSON" in text
    rows = {row[0]: row for row in table_with(parse(page), "SentEvalCR")[1:]}
    column = table_with(parse(page), "SentEvalCR")[0].index("SentEvalMR lr_accuracy")
    assert rows[MODELS[1]][column] == "–" and rows[MODELS[0]][column] != "–"


def test_a_folder_whose_result_files_are_all_damaged_is_named_with_each_file(tmp_path: Path) -> None:
    from mteb_evalrank.correlation import CorrelationInputError

    folder = copy_results(tmp_path, MODELS[:1], ("EvalRankSent", "SentEvalMR"))
    files = sorted((folder / "results").rglob("*/*/[ES]*.json"))
    assert [f.name for f in files] == ["EvalRankSent.json", "SentEvalMR.json"]
    for path in files:
        path.write_bytes(path.read_bytes()[:100])
    with pytest.warns(UserWarning), pytest.raises(CorrelationInputError) as raised:
        write_report(folder, tmp_path / "site", QUICK)
    message = str(raised.value)
    assert "2 result file(s), all damaged" in message and all(str(f) in message for f in files)


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_out_naming_a_file_is_one_line_before_any_work(tmp_path: Path, where: str) -> None:
    """The issue's case ran 52-65 s, then a traceback: now the CLI (a second process) ends at once."""
    (tmp_path / "taken").write_text("a file of the user's", encoding="utf-8")
    out = tmp_path / "taken" if where == "a file" else tmp_path / "taken" / "site"
    command = [sys.executable, "-m", "mteb_evalrank.cli", "report", str(STUDY), "--out", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO, timeout=600)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert (
        run.stderr.strip()
        == f"mteb-evalrank report: --out {out}: {tmp_path / 'taken'} is a file, not a folder: give a folder."
    )
    assert (tmp_path / "taken").read_text(encoding="utf-8") == "a file of the user's"


def test_a_missing_results_path_is_named_as_missing(tmp_path: Path) -> None:
    from mteb_evalrank.correlation import CorrelationInputError

    with pytest.raises(CorrelationInputError, match=r"nowhere: no such folder"):
        write_report(tmp_path / "nowhere", tmp_path / "site", QUICK)


def test_a_one_model_page_has_notes_but_no_damaged_banner(tmp_path: Path) -> None:
    folder = copy_results(tmp_path, MODELS[:1], ("EvalRankSent", "SentEvalMR"))
    text = write_report(folder, tmp_path / "site", QUICK).read_text(encoding="utf-8")
    assert "no correlations: they need at least 8 models" in text and "; here 1: the comparison" in text
    assert "damaged" not in text


@pytest.mark.filterwarnings("ignore::mteb_evalrank.result_files.OutdatedResultWarning")
def test_a_run_of_mtebs_own_tasks_and_models_gives_other_tasks_and_its_correlations(tmp_path: Path) -> None:
    """Public MTEB results (models outside the zoo, tasks of no plugin benchmark but STS)."""
    from conftest import SOURCE  # the shared data folder (tests/conftest.py)

    tasks = ("STS12", "STSBenchmark", "AmazonCounterfactualClassification")
    picked = [
        folder
        for folder in sorted((SOURCE / "mteb-results" / "results").glob("*/*"))
        if folder.name != "external" and all((folder / f"{t}.json").is_file() for t in tasks)
    ][:9]  # 8 of them have every subset of the Amazon task: the 8 models a correlation needs
    assert len(picked) == 9
    entries: dict[str, dict[str, dict[str, float]]] = {}  # model -> task -> subset -> main score
    for folder in picked:
        target = tmp_path / "results" / folder.parent.name / folder.name
        target.mkdir(parents=True)
        for name in [*(f"{t}.json" for t in tasks), "model_meta.json"]:
            shutil.copy(folder / name, target / name)
        model = json.loads((folder / "model_meta.json").read_text(encoding="utf-8"))["name"]
        entries[model] = {
            t: {
                e["hf_subset"]: e["main_score"]
                for e in json.loads((folder / f"{t}.json").read_text())["scores"]["test"]
            }
            for t in tasks
        }
    # the table's convention: the mean over the subsets any model has; a model lacking one has no score
    subsets = {t: set().union(*(e[t] for e in entries.values())) for t in tasks}
    scores = {
        m: {t: float(np.mean([e[t][k] for k in subsets[t]])) for t in tasks if set(e[t]) == subsets[t]}
        for m, e in entries.items()
    }
    page = write_report(tmp_path, tmp_path / "site", QUICK)
    cells = parse(page)
    study = table_with(cells, "model")  # the first score table: EvalRank-Study (the STS tasks)
    assert study[0] == ["model", "STS12 cosine_spearman", "STSBenchmark cosine_spearman"]  # no family known
    amazon = table_with(cells, "AmazonCounterfactualClassification")
    amazon_scores = {m: s.get("AmazonCounterfactualClassification") for m, s in scores.items()}
    assert {row[0]: row[1].removesuffix(" ★") for row in amazon[1:]} == {
        m: "–" if v is None else f"{100 * v:.1f}" for m, v in amazon_scores.items()
    }
    assert "–" in {row[1] for row in amazon[1:]}  # a model lacking a subset (here: one)
    assert "<h3>Other tasks</h3>" in page.read_text(encoding="utf-8")
    means = {row[0]: float(row[1]) for row in table_with(cells, "intrinsic")[1:]}
    both = [s for s in scores.values() if len(s) == len(tasks)]
    for intrinsic in ("STS12", "STSBenchmark"):
        x = [s[intrinsic] for s in both]
        rho = stats.spearmanr(x, [s["AmazonCounterfactualClassification"] for s in both]).statistic
        assert means[intrinsic] == pytest.approx(100 * rho, abs=0.051)


#: three models of three families, the few-model case (the comparison view, no correlation)
FEW = [MODELS[0], MODELS[3], MODELS[-1]]
#: benchmark (the page's score table) -> its tasks among TASKS
BENCHMARK_TASKS = {
    "EvalRank": ["EvalRankSent"],
    "EvalRank-WordSimilarity": ["WordSimMEN"],
    "EvalRank-Downstream-SentEval": ["SentEvalCR", "SentEvalMR"],
    "EvalRank-Study": ["STSBenchmark"],
}


@pytest.fixture(scope="module")
def few_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = copy_results(tmp_path_factory.mktemp("few"), FEW, TASKS)
    return write_report(folder, folder / "site", QUICK)


def model_meta(model: str) -> dict[str, Any]:
    (folder,) = (STUDY / model.replace("/", "__")).iterdir()
    return dict(json.loads((folder / "model_meta.json").read_text(encoding="utf-8")))


def test_a_three_model_page_compares_ranks_and_shows_no_correlation(few_page: Path) -> None:
    """Ranks by scipy's rankdata; the Borda rank as mteb's leaderboard (n − rank points per task,
    ties averaged, the sum ranked); no correlation figure, table or heat colour, one note why."""
    cells = parse(few_page)
    text = few_page.read_text(encoding="utf-8")
    scores = {t: np.array([main_score(m, t) for m in FEW]) for t in TASKS}
    ranks = {t: stats.rankdata(-x, method="min").astype(int) for t, x in scores.items()}
    points = sum(len(FEW) - stats.rankdata(-x) for x in scores.values())
    borda = stats.rankdata(-points, method="min").astype(int)
    short = [m.split("/")[-1] for m in FEW]
    summary = table_with(cells, "Borda rank")
    assert summary[0] == ["model", "Borda rank 5 tasks", *(f"{b} mean" for b in BENCHMARK_TASKS),
                          "dim embed_dim", "parameters n_parameters"]  # fmt: skip
    rows = {row[0]: row for row in summary[1:]}
    assert [row[0] for row in summary[1:]] == sorted(short, key=lambda s: borda[short.index(s)])
    for i, model in enumerate(FEW):
        meta = model_meta(model)
        means = [100 * np.mean([main_score(model, t) for t in ts]) for ts in BENCHMARK_TASKS.values()]
        assert rows[short[i]] == [
            short[i], str(borda[i]), *(f"{m:.1f}" for m in means),
            str(meta["embed_dim"]), f"{meta['n_parameters'] / 1e6:.1f}M",
        ]  # fmt: skip
    per_task = table_with(cells, "task")
    assert per_task[0] == ["task", *(f"{s} score (rank)" for s in short)]
    for task, *shown in per_task[1:]:
        expected = [f"{100 * x:.1f} ({r})" for x, r in zip(scores[task], ranks[task], strict=True)]
        assert [c.removesuffix(" ★") for c in shown] == expected
        assert [c.endswith("★") for c in shown] == [r == 1 for r in ranks[task]]
    assert "<svg" not in text and "background:#" not in text and 'id="correlation"' not in text
    assert not any(t[0][0] == "intrinsic" for t in cells.tables)
    assert text.count("no correlations: they need at least 8 models") == 1


def test_the_page_offers_its_scores_as_a_csv_link(few_page: Path) -> None:
    import urllib.parse

    import pandas as pd

    (href,) = re.findall(r'<a download="scores.csv" href="([^"]+)"', few_page.read_text(encoding="utf-8"))
    prefix = "data:text/csv;charset=utf-8,"
    assert href.startswith(prefix)
    frame = pd.read_csv(io.StringIO(urllib.parse.unquote(href.removeprefix(prefix))), index_col="model")
    assert sorted(frame.index) == sorted(FEW) and sorted(frame.columns) == sorted(TASKS)
    for model in FEW:
        for task in TASKS:
            assert frame.at[model, task] == pytest.approx(main_score(model, task), abs=1e-12)


#: 8 models with sequence-labelling results and 2 without (every one has the SentEval tasks)
TAGGED = ["evalrank/glove.6B.50d", "evalrank/glove.6B.50d-abtt", "evalrank/neuralcoref-static-50d",
          "evalrank/neuralcoref-tuned-50d", "evalrank/spacy-en-core-web-md-300d", "evalrank/ldt-sample-25d",
          "evalrank/all-mpnet-base-v2", "evalrank/paraphrase-MiniLM-L3-v2"]  # fmt: skip
UNTAGGED = ["evalrank/all-mpnet-base-v2-abtt", "evalrank/bge-small-en-v1.5-int8-abtt"]
PROTOCOL_TASKS = {
    "senteval": ("SentEvalCR", "SentEvalMR"),
    "sequence-labelling": ("CoNLL2000Chunking", "EWTPOSTagging"),
}


def test_each_downstream_protocol_has_its_own_mean_rho_table_over_its_models(tmp_path: Path) -> None:
    """The SentEval tasks over all 10 models, the sequence-labelling tasks over the 8 that ran them:
    each table's mean ρ is the mean of scipy's ρ over that protocol's tasks and models."""
    intrinsic = ("EvalRankWord", "WordSimSimLex999")
    folder = copy_results(tmp_path, TAGGED + UNTAGGED, intrinsic + sum(PROTOCOL_TASKS.values(), ()))
    page = write_report(folder, tmp_path / "site", QUICK)
    tables = [t for t in parse(page).tables if t[0][0] == "intrinsic" and t[0][1] == "mean ρ ×100"]
    assert len(tables) == 2
    text = page.read_text(encoding="utf-8")
    assert '<h3 id="protocol-0">senteval: 2 tasks, 10 models</h3>' in text
    assert '<h3 id="protocol-1">sequence-labelling: 2 tasks, 8 models</h3>' in text
    for table, (downstream, models) in zip(
        tables,
        [(PROTOCOL_TASKS["senteval"], TAGGED + UNTAGGED), (PROTOCOL_TASKS["sequence-labelling"], TAGGED)],
        strict=True,
    ):
        shown = {row[0]: row for row in table[1:]}
        assert set(shown) == set(intrinsic)
        for task in intrinsic:
            x = [main_score(m, task) for m in models]
            rho = np.mean(
                [stats.spearmanr(x, [main_score(m, d) for m in models]).statistic for d in downstream]
            )
            assert float(shown[task][1]) == pytest.approx(100 * rho, abs=0.051)
            assert shown[task][3] == str(len(models))


@second_process
def test_the_page_is_replaced_whole(tmp_path: Path) -> None:
    folder = copy_results(tmp_path, MODELS[:1], ("EvalRankSent",))
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("an older page")
    write_report(folder, site, QUICK)
    assert (site / "index.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in site.iterdir()] == ["index.html"]  # no temporary file left


# ----------------------------------------------------------------------------- in a browser
@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.fail(f"{CHROMIUM} or {CHROMEDRIVER} missing: run bash scripts/install_browser.sh")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tmp_path_factory.mktemp("chromium")
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     f"--user-data-dir={profile}", "--window-size=1400,1000"):  # fmt: skip
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def ink(png: bytes) -> float:
    """The share of pixels that are not the page's white background."""
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    return float((np.abs(pixels - 255).sum(axis=2) > 30).mean())


def open_page(driver: Any, page: Path) -> None:
    driver.get(page.resolve().as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0


def check_rendered(driver: Any, tmp_path: Path) -> None:
    """The first table and the heatmap are drawn (ink on their screenshots), the page too."""
    from selenium.webdriver.common.by import By

    driver.save_screenshot(str(tmp_path / "page.png"))
    assert ink((tmp_path / "page.png").read_bytes()) > 0.02
    table = driver.find_element(By.CSS_SELECTOR, "table.sortable")
    assert table.size["height"] > 50 and ink(table.screenshot_as_png) > 0.05
    heatmap = driver.find_element(By.CSS_SELECTOR, "#correlation figure svg")
    assert heatmap.size["width"] > 200 and ink(heatmap.screenshot_as_png) > 0.2


@pytest.mark.slow
def test_the_page_renders_in_chromium_and_a_click_sorts_the_rows(
    browser: Any, small_page: Path, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, small_page)
    check_rendered(browser, tmp_path)
    table = browser.find_element(By.CSS_SELECTOR, "table.sortable")
    header = next(th for th in table.find_elements(By.TAG_NAME, "th") if th.text.startswith("EvalRankSent"))
    scores = {m: main_score(m, "EvalRankSent") for m in MODELS}

    def first_column() -> list[str]:
        return [
            row.find_element(By.TAG_NAME, "td").text
            for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")
        ]

    assert first_column() == sorted(MODELS)  # the models in name order at first
    header.click()
    assert first_column() == sorted(MODELS, key=lambda m: -scores[m])  # highest first
    header.click()
    assert first_column() == sorted(MODELS, key=lambda m: scores[m])


#: per figure of scatter panels: its section's title and per panel its size, texts and points
_PANELS = """
return [...document.querySelectorAll('div.panels')].map((div) => [
  div.closest('details').querySelector('summary').textContent,
  [...div.querySelectorAll('svg')].map((svg) => ({
    width: svg.getBoundingClientRect().width,
    texts: [...svg.children].filter((e) => e.tagName === 'text').map((e) => e.textContent),
    points: [...svg.querySelectorAll('circle')].map((c) => [
      Number(c.getAttribute('cx')), Number(c.getAttribute('cy')), c.querySelector('title').textContent]),
  })),
]);
"""


def open_panels(driver: Any) -> list[Any]:
    """Open every section of the page as a reader would and read the scatter panels drawn in them."""
    driver.execute_script("document.querySelectorAll('details').forEach((d) => { d.open = true; });")
    return list(driver.execute_script(_PANELS))


@pytest.mark.slow
def test_every_scatter_panel_is_drawn_when_opened_at_the_models_scores(
    browser: Any, small_page: Path, tmp_path: Path
) -> None:
    """Only the open section's panels are drawn at load; opened, each intrinsic task has one panel per
    downstream task titled with it and its ρ, one point per model whose tooltip gives the model and its
    two scores read here from the result files, placed in their order (x right, y up), visible."""
    from selenium.webdriver.common.by import By

    open_page(browser, small_page)
    assert browser.execute_script("return document.querySelectorAll('div.panels svg').length") == len(
        DOWNSTREAM
    )
    figures = open_panels(browser)
    assert [title for title, _ in figures] == list(INTRINSIC)
    for intrinsic, panels in figures:
        assert [panel["texts"][0] for panel in panels] == list(DOWNSTREAM)
        for downstream, panel in zip(DOWNSTREAM, panels, strict=True):
            assert panel["texts"][1].endswith(f", n = {len(MODELS)}") and 150 < panel["width"] <= 240
            cx, cy, tips = zip(*panel["points"], strict=True)
            parsed = [re.fullmatch(r"(\S+) \((\S+)\): ([\d.]+), ([\d.]+)", tip) for tip in tips]
            assert sorted(m.group(1) for m in parsed) == sorted(MODELS)
            x = [100 * main_score(m.group(1), intrinsic) for m in parsed]
            y = [100 * main_score(m.group(1), downstream) for m in parsed]
            assert [float(m.group(3)) for m in parsed] == pytest.approx(x, abs=0.006)
            assert [float(m.group(4)) for m in parsed] == pytest.approx(y, abs=0.006)
            assert stats.spearmanr(cx, x).statistic == pytest.approx(1)  # right: higher intrinsic score
            assert stats.spearmanr(cy, y).statistic == pytest.approx(-1)  # up: higher downstream score
    panel = browser.find_elements(By.CSS_SELECTOR, "div.panels svg")[-1]
    browser.execute_script(_INTO_VIEW, panel)
    assert ink(panel.screenshot_as_png) > 0.05
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.fixture(scope="module")
def study_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The issue's command on the committed study, in a second process: the page of all its models."""
    site = tmp_path_factory.mktemp("study-site")
    run = subprocess.run(
        [sys.executable, "-m", "mteb_evalrank.cli", "report", str(STUDY), "--out", str(site)],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return site / "index.html"


@pytest.mark.slow
def test_the_study_page_names_all_its_models_and_renders_in_chromium(
    browser: Any, study_page: Path, tmp_path: Path
) -> None:
    """Every model on the page, tables and figures drawn."""
    models = {p.name.replace("__", "/") for p in STUDY.iterdir()}
    table = table_with(parse(study_page), "EvalRankSent")
    assert sorted(row[0] for row in table[1:]) == sorted(models)
    open_page(browser, study_page)
    check_rendered(browser, tmp_path)
    figures = open_panels(browser)  # every intrinsic row's panels, one point per model having both scores
    # one pairs table per downstream protocol (SentEval's ten tasks, the three taggers)
    protocols = [t for t in parse(study_page).tables if any(c.startswith("downstream") for c in t[0])]
    pairs = [row for table in protocols for row in table[1:]]
    assert len(protocols) == 2 and len(figures) == 2 * len({row[0] for row in pairs}) == 2 * 27
    drawn = {
        (title, panel["texts"][0]): (panel["texts"][1], len(panel["points"]))
        for title, p in figures
        for panel in p
    }
    for intrinsic, downstream, _, _, n, *_ in pairs:
        rho, points = drawn[intrinsic, downstream.replace("Classification", "")]
        assert rho.endswith(f"n = {n}") and points == int(n)


#: per table: the first numeric header's cell index and that column's values (data-v; null: empty)
_NUMERIC_COLUMN = """
const [table] = arguments;
const th = [...table.tHead.rows[0].cells].find((h) => h.classList.contains("num"));
if (!th) return null;
const values = [...table.tBodies[0].rows].map((r) => r.cells[th.cellIndex].dataset.v);
return [th.cellIndex, values.map((v) => (v === undefined ? null : Number(v)))];
"""

_INTO_VIEW = "arguments[0].scrollIntoView({block: 'center', inline: 'center'});"
#: the first table's first row: the name cell, the first score cell and the table's scroll box
_FIRST_ROW = """
const table = document.querySelector('table.sortable'), r = table.tBodies[0].rows[0];
const first = [...table.tHead.rows[0].cells].findIndex((h) => h.classList.contains('num'));
return [r.cells[0], r.cells[first], table.closest('.scroll')].map((e) => e.getBoundingClientRect().toJSON());
"""


def sort_every_table(browser: Any, page: Path, width: int) -> tuple[int, int]:
    """In every table of the page (the closed ones opened as a reader would), a click on the first
    numeric header orders the rows by that column, highest first, empty cells last (the order
    computed here from the values read before the click); no console error; at 390 px the page
    does not scroll sideways and the first score is visible beside the model's name. Returns the
    numbers of tables and of tables sorted."""
    from selenium.webdriver.common.by import By

    browser.set_window_size(width, 1000)
    try:
        open_page(browser, page)
        browser.execute_script("document.querySelectorAll('details').forEach((d) => { d.open = true; });")
        if width < 500:
            viewport = browser.execute_script("return window.innerWidth")
            assert viewport <= 400
            assert browser.execute_script("return document.documentElement.scrollWidth") <= viewport
            name, score, box = browser.execute_script(_FIRST_ROW)
            assert name["right"] <= score["left"] + 1 and score["right"] <= box["right"]
        tables = browser.find_elements(By.CSS_SELECTOR, "table.sortable")
        sorted_tables = 0
        for table in tables:
            column = browser.execute_script(_NUMERIC_COLUMN, table)
            if column is None:
                continue
            index, before = column
            header = table.find_elements(By.CSS_SELECTOR, "thead th")[index]
            browser.execute_script(_INTO_VIEW, header)
            header.click()
            _, after = browser.execute_script(_NUMERIC_COLUMN, table)
            numbers = sorted((v for v in before if v is not None), reverse=True)
            assert after == numbers + [None] * (len(before) - len(numbers)), header.text
            sorted_tables += 1
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
        return len(tables), sorted_tables
    finally:
        browser.set_window_size(1400, 1000)


@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 390])
def test_a_click_on_a_numeric_header_sorts_every_table_of_the_study_page(
    browser: Any, study_page: Path, width: int
) -> None:
    """:func:`sort_every_table` on the study's page (every model of the committed study)."""
    tables, sorted_tables = sort_every_table(browser, study_page, width)
    assert tables >= 20 and sorted_tables >= 20


@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 390])
def test_every_table_of_a_three_model_page_sorts_and_fits_a_phone(
    browser: Any, few_page: Path, width: int
) -> None:
    """:func:`sort_every_table` on the comparison page: each of its 9 tables (the comparison's two,
    four score tables, coverage, provenance's two) sorts."""
    assert sort_every_table(browser, few_page, width) == (9, 9)


def mean_tables(page: Path) -> dict[str, dict[str, list[str]]]:
    """Per protocol (its part's title): intrinsic row -> its row of the mean-ρ table."""
    text = page.read_text(encoding="utf-8")
    protocols = re.findall(r'<h3 id="protocol-\d+">([\w-]+):', text)
    tables = [t for t in parse(page).tables if t[0][:2] == ["intrinsic", "mean ρ ×100"]]
    assert len(tables) == len(protocols)
    return {p: {row[0]: row for row in t[1:]} for p, t in zip(protocols, tables, strict=True)}


def expected_row(mean: float, low: float, high: float, n: int, families: int) -> list[str]:
    """A mean-ρ table row's cells after the name, from the numbers of ``correlate``."""
    return [f"{100 * mean:.1f}", f"[{100 * low:.1f}, {100 * high:.1f}]", str(n), str(families)]


def models_with(*tasks: str) -> int:
    """How many of the committed study's models have a result file of every one of ``tasks``."""
    return sum(all(any(model.glob(f"*/{task}.json")) for task in tasks) for model in STUDY.iterdir())


@pytest.mark.slow
def test_the_study_pages_protocol_tables_equal_correlate_and_count_all_its_models(study_page: Path) -> None:
    """Each protocol's mean-ρ table is ``correlate`` on the same folder with the protocol's tasks
    (``tasks_of_protocol``, as ``correlate --extrinsic-protocol``), the zoo's families; EvalRankSent's
    SentEval row counts every model with the ten SentEval results (68 when it was written; before: only
    the 24 that also ran the sequence-labelling tasks), its tagging row those with the three taggers'."""
    from mteb_evalrank.correlation import correlate, load_results
    from mteb_evalrank.correlation.table import tasks_of_protocol

    tables = mean_tables(study_page)
    assert list(tables) == ["senteval", "sequence-labelling"]
    loaded = load_results([STUDY.parent])
    for protocol, rows in tables.items():
        tasks = tasks_of_protocol(loaded, protocol)
        assert rows["EvalRankSent"][3] == str(models_with("EvalRankSent", *tasks))
        result = correlate(loaded, list(rows), tasks, n_permutations=100)
        assert len(result.row_means) == len(rows) == 27
        for r in result.row_means:
            assert rows[r.intrinsic][1:] == expected_row(r.mean, r.ci_low, r.ci_high, r.n, r.n_families)


def committed_rows(table: str) -> tuple[list[str], dict[str, list[str]]]:
    """A committed study table (docs/study/families/TABLE): its models and its row means' cells."""
    folder = REPO / "docs" / "study" / "families" / table
    data = json.loads((folder / "correlations.json").read_text(encoding="utf-8"))
    models = (folder / "scores.csv").read_text(encoding="utf-8").splitlines()[1:]
    rows = {
        r["intrinsic"].removesuffix(":default"): expected_row(
            r["mean"], r["ci_low"], r["ci_high"], r["n"], r["n_families"]
        )
        for r in data["row_means"]
    }
    return [line.split(",")[0] for line in models], rows


@pytest.mark.slow
@pytest.mark.parametrize(
    ("population", "families", "tables"),
    [
        ("word", None, {"senteval": "word"}),  # the 56 sentence encoders, the zoo's families
        ("word-all", "trainings.csv", {"senteval": "word-all", "sequence-labelling": "word-all-seq"}),
    ],
)
def test_the_report_restricted_to_a_study_population_gives_its_committed_tables(
    tmp_path: Path, population: str, families: str | None, tables: dict[str, str]
) -> None:
    """``report --models`` (and ``--families``) as scripts/study.sh makes the population's tables:
    each protocol's mean-ρ table holds the committed table's row means, CIs, models and families
    for every row both have (the word-level rows)."""
    models, _ = committed_rows(population)
    options = ["--families", str(REPO / "docs" / "study" / "families" / families)] if families else []
    command = [sys.executable, "-m", "mteb_evalrank.cli", "report", str(STUDY), "--out", str(tmp_path),
               "--models", *models, *options]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    assert run.returncode == 0, run.stderr
    shown = mean_tables(tmp_path / "index.html")
    assert set(tables) <= set(shown)
    for protocol, table in tables.items():
        _, committed = committed_rows(table)
        common = sorted(set(committed) & set(shown[protocol]))
        assert len(common) == 15  # 13 word-similarity sets, EvalRankWord and EvalRankWordNoWiki
        assert {row: shown[protocol][row][1:] for row in common} == {row: committed[row] for row in common}
