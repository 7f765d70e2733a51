"""DICOM datasets: an upload (a zip, or the files of a folder) of DICOM files becomes a dataset whose table
is the chosen header attributes (one row per file, series or study); the files are kept beside it
(storage.dicom_name: files.zip and manifest.json), and a result's published rows are written back into
de-identified copies (engine.dicom), the gate-checked table being the only source of the written values.

The dataset's original is the extracted table as CSV, so it goes through the usual columns, hierarchies,
run and result pages and the one pipeline; the manifest says which row each file went to, the level, and
holds the key of the UID pseudonyms (encrypted by the vault)."""

from __future__ import annotations

import json
import secrets
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

from django.db import transaction
from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header

from hierarchy_editor.models import Hierarchy

from ..engine import InputError, Role
from ..engine import dicom as dicom_engine
from ..engine.dicom.archive import iter_archive, published_cells
from ..engine.dicom.deidentify import METHOD
from ..engine.dicom.headers import hierarchy_rows
from ..engine.io.reader import Format
from ..models import Dataset, Job
from . import datasets, results, storage, vault

MANIFEST = "manifest.json"
FILES = "files.zip"


# ---- upload -----------------------------------------------------------------------------------------------
def stage_uploads(uploads) -> Path:
    """One zip holding the uploaded files: a zip as it came, or the files of a folder under numbered names
    (a browser sends a folder's files by their base names, which may repeat across subfolders). The caller
    removes it (store() moves it into the dataset's folder)."""
    if not uploads:
        raise InputError("choose a zip file or a folder of DICOM files")
    folder = storage.media_root() / "tables"
    storage.make_folder(folder)
    path = folder / f"staging-{secrets.token_hex(16)}.zip"
    if len(uploads) == 1 and uploads[0].name.lower().endswith(".zip"):
        with open(path, "wb") as fh:
            for chunk in uploads[0].chunks():
                fh.write(chunk)
    else:
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for i, upload in enumerate(uploads):
                with archive.open(f"{i + 1:05d}-{Path(upload.name).name}", "w") as out:
                    for chunk in upload.chunks():
                        out.write(chunk)
    storage.make_private(path)
    return path


def read_staged(staging: Path, level: str, attributes: list[str], progress=None, shown: str | None = None):
    """Every file checked, the table extracted (no database: the upload page runs it beside the request to
    show its progress). Returns (source, extraction). A message names the upload as ``shown`` (the user's
    file name, upload_name()), never the internal staging file."""
    try:
        source = dicom_engine.open_source(staging, progress)
        return source, dicom_engine.extract(source, attributes, level, progress)
    except InputError as exc:
        text = str(exc)
        if staging.name in text:
            raise InputError(text.replace(str(staging), staging.name).replace(
                staging.name, shown or "the uploaded files")) from None
        raise


