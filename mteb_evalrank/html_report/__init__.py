"""``mteb-evalrank report``: a results folder as one self-contained HTML page (:mod:`.page`)."""

from .page import Options, build_page, render, write_report

__all__ = ["Options", "build_page", "render", "write_report"]
