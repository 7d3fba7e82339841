"""Pieces of the case studies' markdown reports."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["markdown_table", "machine_description"]


def markdown_table(frame: pd.DataFrame, float_format: str = "{:.3g}") -> str:
    """Render ``frame`` as a GitHub markdown table (index dropped, floats by ``float_format``)."""

    def cell(value) -> str:
        if isinstance(value, float | np.floating):
            return "" if np.isnan(value) else float_format.format(value)
        return str(value)

    header = "| " + " | ".join(str(column) for column in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(cell(value) for value in row) + " |" for row in frame.itertuples(False)
    ]
    return "\n".join([header, rule, *body])


def machine_description() -> str:
    """CPU model (when the OS says), logical cores, cores this process may use, and Python."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"{_cpu_model()}; {os.cpu_count()} logical cores ({usable} usable by this process); "
        f"Python {platform.python_version()} on {platform.system()}"
    )


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"
