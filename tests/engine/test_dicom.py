"""engine.dicom on pydicom's own sample files (shipped inside the package: nothing is downloaded)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pydicom
import pytest
from pydicom.data import get_testdata_file

from anonymizer_app.engine import InputError, Role, dicom
from anonymizer_app.engine.dicom.deidentify import PIXEL_DATA
from anonymizer_app.engine.dicom.profile import COMBINED

# Explicit and implicit VR, big endian, JPEG 2000, RLE, overlays, RT plan/dose, a structured report, a SEG.
SAMPLES = ["CT_small.dcm", "MR_small.dcm", "MR_small_implicit.dcm", "MR_small_bigendian.dcm", "JPEG2000.dcm",
           "SC_rgb_rle.dcm", "examples_overlay.dcm", "liver_1frame.dcm", "rtplan.dcm", "rtdose.dcm",
           "reportsi.dcm", "examples_ybr_color.dcm"]
KEY = bytes(range(32))


def sample_bytes(name: str) -> bytes:
    return Path(get_testdata_file(name)).read_bytes()


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "scans"
    (root / "a").mkdir(parents=True)
    for i, name in enumerate(SAMPLES):
        (root / ("a" if i % 2 else "") / name).write_bytes(sample_bytes(name))
    return root


# ---- the profile table ----------------------------------------------------------------------------------
def test_profile_rows_checked_by_hand():
    p = dicom.BASIC_PROFILE
    assert len(p) == 643
    assert p[0x00100010].code == "Z" and p[0x00100010].keyword == "PatientName"
    assert p[0x00100020].code == "Z/D" and p[0x00100020].keyword == "PatientID"
    assert p[0x00100030].code == "Z"  # PatientBirthDate
    assert p[0x00101010].code == "X"  # PatientAge
    assert p[0x00080080].code == "X/Z/D"  # InstitutionName
    assert p[0x0020000D].code == "U" and p[0x0020000E].code == "U" and p[0x00080018].code == "U"
    assert p[0x00081140].code == "X/Z/U*"  # ReferencedImageSequence
    assert p[0x00080050].code == "Z"  # AccessionNumber
    assert all(e.code in dicom.profile.ACTIONS or e.code in COMBINED for e in p.values())
    assert dicom.entry_for(0x60004000).code == "X" and dicom.entry_for(0x60223000).code == "X"
    assert dicom.entry_for(0x50000010).code == "X"
    assert dicom.entry_for(0x00091001).name == "Private Attribute"
    assert dicom.entry_for(0x00080060) is None  # Modality: not in the profile, kept


@pytest.mark.parametrize("code,action", [("Z/D", "Z"), ("X/Z", "Z"), ("X/D", "D"), ("X/Z/D", "Z"),
                                         ("X/Z/U*", "Z"), ("U", "U"), ("X", "X"), ("D", "D")])
def test_combined_codes_resolve(code, action):
    assert dicom.resolve_code(code) == action


# ---- sources --------------------------------------------------------------------------------------------
def test_folder_and_zip_read_the_same_members(folder, tmp_path):
    archive = tmp_path / "scans.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(folder).as_posix())
    a, b = dicom.open_source(folder), dicom.open_source(archive)
    assert a.members == b.members and len(a.members) == len(SAMPLES)
    assert "a/MR_small.dcm" in a.members


def test_a_non_dicom_file_in_the_zip_is_refused_by_name(tmp_path):
    archive = tmp_path / "scans.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("one/CT_small.dcm", sample_bytes("CT_small.dcm"))
        z.writestr("one/notes.txt", b"Patient: John Smith")
    with pytest.raises(InputError, match=r"^one/notes\.txt: not a DICOM file"):
        dicom.open_source(archive)


def test_not_a_zip_nor_folder(tmp_path):
    bad = tmp_path / "x.zip"
    bad.write_bytes(b"plain text")
    with pytest.raises(InputError, match="x.zip: neither a zip file nor a folder"):
        dicom.open_source(bad)


# ---- extraction -----------------------------------------------------------------------------------------
def test_extract_per_file_series_and_study(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    # MR_small, its implicit and big endian copies: one study, one series, three files; CT_small another.
    for name in ("MR_small.dcm", "MR_small_implicit.dcm", "MR_small_bigendian.dcm", "CT_small.dcm"):
        (root / name).write_bytes(sample_bytes(name))
    source = dicom.open_source(root)
    by_file = dicom.extract(source, ["PatientSex", "StudyDate", "0008,0080"], "file")
    assert list(by_file.frame.columns) == ["PatientSex", "StudyDate", "InstitutionName"]
    assert by_file.frame.values.tolist() == [
        ["O", "20040119", "JFK IMAGING CENTER"],
        ["F", "20040826", "TOSHIBA"], ["F", "20040826", "TOSHIBA"], ["F", "20040826", "TOSHIBA"]]
    by_study = dicom.extract(source, ["PatientSex", "StudyDate"], "study")
    assert by_study.frame.values.tolist() == [["O", "20040119"], ["F", "20040826"]]
    assert by_study.file_rows == {"CT_small.dcm": 0, "MR_small.dcm": 1, "MR_small_bigendian.dcm": 1,
                                  "MR_small_implicit.dcm": 1}
    assert by_study.files_per_row == [1, 3]


def test_extract_names_a_disagreement_within_a_study(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    (root / "a.dcm").write_bytes(sample_bytes("MR_small.dcm"))
    ds = pydicom.dcmread(get_testdata_file("MR_small.dcm"))
    ds.PatientAge = "033Y"
    ds.save_as(root / "b.dcm")
    with pytest.raises(InputError, match=r"attribute PatientAge differs within one study: a\.dcm has '', "
                                         r"b\.dcm has '033Y'"):
        dicom.extract(dicom.open_source(root), ["PatientAge"], "study")


def test_extract_refuses_unknown_and_binary_attributes(folder):
    source = dicom.open_source(folder)
    with pytest.raises(InputError, match="'PatientShoeSize': not a DICOM keyword"):
        dicom.extract(source, ["PatientShoeSize"], "file")
    with pytest.raises(InputError, match="attribute Rows: its value representation US is not text"):
        dicom.extract(source, ["Rows"], "file")


def test_proposed_roles():
    assert dicom.proposed_role("PatientName") is Role.IDENTIFYING
    assert dicom.proposed_role("PatientAge") is Role.QUASI_IDENTIFYING
    assert dicom.proposed_role("Modality") is Role.INSENSITIVE
    assert dicom.proposed_role("StudyDescription") is Role.IDENTIFYING  # X in the profile
    assert dicom.uid_only_identifier("StudyInstanceUID") and not dicom.uid_only_identifier("PatientID")
    assert [a.keyword for a in dicom.default_attributes("study")] == [
        "PatientID", "PatientName", "PatientBirthDate", "PatientSex", "PatientAge", "StudyDate",
        "AccessionNumber", "ReferringPhysicianName", "StudyInstanceUID"]


# ---- write-back ----------------------------------------------------------------------------------------
CELLS = {"PatientSex": "*", "PatientAge": "[20, 40)", "StudyDate": "2004", "InstitutionName": "Hospital"}


def _walk_check(before, after, key: bytes, written: set[int], path: str = "") -> int:
    """Every Basic Profile attribute of ``before`` (at any nesting level) checked in ``after`` against its
    action, independently of the module's own verify(). Returns how many attributes were checked."""
    checked = 0
    for element in before:
        tag = int(element.tag)
        where = f"{path}{element.tag}"
        if element.tag.is_private:
            assert tag not in after, f"private {where} kept"
            checked += 1
            continue
        entry = dicom.entry_for(tag)
        if tag in written or tag == PIXEL_DATA:
            continue
        if entry is None:
            if element.VR == "SQ" and tag in after:
                for i, (b, a) in enumerate(zip(element.value, after[tag].value, strict=True)):
                    checked += _walk_check(b, a, key, written=set(), path=f"{where}[{i}].")
            continue
        checked += 1
        action = entry.action
        if action == "X":
            assert tag not in after, f"{where} {entry.name}: X but present"
            continue
        assert tag in after, f"{where} {entry.name}: {action} but removed"
        got = after[tag]
        if element.VR == "SQ":
            if action == "Z":
                assert len(got.value) == 0, where
            else:
                for i, (b, a) in enumerate(zip(element.value, got.value, strict=True)):
                    checked += _walk_check(b, a, key, written=set(), path=f"{where}[{i}].")
        elif action == "Z":
            assert got.value in (None, "", b""), f"{where} {entry.name}: Z but {got.value!r}"
        elif action == "U":
            if element.value:
                values = element.value if element.VM > 1 else [element.value]
                expected = [dicom.pseudonym_uid(str(v), key) for v in values]
                assert (list(got.value) if got.VM > 1 else [got.value]) == expected, where
        elif action == "D":
            assert got.value not in (None, "", b""), f"{where} {entry.name}: D but empty"
            if element.value not in (None, "", b""):
                assert got.value != element.value, f"{where} {entry.name}: D but unchanged"
    return checked