def store(owner, staging: Path, source, extraction, stem: str, name: str | None = None) -> Dataset:
    """The dataset (the table as its original CSV), the files and manifest moved beside it, the profile's roles
    on its columns; nothing is left when a step fails."""
    dataset = None
    try:
        csv = extraction.frame.to_csv(index=False).encode("utf-8")
        dataset = datasets.create_dataset(owner, csv, f"{stem}-dicom-headers.csv", name=name or stem,
                                          fmt=Format("csv", ",", "utf-8", True), header=True)
        folder = storage.dicom_dir(dataset)
        storage.make_folder(folder)
        shutil.move(staging, folder / FILES)
        manifest = {"level": extraction.level, "attributes": extraction.attributes, "files": len(source.members),
                    "file_rows": extraction.file_rows, "files_per_row": extraction.files_per_row,
                    "uid_key": vault.encrypt_text(secrets.token_hex(32))}
        (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        storage.make_private(folder)
        with transaction.atomic():
            for column in dataset.columns.all():
                column.role = dicom_engine.proposed_role(column.name).value
                column.hierarchy = _bound_hierarchy(owner, dataset, column.name, extraction.frame[column.name])
                column.save(update_fields=["role", "hierarchy"])
    except BaseException:
        if dataset is not None and dataset.pk:
            dataset.delete()  # erasure removes its files (original, table, DICOM folder)
        raise
    return dataset


def _bound_hierarchy(owner, dataset: Dataset, keyword: str, values):
    """A date (DA) or age (AS) column's DICOM-aware hierarchy, saved in the owner's library (None: the default
    built from the data applies)."""
    rows = hierarchy_rows(keyword, values)
    if rows is None:
        return None
    text = "\n".join(";".join(row) for row in rows) + "\n"
    h = Hierarchy.from_text(owner, f"{dataset.name[:150]}: {keyword}", text, f"{keyword}-dicom.csv", delimiter=";")
    h.save()
    return h


def upload_stem(uploads) -> str:
    return Path(uploads[0].name).stem if len(uploads) == 1 else "DICOM folder"


def upload_name(uploads) -> str:
    """The upload as its owner knows it: the zip's file name, or the folder's files."""
    return Path(uploads[0].name).name if len(uploads) == 1 else f"the folder's {len(uploads)} files"


def create_dicom_dataset(owner, uploads, level: str, attributes: list[str], name: str | None = None,
                         progress=None) -> Dataset:
    """Check every file, extract the table, store the dataset, its files and manifest; the columns get the
    roles the profile proposes. Nothing is stored when a file is not DICOM or an attribute is refused."""
    staging = stage_uploads(uploads)
    try:
        source, extraction = read_staged(staging, level, attributes, progress, upload_name(uploads))
        return store(owner, staging, source, extraction, upload_stem(uploads), name)
    finally:
        if staging.exists():
            staging.unlink()


# ---- what a dataset is ----------------------------------------------------------------------------------------
def is_dicom(dataset: Dataset) -> bool:
    return (storage.dicom_dir(dataset) / MANIFEST).is_file()


def manifest(dataset: Dataset) -> dict:
    return json.loads((storage.dicom_dir(dataset) / MANIFEST).read_text(encoding="utf-8"))


def describe(dataset: Dataset) -> dict | None:
    """What the pages say about a DICOM dataset: the level (what a row is) and the number of files."""
    if not is_dicom(dataset):
        return None
    m = manifest(dataset)
    return {"level": m["level"], "level_label": dicom_engine.LEVEL_LABELS[m["level"]], "files": m["files"],
            "attributes": m["attributes"]}


def check_roles(dataset: Dataset) -> list[str]:
    """Problems with the columns' roles for a DICOM run: a UID column may only be an identifier (its value
    in the files is a pseudonym; published, the original would identify the file)."""
    if not is_dicom(dataset):
        return []
    problems = []
    for column in dataset.columns.all():
        if column.role != Role.IDENTIFYING.value and dicom_engine.uid_only_identifier(column.name):
            problems.append(f"{column.name}: a UID the profile replaces by a pseudonym; it can only be identifying")
    return problems


# ---- the de-identified files of a result ----------------------------------------------------------------------
def result_archive(job: Job) -> Iterator[bytes]:
    """The zip of the de-identified copies of the files whose rows the job published (suppressed rows' files
    left out), streamed a file at a time (engine.dicom.archive.iter_archive: each file checked before its
    bytes leave). What can be refused is refused here, before the first byte."""
    dataset = job.dataset
    if not is_dicom(dataset) or job.kind != Job.RUN:
        raise InputError("this job's dataset is not a set of DICOM files")
    m = manifest(dataset)
    frame, suppressed = results.load_output(job.result)
    rows = frame.attrs.pop("rows", None)
    if rows is None:
        raise InputError("this result does not say which dataset row each published row comes from")
    keep = ~suppressed
    cells = published_cells(frame[keep].reset_index(drop=True), rows[keep])
    source = dicom_engine.DicomSource(storage.dicom_dir(dataset) / FILES, sorted(m["file_rows"]))
    key = bytes.fromhex(vault.decrypt_text(m["uid_key"]))
    return iter_archive(source, m["file_rows"], cells, key, f"{METHOD[:40]}; k={job.k}")


def zip_response(chunks, job: Job) -> StreamingHttpResponse:
    """The zip streamed as it is written (a large set starts downloading at once; a file failing its check
    stops the stream, leaving an incomplete zip that no reader opens): the web's download and the API's."""
    response = StreamingHttpResponse(chunks, content_type="application/zip")
    response["Content-Disposition"] = content_disposition_header(True, f"{job.dataset.name}-deidentified.zip")
    return response
