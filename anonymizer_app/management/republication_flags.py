"""manage.py anonymize INPUT --algorithm m-invariance --m M --record-id COL --history FILE --qi ... --sensitive S
--out OUT: one release of a sequence of m-invariant releases (Xiao & Tao 2007; docs/definitions.md).

FILE holds the sequence's state (services/republication.py: the history of signatures by keyed record id,
the id secret encrypted by the vault). A missing FILE starts a sequence (release 1); after the release OUT,
the report and FILE are written together, only when the publishing gate passed the release against FILE's
history. COL (an identifying column: never published) names each record across releases.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from anonymizer_app import engine
from anonymizer_app.engine import Role
from anonymizer_app.engine import republication as sequences
from anonymizer_app.engine.io import json_limits
from anonymizer_app.engine.model.missing import parse_markers
from anonymizer_app.engine.run.pipeline import run as run_pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.management import identifier_check
from anonymizer_app.management.common import AnonymizeError, write_all, write_publication

if TYPE_CHECKING:
    from anonymizer_app.engine.republication import History

ALGORITHM = "m-invariance"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("re-publication (--algorithm m-invariance: --m M --record-id COL --history "
                                      "FILE)")
    group.add_argument("--history", default=None, metavar="FILE",
                       help="with --algorithm m-invariance: the sequence's state file, read (missing: release 1) "
                            "and rewritten with this release")


def read_state(path: Path):
    """(history, secret) kept in the state file ``path``; a missing file starts a sequence: (None, a new secret).
    Shared by --algorithm m-invariance and a policy's m-invariance run (policies/cli.py)."""
    # the sequence's state module (and the vault's cryptography under it) is loaded by m-invariance runs only
    from anonymizer_app.services import republication as state

    if not path.exists():
        if not path.parent.is_dir():
            raise AnonymizeError(f"--history {path}: the folder {path.parent} does not exist")
        return None, state.new_secret()
    try:
        data = json_limits.loads(path.read_text(encoding="utf-8"), f"--history {path}")
    except json_limits.JsonLimitError as exc:
        raise AnonymizeError(str(exc)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnonymizeError(f"--history {path}: cannot read the state ({exc})") from None
    return state.load_state(data, f"--history {path}")


def publish_release(spec, republication, path: Path, progress, out: Path, delimiter: str,
                    report_path: Path | None) -> tuple[dict, History]:
    """Runs ``spec`` as the next release of ``republication``'s sequence; OUT, the report and the state file
    ``path`` are written only after the gate passed the release. (report, the history after the release)."""
    spec = replace(spec, republication=republication)
    kept: dict[str, History] = {}

    def run_and_keep(spec, progress, sink):
        publication = run_pipeline(spec, progress, sink)
        # a release of a sequence always extends the history (Publication.history is typed loosely, object)
        kept["history"] = cast("History", publication.history)
        return publication

    report = write_publication(spec, progress, out, delimiter, report_path, run_and_keep)
    after = kept["history"]
    from anonymizer_app.services import republication as state

    write_all([(path, json.dumps(state.state_dict(after, republication.secret), indent=1, sort_keys=True)
                 + "\n")])
    return report, after


def run(command, opts: dict, source: Path, out: Path, report_path: Path | None, progress) -> str:
    """One m-invariant release of INPUT against --history; the summary line."""
    m = opts.get("m")
    if m is None:
        raise AnonymizeError("--algorithm m-invariance: give --m M (distinct sensitive values per group)")
    record_id = opts.get("record_id")
    if not isinstance(record_id, str) or not record_id:
        raise AnonymizeError("--algorithm m-invariance: give --record-id COL (the column naming each record "
                             "across releases)")
    if not opts.get("history"):
        raise AnonymizeError("--algorithm m-invariance: give --history FILE (the sequence's state; a missing file "
                             "starts a sequence)")
    for flag in ("k", "transactions", "set_column", "population", "research_column", "cluster"):
        value = opts.get(flag)
        if value:
            raise AnonymizeError(f"--{flag.replace('_', '-')} does not apply to --algorithm m-invariance")
    if not opts["qi"]:
        raise AnonymizeError("--qi: name at least one quasi-identifying column")
    if not opts["sensitive"]:
        raise AnonymizeError("--algorithm m-invariance: give --sensitive COL (the column whose values each group "
                             "holds m of)")
    history_path = Path(opts["history"])
    history, secret = read_state(history_path)

    frame, fmt = command._read_input(source, opts["delimiter"])
    columns = [str(c) for c in frame.columns]
    roles = command._roles(opts, columns)
    if record_id not in columns:
        raise AnonymizeError(f"--record-id {record_id}: unknown column; the table has: {', '.join(columns)}")
    if roles.get(record_id, Role.IDENTIFYING) != Role.IDENTIFYING:
        raise AnonymizeError(f"--record-id {record_id}: the record id is identifying (never published), not a "
                             f"{roles[record_id].value} column")
    roles[record_id] = Role.IDENTIFYING
    # names, e-mails left to be published as they are: refused, as every other run (--allow-identifier confirms)
    identifier_check.check(opts, frame, roles, AnonymizeError)
    hierarchies = command._hierarchies(opts, roles)
    table = engine.Table(frame, roles, name=source.stem, na_values=parse_markers(opts["na_values"]))
    sensitive = opts["sensitive"][0]
    model = engine.privacy.MInvariance(m, sensitive)
    engine.privacy.check_feasible([model], len(frame), {sensitive: frame[sensitive]}, opts["suppression"])
    if history is None:
        history = sequences.History.empty(m, sensitive, table.qi)
    spec = RunSpec.build(table, hierarchies, ALGORITHM, models=[model], suppression_limit=opts["suppression"],
                         sensitive=sensitive, options={"record_id": record_id})
    report, after = publish_release(spec, sequences.Republication(history, secret, record_id), history_path, progress, out,
                                    fmt.delimiter, report_path)
    search = report.get("search", {})
    return (f"{out}: release {after.releases} of the sequence, {report['records']:,} rows "
            f"({report['records'] - int(search.get('counterfeits', 0)):,} records of {report['input_records']:,}, "
            f"{int(search.get('counterfeits', 0)):,} counterfeits) in {int(search.get('groups', 0)):,} groups of at "
            f"least {m} distinct values; {int(search.get('not_published', 0)):,} not published; history "
            f"{history_path} ({len(after.records):,} records)\n")
