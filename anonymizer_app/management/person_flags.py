"""manage.py anonymize and risk: person-level privacy (docs/definitions.md, "The unit counted: the person").

- ``--person-id COL``: COL holds the person each record belongs to (a patient id repeated across a patient's
  tests, a panel member's id across waves). COL takes the role "person id": it is removed from OUT like an
  identifier, and every privacy model counts persons, not records (k=5: five different persons in every class;
  a person's records are suppressed together, the suppression limit is a share of the persons).
- ``--person-adversary class|all-records``: what the adversary knows of a person (engine/model/persons.py):
  one record (each class holds k persons; the default) or all of a person's records.

A person-level run is an in-memory run: the out-of-core and cluster backends count records, so they are not used
(an algorithm that cannot count persons is refused by the engine, naming those that can).
"""

from __future__ import annotations

import argparse

from anonymizer_app.engine.model.persons import ADVERSARIES

DEFAULT_ADVERSARY = "class"


def add_arguments(parser: argparse.ArgumentParser, adversary: bool = True) -> None:
    """The person flags; ``adversary``: also --person-adversary (the risk command has no run, so no adversary)."""
    group = parser.add_argument_group("persons (one person, several records: every privacy model counts persons)")
    group.add_argument("--person-id", default=None, metavar="COL",
                       help="COL identifies the person of each record (a patient id repeated across tests): it is "
                            "removed from the output, and k, l, t, β and the suppression limit count persons")
    if adversary:
        group.add_argument("--person-adversary", choices=tuple(ADVERSARIES), default=None,
                           help="with --person-id, what the adversary knows of a person: "
                                + "; ".join(f"{key}: {text}" for key, text in ADVERSARIES.items())
                                + f" (default {DEFAULT_ADVERSARY})")


def person_column(opts: dict) -> list[str]:
    """--person-id as a list of columns (none or one), for the role loop of the command."""
    return [opts["person_id"]] if opts.get("person_id") else []


def adversary(opts: dict, error) -> str:
    """The adversary of the run; --person-adversary without --person-id is refused, not ignored."""
    chosen = opts.get("person_adversary")
    if chosen is not None and not opts.get("person_id"):
        raise error("--person-adversary applies with --person-id COL (the column of each record's person)")
    return chosen or DEFAULT_ADVERSARY


def refuse(opts: dict, error, where: str) -> None:
    """--person-id and --person-adversary refused where persons are not counted (``where``: e.g. --transactions)."""
    for flag in ("person_id", "person_adversary"):
        if opts.get(flag):
            raise error(f"--{flag.replace('_', '-')} does not apply to {where}")


def summary(report: dict) -> str:
    """The summary's note on persons (the report's ``persons`` section, when the run counted them)."""
    persons = report.get("persons")
    if not isinstance(persons, dict) or "persons" not in persons:
        return ""
    smallest = persons.get("min_class_persons")
    return (f"; persons counted by {persons.get('column')} ({persons.get('adversary')} adversary): "
            f"{persons['persons']:,} persons, {persons.get('suppressed', 0):,} suppressed with all their records"
            + (f", smallest class {smallest:,} persons" if isinstance(smallest, int) else ""))
