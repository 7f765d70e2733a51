"""Research repositories (Zenodo, Dataverse): a record's table file downloaded on a worker and read as an
upload (services/remote.py and its clients; their page, ``/api/v1/repositories/import/`` and
``manage.py import_remote``)."""

from __future__ import annotations

from ...engine.errors import InputError
from .. import remote, storage, vault
from .base import ImportSteps, Source, register

PROGRESS_BYTES = 1 << 20  # a download's progress is written (and a cancel looked for) each MiB


def _bytes_phase(imp, done: int, total: int | None) -> str:
    counted = f" of {total / 1048576:.1f}" if total else ""
    return f"downloaded {done / 1048576:.1f}{counted} MiB of {imp.table}"[:255]


def download_import(imp, steps: ImportSteps):
    """A queued import's reading step: download the file into the staging path, the bytes read written to the
    row each MiB (a cancel looked for then), and store it through the upload's ingestion; the downloaded file
    is removed in every case."""
    try:
        token = vault.decrypt_text(imp.password) if imp.password else None
    except vault.VaultError as exc:
        raise InputError(f"the token given for the import cannot be read: {exc}") from None
    if imp.account_id is not None:
        client = remote.account_client(imp.account)
    else:
        client = remote.make_client(imp.source, imp.server, token)
    chosen = remote.RemoteFile(name=imp.table, size=imp.total, url=imp.url)
    path = steps.staging
    path.parent.mkdir(parents=True, exist_ok=True)
    steps.phase(_bytes_phase(imp, 0, imp.total))
    shown = [0]

    def progress(done: int) -> None:
        if done - shown[0] < PROGRESS_BYTES:
            return
        shown[0] = done
        steps.counted(done, imp.total, _bytes_phase(imp, done, imp.total))
        steps.check_cancel()

    try:
        done = remote.download_file(client, chosen, path, progress)
        steps.counted(done, imp.total, _bytes_phase(imp, done, imp.total))
        steps.check_cancel()
        if chosen.name.lower().endswith(".sas7bdat"):  # its value labels: a format catalog of the same record
            catalog = remote.sas_catalog(remote.list_files(imp.source, client, imp.record), chosen)
            if catalog is not None:
                steps.phase(f"downloading {catalog.name}, the format catalog of {imp.table}"[:255])
                remote.attach_catalog(client, catalog, path, chosen.name)
        steps.phase(f"reading {imp.table} as a table"[:255])
        return remote.store_download(imp.owner, path, chosen, imp.name or None)
    finally:
        storage.discard(path)


for _name, _label in remote.SERVICES.items():
    register(Source(
        name=_name,
        label=_label,
        summary=f"A table file (CSV, TSV, TAB, TXT or XLSX) of a {_label} record, downloaded on a worker from an "
                f"allow-listed server and read as an upload.",
        offer="Import from Zenodo / Dataverse…",
        page="anonymizer:import_remote",
        link_id="import-remote-link",
        api="repositories/import/",
        command="import_remote",
        queued=download_import,
    ))
