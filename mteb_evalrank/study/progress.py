"""A progress bar over the jobs of a study (rich), with done / skipped / failed counts."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .chain_execution import JobOutcome


@contextmanager
def study_progress(total: int, *, enabled: bool = True) -> Iterator[Callable[[JobOutcome], None]]:
    """``with study_progress(total) as update: update(outcome)``: a bar on stderr (none unless
    ``enabled``) that also prints failures as they come."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    counts = {"done": 0, "skipped": 0, "failed": 0}

    def description() -> str:
        return f"study: {counts['done']} done, {counts['skipped']} skipped, {counts['failed']} failed"

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=sys.stderr), disable=not enabled) as progress:
        task = progress.add_task(description(), total=total)

        def update(outcome: JobOutcome) -> None:
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
            if enabled and outcome.status == "failed":
                first = (outcome.error or "").splitlines()[0] if outcome.error else ""
                progress.console.print(f"[red]failed[/red] {outcome.model} × {outcome.task}: {first}")
            progress.update(task, advance=1, description=description())

        yield update
