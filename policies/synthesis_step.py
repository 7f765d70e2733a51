"""A policy's synthesis step (docs/policies.md, "synthesis"): the method of the synthesizers' registry
(engine/synthesis), ε and δ (a DP method's), the columns drawn, each numeric column's discretization (its
policy hierarchy's groups, or public bounds and a number of bins), the share held out and the seed, and the
method's own options. Checked here without a database, as the CLI reads a policy file; applied to a dataset by
policies/services.py through services/synthesis.create_synthesis_job, which charges the dataset's ε ledger.

    "synthesis": {"method": "mst", "epsilon": 1.0, "delta": 1e-9, "columns": ["age", "sex", "disease"],
                  "bounds": {"age": [0, 100, 20]}, "holdout": 0.2, "seed": 0, "options": {"iterations": 1000}}
"""

from __future__ import annotations

import math

from anonymizer_app.engine import InputError, Role
from anonymizer_app.engine.synthesis import SYNTHESIZERS, NumericBins

FIELDS = ("method", "epsilon", "delta", "columns", "bounds", "holdout", "seed", "options")
NUMERIC_TYPES = ("integer", "decimal")
DEFAULT_DELTA = 1e-9  # services.synthesis.DEFAULT_DELTA
DEFAULT_HOLDOUT = 0.2  # services.synthesis.DEFAULT_HOLDOUT
DEFAULT_BINS = 20
# a policy's step never draws these: they are left out of every synthetic set
LEFT_OUT_ROLES = (Role.IDENTIFYING.value, Role.PERSON.value)


