"""The command-line flags of the privacy models beside --k, generated from the registry.

Nothing here names a model: every flag comes from the classes of ``engine.privacy.PRIVACY_MODELS``
(see ``engine/privacy/base.py``), grouped by ``model_groups()``. Per group (a model's ``group``):

- one flag per parameter, ``Parameter.flag`` (``--l``, ``--c``, ``--t-distance``, ``--delta-min``);
  a parameter with choices gets ``choices`` and its default, any other takes a string (default None)
  that the model's own ``Parameter.validate`` checks, so the messages are the engine's
  ("l must be an integer, got 'x'");
- a group of several models gets ``--<group>-variant`` choosing among their ``variant_name`` (the first
  is the default): ``--l-variant distinct|entropy|recursive``;
- the flags of the group's ``enabled_by`` parameters switch the model on; the other parameters left
  out take their defaults; a parameter given without its model (or for a variant that does not take
  it) is refused: "--c applies to --l with --l-variant recursive".

``column_source`` says which column a model gets: "sensitive" the --model-column or the command's
first sensitive column, "research" the research-subset marker column the command passes in (its
--population / --research-column are data options, not model flags), None no column.
"""

from __future__ import annotations

import argparse

from anonymizer_app.engine.privacy import ModelGroup, Parameter, PrivacyModel, make_model, model_groups
from anonymizer_app.management.base import UserError

MODEL_COLUMN = "--model-column"
TITLE = "privacy models beside --k (on the first --sensitive column, or --model-column)"


class ModelFlagError(UserError):
    """A bad combination of model flags (one line, exit status 2)."""


def dest(flag: str) -> str:
    """The argparse destination of a flag (argparse's own rule: --t-distance -> t_distance)."""
    return flag[2:].replace("-", "_")


def variant_flag(group: ModelGroup) -> str:
    return f"--{group.key}-variant"


def switches(group: ModelGroup, joiner: str = " or ") -> str:
    """The flags that switch the group's model on: '--l', '--delta-min and/or --delta-max'."""
    return joiner.join(p.flag for p in group.parameters if p.name in group.enabled_by)


def _or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _range(p: Parameter) -> str:
    if p.minimum is not None and p.maximum is not None:
        return f"{p.minimum:g}..{p.maximum:g}"
    if p.minimum is not None:
        return f"at least {p.minimum:g}"
    return f"at most {p.maximum:g}" if p.maximum is not None else ""


def _help(group: ModelGroup, p: Parameter) -> str:
    takers = group.takers(p.name)
    shared = group.has_variants and len(takers) > 1
    text = f"{p.name} of {group.label}" if shared else p.help
    notes = []
    if group.has_variants and len(takers) < len(group.models):
        notes.append(f"{variant_flag(group)} {'/'.join(takers)}")
    if p.choices is None and _range(p):
        notes.append(_range(p))
    if p.name in group.enabled_by:
        notes.append(f"switches {group.label} on")
    else:
        notes.append(f"default: {p.default:g}" if isinstance(p.default, float) else f"default: {p.default}")
    return f"{text} ({'; '.join(notes)})".replace("%", "%%")


def flag_names() -> tuple[str, ...]:
    """Every flag ``add_model_arguments`` adds, for the registry as it is now."""
    flags: list[str] = []
    for group in model_groups():
        if group.has_variants:
            flags.append(variant_flag(group))
        flags += [p.flag for p in group.parameters]
    return (*flags, MODEL_COLUMN)


def add_model_arguments(parser: argparse.ArgumentParser, title: str = TITLE):
    """Add the model flags to ``parser`` (in an argument group, returned for the command's own options)."""
    group_args = parser.add_argument_group(title)
    seen: dict[str, str] = {}
    for group in model_groups():
        flags = [p.flag for p in group.parameters] + ([variant_flag(group)] if group.has_variants else [])
        for flag in flags:
            if flag in seen:
                raise TypeError(f"the flag {flag} is declared by the model groups {seen[flag]!r} and {group.key!r}")
            seen[flag] = group.key
        params = sorted(group.parameters, key=lambda p: p.name not in group.enabled_by)  # switches first
        for i, p in enumerate(params):
            if p.choices is not None:
                group_args.add_argument(p.flag, dest=dest(p.flag), choices=p.choices, default=p.default,
                                        help=_help(group, p))
            else:
                group_args.add_argument(p.flag, dest=dest(p.flag), default=None,
                                        metavar=dest(p.flag).upper(), help=_help(group, p))
            if i == 0 and group.has_variants:
                names = list(group.variants)
                group_args.add_argument(
                    variant_flag(group), dest=dest(variant_flag(group)), choices=tuple(names), default=names[0],
                    help=f"which {group.label}: {_or(names)} (default: {names[0]})")
    sensitive = [switches(g) for g in model_groups() if g.column_source == "sensitive"]
    group_args.add_argument(MODEL_COLUMN, dest=dest(MODEL_COLUMN), default=None, metavar="COL",
                            help=f"the column {_or(sensitive)} apply to (default: the first --sensitive)")
    return group_args


def _given(opts: dict, p: Parameter):
    return opts.get(dest(p.flag)) if p.choices is None else None


def requested(opts: dict) -> list[tuple[ModelGroup, type[PrivacyModel]]]:
    """The (group, model class) of every group whose switching flags were given."""
    out = []
    for group in model_groups():
        if any(_given(opts, p) is not None for p in group.parameters if p.name in group.enabled_by):
            out.append((group, group.model_for(opts.get(dest(variant_flag(group))))))
    return out


def models_from_options(opts: dict, sensitive_default: str | None,
                        research_column: str | None = None) -> list[PrivacyModel]:
    """The privacy models the flags in ``opts`` (parsed options) ask for, validated by the engine.

    ``sensitive_default``: the column of "sensitive" models when --model-column is not given;
    ``research_column``: the column of "research" models (δ-presence's marker)."""
    column = opts.get(dest(MODEL_COLUMN)) or sensitive_default
    chosen = dict((g.key, cls) for g, cls in requested(opts))
    models: list[PrivacyModel] = []
    for group in model_groups():
        cls = chosen.get(group.key)
        own = {p.name for p in cls.parameters} if cls is not None else set()
        for p in group.parameters:
            if p.name in group.enabled_by or _given(opts, p) is None or p.name in own:
                continue
            takers = group.takers(p.name)
            which = (f" with {variant_flag(group)} {'/'.join(takers)}"
                     if group.has_variants and len(takers) < len(group.models) else "")
            raise ModelFlagError(f"{p.flag} applies to {switches(group)}{which}")
        if cls is None:
            continue
        flags = {p.name: p.flag for p in group.parameters}
        params = {}
        for p in cls.parameters:
            value = opts.get(dest(flags[p.name]))
            params[p.name] = p.default if value is None else value
        if cls.column_source == "sensitive":
            if column is None:
                flag = next(p.flag for p in group.parameters if p.name in group.enabled_by
                            and _given(opts, p) is not None)
                raise ModelFlagError(f"{flag} needs a sensitive column: give --sensitive COL "
                                     f"(or {MODEL_COLUMN} COL)")
            params["column"] = column
        elif cls.column_source == "research":
            params["column"] = research_column
        models.append(make_model(cls.name, **params))
    if opts.get(dest(MODEL_COLUMN)) is not None and not any(m.column_source == "sensitive" for m in models):
        sensitive = [switches(g) for g in model_groups() if g.column_source == "sensitive"]
        raise ModelFlagError(f"{MODEL_COLUMN} applies to {_or(sensitive)}")
    return models
