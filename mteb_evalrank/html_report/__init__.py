"""``mteb-evalrank report``: a results folder as one self-contained HTML page (:mod:`.page`)."""

from .page import build_page, render, write_report

__all__ = ["build_page", "render", "write_report"]