class StepError(InputError):
    """A bad field of the step: ``path`` (synthesis.epsilon, synthesis.bounds.age) and what is wrong."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path, self.message = path, message


def _number(value, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StepError(path, f"expected a number, got {value!r}")
    try:
        number = float(value)  # a JSON integer of hundreds of digits holds no float: OverflowError
    except OverflowError:
        raise StepError(path, f"expected a finite number, got a whole number of {len(str(abs(value)))} digits") from None
    if not math.isfinite(number):
        raise StepError(path, f"expected a finite number, got {value!r}")
    return number


def validate(step, columns: list[dict]) -> dict:
    """The step in its normal form (every field present, in FIELDS' order); StepError naming the field."""
    if not isinstance(step, dict):
        raise StepError("synthesis", f"expected an object, got {step!r}")
    unknown = sorted(set(step) - set(FIELDS))
    if unknown:
        raise StepError(f"synthesis.{unknown[0]}", f"unknown field; the fields are: {', '.join(FIELDS)}")
    method = step.get("method")
    if not isinstance(method, str) or method not in SYNTHESIZERS:
        raise StepError("synthesis.method", f"unknown method {method!r}; available: {', '.join(sorted(SYNTHESIZERS))}")
    synthesizer = SYNTHESIZERS[method]
    by_name = {c["name"]: c for c in columns}
    allowed = [c["name"] for c in columns if c["role"] not in LEFT_OUT_ROLES]
    chosen = step.get("columns", allowed)
    if not isinstance(chosen, list) or not chosen or not all(isinstance(c, str) for c in chosen):
        raise StepError("synthesis.columns", f"expected a non-empty list of column names, got {chosen!r}")
    for i, name in enumerate(chosen):
        if name not in by_name:
            raise StepError(f"synthesis.columns[{i}]", f"{name!r} is not one of the policy's columns")
        if name not in allowed:
            raise StepError(f"synthesis.columns[{i}]", f"{name!r} is {by_name[name]['role']}: identifiers are never "
                                                       f"synthesized (they are left out of the set)")
        if name in chosen[:i]:
            raise StepError(f"synthesis.columns[{i}]", f"{name!r} is given twice")
    epsilon = _number(step.get("epsilon", 1.0), "synthesis.epsilon")
    delta = _number(step.get("delta", DEFAULT_DELTA), "synthesis.delta")
    if synthesizer.dp and not epsilon > 0:
        raise StepError("synthesis.epsilon", f"must be above 0, got {epsilon:g}")
    if synthesizer.dp and not 0 < delta < 1:
        raise StepError("synthesis.delta", f"must be above 0 and below 1, got {delta:g}")
    holdout = _number(step.get("holdout", DEFAULT_HOLDOUT), "synthesis.holdout")
    if not 0 <= holdout < 1:
        raise StepError("synthesis.holdout", f"the share of rows held out must be at least 0 and below 1, got {holdout:g}")
    seed = step.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise StepError("synthesis.seed", f"expected a whole number from 0 to {2**32 - 1}, got {seed!r}")
    bounds = _bounds(step.get("bounds", {}), chosen, by_name)
    for name in chosen:  # a DP method's domain is public: a numeric column's bins never come from the data
        c = by_name[name]
        if synthesizer.dp and c["type"] in NUMERIC_TYPES and not c.get("hierarchy") and name not in bounds:
            raise StepError("synthesis.bounds", f"the numeric column {name!r} needs a hierarchy (in columns) or "
                                                f"bounds [lower, upper, bins] chosen without looking at the data")
    options = step.get("options", {})
    if not isinstance(options, dict):
        raise StepError("synthesis.options", f"expected an object, got {options!r}")
    known = {p.name: p for p in synthesizer.parameters}
    checked = {}
    for name, value in options.items():
        if name not in known:
            raise StepError(f"synthesis.options.{name}", f"{synthesizer.label} has no such option; its options: "
                                                         f"{', '.join(known) or 'none'}")
        try:
            checked[name] = known[name].validate(value)
        except InputError as exc:
            raise StepError(f"synthesis.options.{name}", str(exc)) from None
    return {"method": method, "epsilon": epsilon, "delta": delta, "columns": list(chosen), "bounds": bounds,
            "holdout": holdout, "seed": seed, "options": checked}


def _bounds(bounds, chosen: list[str], by_name: dict[str, dict]) -> dict[str, list]:
    if not isinstance(bounds, dict):
        raise StepError("synthesis.bounds", f"expected an object {{column: [lower, upper, bins]}}, got {bounds!r}")
    out: dict[str, list] = {}
    for name, given in bounds.items():
        path = f"synthesis.bounds.{name}"
        if name not in chosen or by_name[name]["type"] not in NUMERIC_TYPES:
            raise StepError(path, f"{name!r} is not a synthesized numeric column")
        if not isinstance(given, list) or len(given) not in (2, 3):
            raise StepError(path, f"expected [lower, upper] or [lower, upper, bins], got {given!r}")
        lower, upper = _number(given[0], f"{path}[0]"), _number(given[1], f"{path}[1]")
        count = given[2] if len(given) == 3 else DEFAULT_BINS
        if isinstance(count, bool) or not isinstance(count, int):
            raise StepError(f"{path}[2]", f"expected a whole number of bins, got {count!r}")
        try:
            NumericBins(lower, upper, count)
        except InputError as exc:
            raise StepError(path, str(exc)) from None
        out[name] = [lower, upper, count]
    return out


def spec_data(step: dict) -> dict:
    """The step as services.synthesis.build_spec reads form, API and policy values."""
    return {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v) for k, v in step.items()}


def from_spec(spec: dict) -> dict:
    """A synthesis job's recorded spec (Job.options["synthesis"]) as a policy's step."""
    return {"method": spec["method"], "epsilon": float(spec["epsilon"]), "delta": float(spec["delta"]),
            "columns": list(spec["columns"]), "bounds": {c: list(b) for c, b in (spec.get("bounds") or {}).items()},
            "holdout": float(spec.get("holdout", 0.0)), "seed": int(spec.get("seed", 0)),
            "options": dict(spec.get("options") or {})}


def describe(step: dict) -> str:
    """The step in words, for the policy pages."""
    synthesizer = SYNTHESIZERS.get(step["method"])
    label = synthesizer.label if synthesizer else step["method"]
    if synthesizer is not None and synthesizer.dp:
        guarantee = f"({step['epsilon']:g}, {step['delta']:g})-differential privacy, ε spent from the dataset's ledger"
    else:
        guarantee = "no formal privacy guarantee"
    bins = "; ".join(f"{c} in {int(b[2])} bins over [{b[0]:g}, {b[1]:g}]" for c, b in step["bounds"].items())
    return (f"{label} ({guarantee}) of {', '.join(step['columns'])}; {step['holdout'] * 100:g}% held out, seed "
            f"{step['seed']}" + (f"; {bins}" if bins else ""))
