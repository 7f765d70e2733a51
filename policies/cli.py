"""manage.py anonymize DATA --policy FILE --out OUT [--report R] [--extend-hierarchies | --stop-on-new-values]:
the policy file's run on a table file, without the database. The schema differences are checked first (a
missing, extra or retyped column stops the run; new values not covered by a hierarchy stop it unless
--extend-hierarchies), then one RunSpec is built as the web app builds a job's (roles, types, hierarchies,
models, options from the policy) and the same pipeline writes OUT through the command's write_publication."""

from __future__ import annotations

from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine.missing import parse_markers

from . import policy_file

# the run-shaping flags a policy replaces: given together with --policy they are refused, not ignored
POLICY_REPLACES = ("qi", "sensitive", "identifier", "hierarchy", "k", "transactions", "set_column", "population",
                   "research_column", "cluster")


def add_arguments(parser) -> None:
    group = parser.add_argument_group("release policies (docs/policies.md)")
    group.add_argument("--policy", default=None, metavar="FILE",
                       help="run the policy file's configuration (roles, hierarchies, models, algorithm, options) "
                            "on INPUT instead of the flags that set them")
    new = group.add_mutually_exclusive_group()
    new.add_argument("--extend-hierarchies", dest="policy_new_values", action="store_const",
                     const=policy_file.EXTEND, default=policy_file.STOP,
                     help="with --policy: values not covered by a hierarchy are added under an '(other)' node "
                          "(docs/definitions.md) and the run goes on")
    new.add_argument("--stop-on-new-values", dest="policy_new_values", action="store_const",
                     const=policy_file.STOP, help="with --policy: new values stop the run (the default)")


def _given(opts: dict, name: str) -> bool:
    value = opts.get(name)
    return bool(value) if isinstance(value, (list, bool)) else value is not None


def run(command, opts: dict, source: Path, out: Path, report_path: Path | None, progress) -> str:
    """The policy's run on INPUT; the summary line. Errors are the command's one-line errors."""
    from anonymizer_app.engine.pipeline import run as run_pipeline
    from anonymizer_app.engine.spec import RunSpec
    from anonymizer_app.management.commands.anonymize import AnonymizeError, write_publication

    clash = [name for name in POLICY_REPLACES if _given(opts, name)]
    if clash:
        raise AnonymizeError(f"--{clash[0].replace('_', '-')} cannot be given with --policy: the policy sets it")
    path = Path(opts["policy"])
    if not path.is_file():
        raise AnonymizeError(f"--policy {path}: no such file")
    try:
        policy = policy_file.loads(path.read_bytes(), f"--policy {path}")
    except OSError as exc:
        raise AnonymizeError(f"--policy {path}: cannot read the file ({exc.strerror})") from None
    frame, fmt = command._read_input(source, opts["delimiter"])
    na = parse_markers(opts["na_values"])
    columns = [str(c) for c in frame.columns]
    types = {c: engine.infer_type(frame[c], na) for c in columns}
    report = policy_file.schema_report(policy, columns, types, lambda name: frame[name])
    policy = policy_file.resolve(policy, report, opts["policy_new_values"])
    if report.new_values and not opts["quiet"]:
        for line in report.lines():
            command.stderr.write(f"{command.prog}: extended: {line}")
    table = engine.Table(frame, policy_file.roles(policy), policy_file.column_types(policy), name=source.stem,
                         na_values=na)
    build = policy_file.run_arguments(policy)
    engine.privacy.check_feasible([engine.KAnonymity(build["k"]), *build["models"]], len(frame),
                                  {c: frame[c] for c in frame.columns}, build["suppression_limit"])
    spec = RunSpec.build(table, policy_file.hierarchies(policy), **build)
    result = write_publication(spec, progress, out, fmt.delimiter, report_path, run_pipeline)
    return (f"{out}: policy {policy['name'] or path.name}, {result['records']:,} records written of "
            f"{result.get('input_records', result['records']):,}, {result['suppressed']:,} suppressed, "
            f"{result['equivalence_classes']:,} equivalence classes, smallest {result['k_achieved']:,} "
            f"(k={policy['k']}), {result['seconds']:.2f} s" + (f"; report {report_path}" if report_path else ""))
