"""SDC steps of a web or API job: kept with the job's options under "sdc" (a list of {"method", "parameters"})
and "sdc_seed", checked when the job is made, and handed to the RunSpec (engine/run/sdc.py) when it runs. A
release policy stores the same list (policies/policy_file.py "sdc")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..engine import InputError, Role
from ..engine.run.spec import RunSpec
from ..engine.sdc.steps import SdcStep, steps_from_json

SDC_OPTIONS = ("sdc", "sdc_seed")


def seed_of(value: object) -> int:
    if value is None or value == "":
        return 0
    try:
        seed = int(str(value))
    except ValueError:
        raise InputError(f"SDC seed must be a whole number, got {value!r}") from None
    if not 0 <= seed < 2**32:
        raise InputError(f"SDC seed must be between 0 and {2**32 - 1}, got {seed}")
    return seed


def checked_options(dataset, options: Mapping[str, Any]) -> dict:
    """The job's options with its SDC steps validated (their parameters as the methods read them); a dataset with
    a person id is refused by name (the methods count records)."""
    out = dict(options)
    steps = steps_from_json(options.get("sdc"))
    if not steps:
        out.pop("sdc", None)
        out.pop("sdc_seed", None)
        return out
    columns = list(dataset.columns.all())
    person = next((c.name for c in columns if c.role == Role.PERSON.value), None)
    if person is not None:
        names = ", ".join(s.info.label for s in steps)
        raise InputError(f"SDC methods ({names}) count records, not persons: the person id {person!r} cannot run "
                         f"with them (give the column another role, or leave the SDC methods out)")
    for step in steps:
        check_columns(step, [c.name for c in columns], [c.name for c in columns if c.role == Role.QUASI_IDENTIFYING.value])
    out["sdc"] = [s.to_json() for s in steps]
    out["sdc_seed"] = seed_of(options.get("sdc_seed"))
    return out


# parameters that name columns: the variables a method changes, its strata, local suppression's importance order
COLUMN_PARAMETERS = ("variables", "strata")


def check_columns(step: SdcStep, columns: list[str], key_variables: list[str]) -> None:
    """A step's column names checked against the dataset when the job is made, not when it runs."""
    for name in (*COLUMN_PARAMETERS, "importance"):
        value = step.parameters.get(name)
        if not value:
            continue
        allowed = key_variables if name == "importance" else columns
        what = "quasi-identifier" if name == "importance" else "column"
        for item in (v.strip() for v in str(value).split(",")):
            if item and item not in allowed:
                raise InputError(f"{step.info.label}: {name}: {item!r} is not a {what} of this dataset "
                                 f"({', '.join(allowed)})")


def algorithm_options(options: Mapping[str, Any]) -> dict:
    """The options without the SDC keys (what the algorithm reads)."""
    return {k: v for k, v in options.items() if k not in SDC_OPTIONS}


def steps_of(options: Mapping[str, Any] | None) -> tuple[SdcStep, ...]:
    return steps_from_json((options or {}).get("sdc"))


def with_sdc(spec: RunSpec, options: Mapping[str, Any] | None) -> RunSpec:
    """The spec with the job's SDC steps and seed."""
    steps = steps_of(options)
    if not steps:
        return spec
    return replace(spec, sdc=steps, sdc_seed=seed_of((options or {}).get("sdc_seed")))