@pytest.mark.parametrize("name", SAMPLES)
def test_every_profile_attribute_handled_pixels_identical_readable(name):
    original = sample_bytes(name)
    output, outcome = dicom.deidentify(original, CELLS, KEY)
    dicom.verify(original, output, CELLS, KEY)
    before = pydicom.dcmread(io.BytesIO(original))
    after = pydicom.dcmread(io.BytesIO(output))  # readable by pydicom
    written = {int(pydicom.datadict.tag_for_keyword(k)) for k in CELLS}
    # the test iterates the profile table: each of its attributes present in the original was handled
    present = [e for e in dicom.BASIC_PROFILE.values() if e.tag in before and e.tag not in written]
    for entry in present:
        assert outcome.actions[entry.tag] == entry.action
    assert _walk_check(before, after, KEY, written) >= len(present)
    assert after.get(PIXEL_DATA) is None and before.get(PIXEL_DATA) is None or \
        after[PIXEL_DATA].value == before[PIXEL_DATA].value
    assert after.file_meta.TransferSyntaxUID == before.file_meta.TransferSyntaxUID
    assert after.file_meta.MediaStorageSOPInstanceUID == dicom.pseudonym_uid(
        before.file_meta.MediaStorageSOPInstanceUID, KEY)
    assert after.PatientIdentityRemoved == "YES"
    for keyword, text in CELLS.items():  # the published cells, as written
        assert str(after[keyword].value) == text
    assert not any(e.tag.is_private for e in after.iterall())


