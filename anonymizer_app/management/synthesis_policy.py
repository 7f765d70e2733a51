"""manage.py synthesize --policy FILE --dataset ID --out OUT: a policy file's synthesis step applied to a dataset
of the database, as the web app and the API apply a policy (policies/services.apply_jobs): the file is saved as a
new version of the dataset owner's policy of its name, the synthesis job is created (a DP method's ε charged to
the dataset's ledger, refused past its budget, nothing created) and run here, and its rows are written through
the export path (services/exports.export_result: the synthetic set's publication check first)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from anonymizer_app.management.base import UserError
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import exports, jobs, privacy_ledger, synthesis


def run(opts: dict, error: type[UserError]) -> str:
    """The synthetic set drawn from the dataset and written to --out; the summary line (the ledger after it)."""
    from policies import policy_file, services  # the web app's policies: loaded for this use only

    if not opts.get("policy"):
        raise error("--dataset applies to --policy FILE (a policy's synthesis step applied to the dataset)")
    if opts.get("input"):
        raise error("give INPUT (a file) or --dataset ID (a dataset of the database), not both")
    dataset = Dataset.objects.filter(pk=opts["dataset"]).select_related("owner").first()
    if dataset is None:
        raise error(f"--dataset {opts['dataset']}: no such dataset")
    path, out = Path(opts["policy"]), Path(opts["out"])
    if not path.is_file():
        raise error(f"--policy {path}: no such file")
    fmt = exports.format_for_path(str(out))
    if fmt is None:
        raise error(f"--out {out}: name a file ending in one of " + ", ".join(f.extension for f in
                                                                            exports.EXPORT_FORMATS.values()))
    config = policy_file.loads(path.read_bytes(), f"--policy {path}")
    if not policy_file.synthesizes(config) or policy_file.anonymizes(config):
        raise error(f"--policy {path}: with --dataset the policy holds a synthesis step only (an anonymization "
                    f"beside it is applied on the web or through the API)")
    version = services.add_version(dataset.owner, config["name"] or path.stem, config, config["description"])
    job = services.apply_jobs(dataset, version)[0]
    job = jobs.run_job(job)
    if job.status != Job.SUCCEEDED:
        raise error(f"synthesis {job.pk} {job.status}: {job.message}")
    body = exports.export_result(job.result, fmt.name)  # the publication check first (ExportError names why)
    _write_bytes(out, body)
    report = synthesis.report_of(job) or {}
    state = privacy_ledger.state(dataset)
    budget = "no budget set" if state.budget is None else f"budget ε = {state.budget:g}, {state.remaining:g} remaining"
    return (f"{out}: synthetic set {job.pk} of {dataset.name} by {report.get('label')}, "
            f"{(report.get('figures') or {}).get('rows')} rows; {report.get('guarantee')} Ledger of {dataset.name}: "
            f"ε = {state.spent:g} spent in {state.releases} release(s), {budget}; policy "
            f"{version.policy.name!r} v{version.number}\n")


def _write_bytes(path: Path, body: bytes) -> None:
    """The file written under a temporary name in its folder, then renamed into place (never half-written)."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(body)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
