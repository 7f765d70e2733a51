"""manage.py anonymize: statistical disclosure control methods after the recoding (engine/run/sdc.py).

- ``--sdc METHOD[:NAME=VALUE,...]`` (repeatable, applied in the order given): a registered method
  (engine.sdc.METHODS: local_suppression, microaggregation, pram, noise, ...) with its parameters, e.g.
  ``--sdc local_suppression:k=3,importance=sex,age`` then ``--sdc pram:variables=roof``. A value may hold
  commas; a new parameter starts at ``,NAME=``.
- ``--sdc-seed N``: the seed of the random methods (PRAM, noise, rank swapping), reported with the run.

The quasi-identifiers (--qi) are the methods' key variables. With --sdc and no --k the recoding's own k is 1: the
SDC steps carry their k (sdcMicro's way: recode with --algorithm full-domain --levels ..., then suppress the
remaining cells). The gate recounts every recoding step's guarantee from the rows written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.sdc import METHODS
from anonymizer_app.engine.sdc.steps import SdcStep, check_step_count, parse_step


def methods_help() -> str:
    """Every registered method and its parameters, from the registry."""
    return "; ".join(f"{m.name} ({', '.join(p.name for p in m.parameters) or 'no parameters'})"
                     for m in METHODS.values())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("statistical disclosure control methods (sdcMicro's), after the recoding")
    group.add_argument("--sdc", action="append", default=[], metavar="METHOD[:NAME=VALUE,...]",
                       help="apply a method to the published rows, in the order given (repeatable): "
                            + methods_help())
    group.add_argument("--sdc-seed", type=int, default=None, metavar="N",
                       help="the seed of the random SDC methods (default 0)")


def steps(opts: dict, error: Callable[[str], Exception]) -> tuple[SdcStep, ...]:
    """The --sdc flags as steps; a bad one is refused naming the flag and its value."""
    parsed = []
    try:
        check_step_count(len(opts.get("sdc") or []))
    except InputError as exc:
        raise error(f"--sdc: {exc}") from None
    for text in opts.get("sdc") or []:
        try:
            parsed.append(parse_step(text))
        except InputError as exc:
            raise error(f"--sdc {text}: {exc}") from None
    return tuple(parsed)


def summary(report: dict) -> str:
    """Each step in one clause, as the result page's cards say it."""
    section = report.get("sdc")
    if not section:
        return ""
    parts = []
    for step in section["steps"]:
        changed = sum(int(v) for v in step["changed_cells"].values())
        check = step.get("check")
        said = (f"{step['guarantee']} rechecked on the published rows" if check else "no k guarantee")
        # the catalogue's figures in its words (engine.measure.figure_catalogue), as the result card shows them
        figures = "".join(f", {row['label']} {row['text']}" for row in step.get("figure_rows", []))
        parts.append(f"{step['label']}: {changed:,} cells changed{figures}, {said}")
    return "; SDC: " + "; ".join(parts)
