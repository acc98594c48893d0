"""A progress bar over the jobs of a study (rich), with done / skipped / failed counts."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

from .chain_execution import JobOutcome

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class StudyProgress:
    """``with StudyProgress(total) as bar: bar.update(outcome)``; prints failures as they come."""

    def __init__(self, total: int, *, enabled: bool = True) -> None:
        self.total = total
        self.enabled = enabled
        self.counts = {"done": 0, "skipped": 0, "failed": 0}
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def _description(self) -> str:
        c = self.counts
        return f"study: {c['done']} done, {c['skipped']} skipped, {c['failed']} failed"

    def __enter__(self) -> StudyProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=sys.stderr),
            )
            self._progress.start()
            self._task = self._progress.add_task(self._description(), total=self.total)
        return self

    def update(self, outcome: JobOutcome) -> None:
        self.counts[outcome.status] = self.counts.get(outcome.status, 0) + 1
        if self._progress is None or self._task is None:  # both set together by __enter__
            return
        if outcome.status == "failed":
            first = (outcome.error or "").splitlines()[0] if outcome.error else ""
            self._progress.console.print(f"[red]failed[/red] {outcome.model} × {outcome.task}: {first}")
        self._progress.update(self._task, advance=1, description=self._description())

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