def test_generalized_values_change_the_vr_only_when_needed():
    output, _ = dicom.deidentify(sample_bytes("CT_small.dcm"),
                                 {"StudyDate": "20040119", "PatientAge": "[20, 40)", "PatientSex": "F"}, KEY)
    ds = pydicom.dcmread(io.BytesIO(output))
    assert ds["StudyDate"].VR == "DA" and ds.StudyDate == "20040119"
    assert ds["PatientSex"].VR == "CS"
    assert ds["PatientAge"].VR == "LO" and ds.PatientAge == "[20, 40)"


def test_uids_are_remapped_consistently_across_the_files_of_a_study():
    outs = [pydicom.dcmread(io.BytesIO(dicom.deidentify(sample_bytes(n), {}, KEY)[0]))
            for n in ("MR_small.dcm", "MR_small_implicit.dcm", "MR_small_bigendian.dcm")]
    original = pydicom.dcmread(get_testdata_file("MR_small.dcm"))
    study = {o.StudyInstanceUID for o in outs}
    assert study == {dicom.pseudonym_uid(original.StudyInstanceUID, KEY)}
    assert {o.SeriesInstanceUID for o in outs} == {dicom.pseudonym_uid(original.SeriesInstanceUID, KEY)}
    assert {o.FrameOfReferenceUID for o in outs} == {dicom.pseudonym_uid(original.FrameOfReferenceUID, KEY)}
    assert original.StudyInstanceUID not in study
    other = pydicom.dcmread(io.BytesIO(dicom.deidentify(sample_bytes("MR_small.dcm"), {}, b"another key")[0]))
    assert other.StudyInstanceUID != outs[0].StudyInstanceUID
    assert len(outs[0].StudyInstanceUID) <= 64 and outs[0].StudyInstanceUID.startswith("2.25.")


def test_archive_from_published_rows(folder, tmp_path):
    source = dicom.open_source(folder)
    extraction = dicom.extract(source, ["PatientSex", "StudyDate"], "file")
    # rows 0 and 1 published (generalized), the others not: their files stay out of the zip
    cells = {0: {"PatientSex": "*", "StudyDate": "2004"}, 1: {"PatientSex": "*", "StudyDate": "2004"}}
    out = tmp_path / "out.zip"
    summary = dicom.write_archive(source, extraction.file_rows, cells, out, KEY)
    assert summary.files_written == 2 and summary.files_left_out == len(SAMPLES) - 2
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == ["dicom/00001.dcm", "dicom/00002.dcm"]
        for name in z.namelist():
            ds = pydicom.dcmread(io.BytesIO(z.read(name)))
            assert (ds.PatientSex, ds.StudyDate) == ("*", "2004")
    assert not list(tmp_path.glob(".out.zip.*"))


def test_a_published_uid_is_never_written_back():
    original = pydicom.dcmread(get_testdata_file("CT_small.dcm"))
    cells = {"StudyInstanceUID": str(original.StudyInstanceUID), "PatientSex": "*"}
    output, _ = dicom.deidentify(sample_bytes("CT_small.dcm"), cells, KEY)
    dicom.verify(sample_bytes("CT_small.dcm"), output, cells, KEY)
    ds = pydicom.dcmread(io.BytesIO(output))
    assert ds.StudyInstanceUID == dicom.pseudonym_uid(original.StudyInstanceUID, KEY)


def test_date_and_age_hierarchies_by_hand():
    from anonymizer_app.engine.dicom.headers import age_rows, date_rows, hierarchy_rows

    assert date_rows(["20040119", "19991231"]) == [["19991231", "1999-12", "1999", "1990-1999", "*"],
                                                   ["20040119", "2004-01", "2004", "2000-2009", "*"]]
    assert date_rows(["20040119", ""]) is None
    assert age_rows(["058Y", "003M"]) == [["003M", "[0, 5)", "[0, 10)", "[0, 20)", "*"],
                                          ["058Y", "[55, 60)", "[50, 60)", "[40, 60)", "*"]]
    assert hierarchy_rows("PatientAge", ["040Y"]) == [["040Y", "[40, 45)", "[40, 50)", "[40, 60)", "*"]]
    assert hierarchy_rows("PatientSex", ["F"]) is None
