"""`manage.py anonymize`: the columns that look like direct identifiers (engine/model/identifier_detection/),
named in the summary, and the run refused while one of high confidence would be published as it is.

A column the detection finds with high confidence (a name, a patient id, e-mails, ...) that the command
line leaves insensitive or names --sensitive is published as it is: the run is refused naming the column
and the reason, unless --identifier COL (removed), --person-id COL (removed, and every model counts persons),
--qi COL, or --allow-identifier COL (published as is, confirmed) says what to do with it. The detection looks
at every row of an in-memory run; a streamed run (out of core, a Dask cluster) is checked on its first block or
its first :data:`DETECTION_ROWS` rows (docs/definitions.md "Identifier detection" says what that can miss).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from anonymizer_app.engine import Role
from anonymizer_app.engine.model import identifier_detection as idd

DETECTION_ROWS = 200_000  # the rows a Dask cluster run is checked on (its table is not loaded in memory)


def add_arguments(parser) -> None:
    parser.add_argument("--allow-identifier", action="append", default=[], metavar="COL",
                        help="publish COL as it is although it looks like a direct identifier (a name, a patient "
                             "id, e-mails, ...: the run is refused otherwise; repeatable)")


def check(opts: dict, frame: pd.DataFrame, roles: Mapping[str, Role], error) -> idd.Detection:
    """The detection on ``frame`` (every row of an in-memory run, the first rows of a streamed one); raises
    ``error(message)`` naming every high-confidence identifier left to be published as it is without
    --allow-identifier."""
    columns = {str(c) for c in frame.columns}
    for col in opts.get("allow_identifier") or ():
        if col not in columns:
            raise error(f"--allow-identifier {col}: unknown column; the table has: {', '.join(map(str, frame.columns))}")
    detection = idd.detect_identifiers(frame)
    named = {c: (r.value if isinstance(r, Role) else str(r)) for c, r in roles.items()}
    held = idd.unconfirmed(detection, named, opts.get("allow_identifier") or ())
    if held:
        raise error("; ".join(f"column {s.column!r} looks like a direct identifier ({s.reason}) and would be "
                              f"published as it is: give "
                              + (f"--person-id {s.column} (one person, several records: every model then counts "
                                 f"persons), or --identifier {s.column} to remove it" if s.person_id else
                                 f"--identifier {s.column} to remove it")
                              + f" (or --pseudonymize, --mask, --qi), or --allow-identifier {s.column} to publish it "
                                f"as is" for s in held))
    return detection


def summary(detection: idd.Detection, roles: Mapping[str, Role]) -> str:
    """The summary's note: the suggestions of high and medium confidence, with what the run did with them."""
    shown = detection.with_confidence(idd.HIGH, idd.MEDIUM)
    if not shown and not detection.free_text:
        return ""
    parts = []
    for s in shown:
        role = roles.get(s.column, Role.INSENSITIVE)
        done = "removed" if role == Role.IDENTIFYING else "removed, persons counted" if role == Role.PERSON \
            else "generalized" if role == Role.QUASI_IDENTIFYING else "published as is"
        parts.append(f"{s.column} ({s.confidence}, {s.suggested_role}, {done}: {s.reason})")
    parts += [f"{f.column} ({f.message})" for f in detection.free_text]
    return "; identifier suggestions: " + "; ".join(parts)
