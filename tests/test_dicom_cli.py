"""manage.py anonymize_dicom on pydicom's sample files: the published table and the files agree, UIDs
are consistent, bad input is named and nothing is written."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pandas as pd
import pydicom
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pydicom.data import get_testdata_file

from anonymizer_app.engine import dicom

SAMPLES = ["CT_small.dcm", "MR_small.dcm", "MR_small_implicit.dcm", "MR_small_bigendian.dcm", "JPEG2000.dcm",
           "SC_rgb_rle.dcm", "examples_overlay.dcm", "liver_1frame.dcm", "rtplan.dcm", "rtdose.dcm"]


@pytest.fixture
def scans(tmp_path) -> Path:
    root = tmp_path / "scans"
    root.mkdir()
    for name in SAMPLES:
        (root / name).write_bytes(Path(get_testdata_file(name)).read_bytes())
    return root


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("anonymize_dicom", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_study_level_files_carry_the_published_cells(scans, tmp_path):
    key = tmp_path / "uid.key"
    key.write_text("ab" * 32)
    out, table, report = tmp_path / "out.zip", tmp_path / "t.csv", tmp_path / "r.json"
    stdout, stderr = run(str(scans), "--level", "study", "--qi", "PatientSex", "--qi", "StudyDate",
                         "--k", "2", "--out", str(out), "--table", str(table), "--report", str(report),
                         "--uid-key-file", str(key))
    assert "[100%]" in stderr and "reading the headers" in stderr  # the progress line
    assert f"{out}: 10 de-identified files of 10" in stdout
    published = pd.read_csv(table, dtype=str, keep_default_na=False)
    # 10 files, 8 studies (MR_small and its implicit/big endian copies are one study)
    source = dicom.open_source(scans)
    extraction = dicom.extract(source, ["PatientSex", "StudyDate"], "study")
    assert len(extraction.frame) == len(published) == 8
    uid_key = bytes.fromhex("ab" * 32)
    with zipfile.ZipFile(out) as z:
        files = [pydicom.dcmread(io.BytesIO(z.read(n))) for n in z.namelist()]
    assert len(files) == 10
    for member, ds in zip(source.members, files, strict=True):
        row = published.iloc[extraction.file_rows[member]]
        assert str(ds.PatientSex) == row["PatientSex"] and str(ds.StudyDate) == row["StudyDate"]
        original = pydicom.dcmread(scans / member)
        assert ds.StudyInstanceUID == dicom.pseudonym_uid(original.StudyInstanceUID, uid_key)
        assert "PatientName" not in ds or not ds.PatientName  # Z: emptied
    by_member = dict(zip(source.members, files, strict=True))
    studies = {by_member[m].StudyInstanceUID for m in ("MR_small.dcm", "MR_small_implicit.dcm",
                                                         "MR_small_bigendian.dcm")}  # one study
    assert len(studies) == 1
    assert "PatientAge" not in by_member["CT_small.dcm"]  # not a --qi: an identifier, X per profile


def test_a_non_dicom_member_is_refused_and_nothing_written(scans, tmp_path):
    archive = tmp_path / "scans.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(scans / "CT_small.dcm", "x/CT_small.dcm")
        z.writestr("x/readme.pdf", b"%PDF-1.4")
    out = tmp_path / "out.zip"
    with pytest.raises(CommandError, match=r"x/readme\.pdf: not a DICOM file") as exc:
        run(str(archive), "--qi", "PatientSex", "--out", str(out))
    assert exc.value.returncode == 2
    assert {p.name for p in tmp_path.iterdir()} == {"scans", "scans.zip"}  # no OUT, no temporary file


@pytest.mark.parametrize("args,message", [
    (["--qi", "StudyInstanceUID"], "--qi StudyInstanceUID: a UID the profile replaces by a pseudonym"),
    (["--qi", "Rows"], "attribute Rows: its value representation US is not text"),
    (["--qi", "StudyDescription"], "--qi StudyDescription: not one of the chosen attributes"),
    ([], "no quasi-identifier"),
    (["--qi", "PatientSex", "--uid-key-file", "/nonexistent/key"], "--uid-key-file /nonexistent/key: cannot read"),
])
def test_bad_flags_named(scans, tmp_path, args, message):
    out = tmp_path / "out.zip"
    with pytest.raises(CommandError, match=message):
        run(str(scans), "--out", str(out), *args)
    assert not out.exists()
