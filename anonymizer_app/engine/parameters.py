"""A parameter of a privacy model, an algorithm or a hierarchy builder, as forms and CLI flags show it and
validate it. Below all three (privacy.base, algorithms, model.builders), which import it from here."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import InputError


@dataclass(frozen=True)
class Parameter:
    """A model or algorithm parameter as forms and CLI flags show it."""

    name: str
    kind: type
    default: object
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None  # for kind=str: the allowed values
    label: str | None = None  # the form label (default: the name, capitalized)
    cli_flag: str | None = None  # the CLI flag when it is not `--<name>` (t-closeness's --t-distance)
    above: float | None = None  # an exclusive lower bound (t, β, c: 0 makes the model ask the impossible)

    @property
    def flag(self) -> str:
        """The CLI flag: `--memory-mb` for the parameter `memory mb` or `memory_mb`."""
        return self.cli_flag or "--" + self.name.replace(" ", "-").replace("_", "-")

    @property
    def field_label(self) -> str:
        # a name without a label reads as words ("keep_lattice" -> "Keep lattice"), never as a key
        words = self.name.replace("_", " ")
        return self.label or words[:1].upper() + words[1:]

    def validate(self, value: object) -> Any:
        if self.choices is not None:
            if str(value) not in self.choices:
                raise InputError(f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}")
            return str(value)
        try:
            if self.kind is int and isinstance(value, float) and not value.is_integer():
                raise ValueError
            v = self.kind(value)
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{self.name} must be {'an integer' if self.kind is int else 'a number'}, "
                             f"got {value!r}") from None
        if self.minimum is not None and v < self.minimum:
            raise InputError(f"{self.name} must be at least {self.minimum:g}, got {v!r}")
        if self.maximum is not None and v > self.maximum:
            raise InputError(f"{self.name} must be at most {self.maximum:g}, got {v!r}")
        if self.above is not None and v <= self.above:
            raise InputError(f"{self.name} must be above {self.above:g}, got {v!r}")
        return v
