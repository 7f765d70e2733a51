"""A run's SDC step: a registered method and its parameters, as every entry point writes it.

The CLI's ``--sdc local_suppression:k=3,importance=sex,age``, the run form, the API's ``"sdc": [{"method": ...,
"parameters": {...}}]`` and a release policy's stored spec all become :class:`SdcStep` values, checked against the
method's parameters once, here."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .base import METHODS, SdcMethod, get_method

# A run's steps are few (recode, suppress, perturb one or two variables); a policy or API call asking for thousands
# would multiply a run's cost by as many passes over the table, so their number is bounded on every path.
MAX_STEPS = 16

# "k=3,importance=sex,age,combs=3,2": a comma starts a new parameter only before "name="
_NEXT_PARAMETER = re.compile(r",(?=\s*[A-Za-z_][A-Za-z0-9_ ]*=)")


@dataclass(frozen=True)
class SdcStep:
    """One method applied to the published rows, with its parameters validated (defaults left out)."""

    method: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        method = get_method(self.method)
        known = {p.name: p for p in method.parameters}
        checked: dict[str, Any] = {}
        for name, value in dict(self.parameters).items():
            if name not in known:
                allowed = ", ".join(known) or "none"
                raise InputError(f"{method.label}: unknown parameter {name!r} (its parameters: {allowed})")
            if value is None or value == "":
                continue
            try:
                checked[name] = known[name].validate(value)
            except InputError as error:
                raise InputError(f"{method.label}: {error}") from None
        object.__setattr__(self, "parameters", checked)

    @property
    def info(self) -> SdcMethod:
        return get_method(self.method)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "parameters": dict(self.parameters)}

    def describe(self) -> str:
        shown = ",".join(f"{k}={v}" for k, v in self.parameters.items())
        return f"{self.method}:{shown}" if shown else self.method


def parse_step(text: str) -> SdcStep:
    """``method`` or ``method:name=value,name=value`` (a value may hold commas: "importance=sex,age")."""
    method, _, rest = text.strip().partition(":")
    method = method.strip()
    if method not in METHODS:
        raise InputError(f"unknown SDC method {method!r}; choose one of {', '.join(sorted(METHODS))}")
    parameters: dict[str, Any] = {}
    if rest.strip():
        for part in _NEXT_PARAMETER.split(rest):
            name, eq, value = part.partition("=")
            if not eq or not name.strip():
                raise InputError(f"{text!r}: give parameters as name=value separated by commas")
            parameters[name.strip()] = value.strip()
    return SdcStep(method, parameters)


def step_from_json(value: object) -> SdcStep:
    """``{"method": "...", "parameters": {...}}`` (the API's and a stored spec's form) or the CLI's text."""
    if isinstance(value, str):
        return parse_step(value)
    if not isinstance(value, Mapping) or "method" not in value:
        raise InputError('each SDC step is {"method": name, "parameters": {name: value}}')
    parameters = value.get("parameters") or {}
    if not isinstance(parameters, Mapping):
        raise InputError(f"SDC step {value['method']!r}: parameters must be an object of name: value")
    return SdcStep(str(value["method"]), dict(parameters))


def steps_from_json(values: object) -> tuple[SdcStep, ...]:
    if values is None or values == "":
        return ()
    if not isinstance(values, (list, tuple)):
        raise InputError("sdc must be a list of steps")
    check_step_count(len(values))
    return tuple(step_from_json(v) for v in values)


def check_step_count(count: int) -> None:
    if count > MAX_STEPS:
        raise InputError(f"{count} SDC steps: a run takes at most {MAX_STEPS}")
