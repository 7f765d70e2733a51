"""The state of a sequence of m-invariant releases, at rest: the engine's history (signatures by keyed record
id) and the secret that keys the ids, encrypted by the vault (services/vault.py), never in clear.

The same JSON object is the CLI's ``--history FILE`` and a policy release's ``Release.state``:
``{"format": "m-invariance state v1", "secret": <vault token>, "history": <engine History.to_dict()>}``.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from policies.models import Release

from ..engine import ALGORITHMS
from ..engine.errors import InputError
from ..engine.model.table import Table
from ..engine.privacy import MInvariance
from ..engine.republication import History, Republication
from ..models import Job
from . import vault

if TYPE_CHECKING:
    from ..engine.run.gate import Publication
    from ..engine.run.spec import RunSpec
    from ..models import Job

STATE_FORMAT = "m-invariance state v1"


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def state_dict(history: History, secret: bytes) -> dict:
    """The state to store after a release: the history and the encrypted id secret."""
    return {"format": STATE_FORMAT, "secret": vault.encrypt_text(secret.hex()), "history": history.to_dict()}


def load_state(data: object, source: str = "history") -> tuple[History, bytes]:
    """(history, secret) from a stored state; refuses anything else naming ``source``."""
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise InputError(f"{source}: not an m-invariance state (expected \"format\": {STATE_FORMAT!r})")
    token = data.get("secret")
    if not isinstance(token, str):
        raise InputError(f"{source}: the m-invariance state has no secret")
    try:
        secret = bytes.fromhex(vault.decrypt_text(token))
    except vault.VaultError as exc:
        raise InputError(f"{source}: {exc}") from None
    except ValueError:
        raise InputError(f"{source}: the m-invariance state's secret is malformed") from None
    return History.from_dict(data.get("history"), source), secret


# ---- a policy's releases (policies.Release.state) ---------------------------------------------------------
def _release_of(job):
    return Release.objects.filter(job=job).select_related("policy").first()


def with_history(job: Job, spec: RunSpec) -> RunSpec:
    """``spec`` with its release's history (RunSpec.republication) when the job's algorithm publishes a release
    of a sequence (m-invariance); other specs unchanged. The history is the state of the policy's latest earlier
    release that published one; an earlier release still queued or running refuses the run (releases of a
    sequence are made one after another), a failed or cancelled one is skipped (it published nothing)."""
    from dataclasses import replace


    info = ALGORITHMS.get(spec.algorithm)
    if info is None or not info.republishes:
        return spec
    release = _release_of(job)
    if release is None:
        raise InputError("m-invariance publishes a release of a sequence: apply a release policy whose algorithm is "
                         "m-invariance (its releases keep the history), or use manage.py anonymize --history")
    history: History | None = None
    secret: bytes | None = None
    earlier = release.policy.releases.filter(number__lt=release.number).select_related("job").order_by("-number")
    for r in earlier:
        if isinstance(r.state, dict) and r.state.get("format") == STATE_FORMAT:
            history, secret = load_state(r.state, f"release {r.number} of policy {release.policy.name!r}")
            break
        if r.job is not None and r.job.status not in (Job.FAILED, Job.CANCELLED):
            raise InputError(f"release {r.number} of policy {release.policy.name!r} has not been published yet: the "
                             f"releases of an m-invariant sequence are made one after another; apply the policy "
                             f"again when it is done")
    models = [m for m in spec.models if isinstance(m, MInvariance)]
    if len(models) != 1:
        raise InputError("the m-invariance algorithm needs the m-invariance model (its m) in the policy's models")
    if history is None or secret is None:  # load_state gives both or raises
        if not isinstance(spec.table, Table):  # only a Table names its QIs for the new history
            raise InputError("m-invariance publishes releases of a table read whole, not of a streamed or "
                             "transaction input")
        history, secret = History.empty(models[0].m, models[0].column or spec.sensitive or "", spec.table.qi), \
            new_secret()
    record_id = str((spec.options or {}).get("record_id") or "")
    if not record_id:
        raise InputError("m-invariance: the policy names no record-id column (option record_id)")
    return replace(spec, republication=Republication(history, secret, record_id))


def store(job: Job, spec: RunSpec, publication: Publication) -> None:
    """After the gate passed a release: its history (and the encrypted secret) become the release's state, with
    the figures the policy's release list shows."""
    if spec.republication is None or not isinstance(publication.history, History):  # None: not a release
        return
    release = _release_of(job)
    if release is None:
        return
    search = publication.report.get("search", {})
    state = state_dict(publication.history, spec.republication.secret)
    state["summary"] = {"release": publication.history.releases, "groups": int(search.get("groups", 0)),
                        "counterfeits": int(search.get("counterfeits", 0)),
                        "groups_with_counterfeits": int(search.get("groups_with_counterfeits", 0)),
                        "records": int(len(publication.table)) - int(search.get("counterfeits", 0)),
                        "not_published": int(search.get("not_published", 0))}
    release.state = state
    release.save(update_fields=["state"])
