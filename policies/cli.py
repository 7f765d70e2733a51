"""manage.py anonymize DATA --policy FILE --out OUT [--report R] [--extend-hierarchies | --stop-on-new-values]:
the policy file's run on a table file, without the database. The schema differences are checked first (a
missing, extra or retyped column stops the run; new values not covered by a hierarchy stop it unless
--extend-hierarchies), then one RunSpec is built as the web app builds a job's (roles, types, hierarchies,
models, options from the policy) and the same pipeline writes OUT through the command's write_publication."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine.model.missing import parse_markers
from anonymizer_app.engine.republication import History, Republication
from anonymizer_app.engine.run import identifiers as id_rules
from anonymizer_app.engine.run.pipeline import run as run_pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.management import identifier_check
from anonymizer_app.management.common import AnonymizeError, write_publication
from anonymizer_app.management.republication_flags import publish_release, read_state

from . import policy_file

# the run-shaping flags a policy replaces: given together with --policy they are refused, not ignored
POLICY_REPLACES = ("qi", "sensitive", "identifier", "hierarchy", "k", "transactions", "set_column", "population",
                   "research_column", "cluster", "pseudonymize", "mask", "surrogate", "pseudonym_fold_case",
                   "person_id", "person_adversary", "sdc", "sdc_seed")
NOT_WITH_POLICY = ("reidentification_table",)  # not offered for policy runs: refused rather than ignored


def add_arguments(parser) -> None:
    group = parser.add_argument_group("release policies (docs/policies.md)")
    group.add_argument("--policy", default=None, metavar="FILE",
                       help="run the policy file's configuration (roles, hierarchies, models, algorithm, options) "
                            "on INPUT instead of the flags that set them")
    group.add_argument("--policy-key", action="append", default=[], metavar="[KEY=]FILE",
                       help="with --policy: the secret (hex, at least 16 bytes) of the pseudonymization key the "
                            "policy's rules name KEY (the id shown in the web app); FILE alone: every key they name")
    new = group.add_mutually_exclusive_group()
    new.add_argument("--extend-hierarchies", dest="policy_new_values", action="store_const",
                     const=policy_file.EXTEND, default=None,
                     help="with --policy: values not covered by a hierarchy are added under an '(other)' node "
                          "(docs/definitions.md) and the run goes on")
    new.add_argument("--stop-on-new-values", dest="policy_new_values", action="store_const",
                     const=policy_file.STOP, help="with --policy: new values stop the run (the default)")


def refuse_without_policy(opts: dict) -> None:
    """The policy flags are refused without --policy, not ignored."""
    if opts.get("policy_key"):
        raise AnonymizeError("--policy-key applies to --policy runs")
    if opts.get("policy_new_values") is not None:
        raise AnonymizeError("--extend-hierarchies and --stop-on-new-values apply to --policy runs")


def _given(opts: dict, name: str) -> bool:
    value = opts.get(name)
    return bool(value) if isinstance(value, (list, bool)) else value is not None


def read_key(path: Path, flag: str) -> bytes:
    """A key file: hexadecimal digits (blanks ignored), at least 16 bytes."""
    try:
        key = bytes.fromhex("".join(path.read_text(encoding="ascii").split()))
    except OSError as exc:
        raise AnonymizeError(f"{flag} {path}: cannot read it ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError):
        raise AnonymizeError(f"{flag} {path}: not a hexadecimal key") from None
    if len(key) < 16:
        raise AnonymizeError(f"{flag} {path}: {len(key)} bytes; give at least 16 (32 hex digits)")
    return key


def _identifiers(spec, policy: dict, opts: dict):
    """The policy's identifier treatments on the spec, with the secrets of the keys its pseudonym rules name
    (--policy-key): the same key's secret gives the same pseudonyms as the web app's run."""
    given = [(k if sep else None, Path(f)) for k, sep, f in (t.rpartition("=") for t in opts.get("policy_key") or [])]
    rules = id_rules.parse_rules(policy["identifiers"])
    named = sorted({str(r.key) for r in rules if r.treatment == id_rules.PSEUDONYM})
    if given and not named:
        raise AnonymizeError("--policy-key: the policy's rules name no pseudonymization key")
    keys: dict[str, bytes] = {}
    default = next((read_key(path, "--policy-key") for name, path in given if name is None), None)
    if default is None and opts.get("pseudonym_key_file") and named:  # the identifier flags' key file
        default = read_key(Path(opts["pseudonym_key_file"]), "--pseudonym-key-file")
    for name, path in given:
        if name is not None:
            if name not in named:
                raise AnonymizeError(f"--policy-key {name}=...: the policy's rules name no key {name!r}; they name: "
                                     f"{', '.join(named)}")
            keys[name] = read_key(path, "--policy-key")
    for name in named:
        if name not in keys:
            if default is None:
                raise AnonymizeError(f"the policy pseudonymizes with the key {name!r}: give its secret with "
                                     f"--policy-key {name}=FILE")
            keys[name] = default
    return replace(spec, identifiers=rules, pseudonym_keys=keys) if rules else spec


def run(command, opts: dict, source: Path, out: Path, report_path: Path | None, progress) -> str:
    """The policy's run on INPUT; the summary line. Errors are the command's one-line errors."""
    clash = [name for name in POLICY_REPLACES if _given(opts, name)]
    if clash:
        raise AnonymizeError(f"--{clash[0].replace('_', '-')} cannot be given with --policy: the policy sets it")
    clash = [name for name in NOT_WITH_POLICY if _given(opts, name)]
    if clash:
        raise AnonymizeError(f"--{clash[0].replace('_', '-')} does not apply to --policy runs")
    path = Path(opts["policy"])
    if not path.is_file():
        raise AnonymizeError(f"--policy {path}: no such file")
    try:
        policy = policy_file.loads(path.read_bytes(), f"--policy {path}")
    except OSError as exc:
        raise AnonymizeError(f"--policy {path}: cannot read the file ({exc.strerror})") from None
    if not policy_file.anonymizes(policy):
        raise AnonymizeError(f"--policy {path}: the policy holds a synthesis only: draw it with manage.py synthesize "
                             f"INPUT --policy {path} --out OUT")
    if policy_file.synthesizes(policy) and not opts["quiet"]:
        command.stderr.write(f"{command.prog}: the policy's synthesis step is not run here: manage.py synthesize "
                             f"INPUT --policy {path} --out OUT draws it")
    frame, fmt = command._read_input(source, opts["delimiter"])
    na = parse_markers(opts["na_values"])
    columns = [str(c) for c in frame.columns]
    types = {c: engine.infer_type(frame[c], na) for c in columns}
    report = policy_file.schema_report(policy, columns, types, lambda name: frame[name])
    policy = policy_file.resolve(policy, report, opts["policy_new_values"] or policy_file.STOP)
    if report.new_values and not opts["quiet"]:
        for line in report.lines():
            command.stderr.write(f"{command.prog}: extended: {line}")
    # names, patient ids, e-mails the policy leaves insensitive or sensitive: refused (--allow-identifier confirms)
    identifier_check.check(opts, frame, policy_file.roles(policy), AnonymizeError)
    table = engine.Table(frame, policy_file.roles(policy), policy_file.column_types(policy), name=source.stem,
                         na_values=na)
    build = policy_file.run_arguments(policy)
    engine.privacy.check_feasible([engine.KAnonymity(build["k"]), *build["models"]], len(frame),
                                  {c: frame[c] for c in frame.columns}, build["suppression_limit"])
    spec = RunSpec.build(table, policy_file.hierarchies(policy), **build)
    # a policy with a person id counts persons against the adversary it remembers
    spec = replace(_identifiers(spec, policy, opts), person_adversary=policy_file.person_adversary(policy),
                   sdc=policy_file.sdc_steps(policy), sdc_seed=int(policy.get("sdc_seed", 0)))
    info = engine.ALGORITHMS[policy["algorithm"]]
    if info.republishes:  # a release of a sequence: against --history, which is rewritten with it
        return _release(spec, opts, progress, out, fmt.delimiter, report_path, policy)
    if opts.get("history"):
        raise AnonymizeError(f"--history applies to a policy whose algorithm publishes a sequence of releases "
                             f"(m-invariance); this one's is {policy['algorithm']}")
    result = write_publication(spec, progress, out, fmt.delimiter, report_path, run_pipeline)
    return (f"{out}: policy {policy['name'] or path.name}, {result['records']:,} records written of "
            f"{result.get('input_records', result['records']):,}, {result['suppressed']:,} suppressed, "
            f"{result['equivalence_classes']:,} equivalence classes, smallest {result['k_achieved']:,} "
            f"(k={policy['k']}), {result['seconds']:.2f} s" + (f"; report {report_path}" if report_path else ""))


def _release(spec, opts: dict, progress, out: Path, delimiter: str, report_path: Path | None, policy: dict) -> str:
    """The policy's run as the next release of the sequence kept in --history (services/republication.py: the
    history and the encrypted id secret; a missing file starts the sequence), as a policy's release in the web
    app runs against the previous release's state. OUT, the report and the state are written only after the
    gate passed the release against the history."""
    if not opts.get("history"):
        raise AnonymizeError(f"--policy: the algorithm {policy['algorithm']} publishes a release of a sequence: give "
                             f"--history FILE (the sequence's state; a missing file starts it)")
    record_id = str(policy["options"].get("record_id") or "")
    if not record_id:
        raise AnonymizeError("--policy: the policy names no record-id column (option record_id)")
    models = [m for m in spec.models if isinstance(m, engine.privacy.MInvariance)]
    if len(models) != 1:
        raise AnonymizeError("--policy: the m-invariance algorithm needs the m-invariance model (its m) in the "
                             "policy's models")
    path = Path(opts["history"])
    history, secret = read_state(path)
    if history is None:
        history = History.empty(models[0].m, models[0].column or spec.sensitive or "", spec.table.qi)
    report, after = publish_release(spec, Republication(history, secret, record_id), path, progress, out,
                                    delimiter, report_path)
    search = report.get("search", {})
    counterfeits = int(search.get("counterfeits", 0))
    return (f"{out}: policy {policy['name'] or 'file'}, release {after.releases} of the sequence in {path}, "
            f"{report['records'] - counterfeits:,} records of {report['input_records']:,} and {counterfeits:,} "
            f"counterfeits in {int(search.get('groups', 0)):,} groups")
