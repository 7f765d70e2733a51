"""The hostile inputs of issue 25 that gave server errors or unclear messages, each refused with a clear message
naming the value, the file or the limit, and nothing stored or changed:

- a JSON body nested 100,000 deep on PATCH /api/v1/datasets/<id>/columns/ (RecursionError in the decoder), and
  the same on every JSON-reading view (the hierarchy editor's body and its ``path`` query), a body over the
  size limit, and the same depth in the file formats that hold JSON (Amnesia hierarchies, policies,
  m-invariance histories, editor node ids);
- a hierarchy JSON nested 3,000 deep;
- the intervals builder with width 1e308 and bounds ±1e308 (OverflowError), NaN, infinity, zero or negative
  widths, too many intervals;
- /api/v1/runs/check/ answering no problems for k=-1 and k=0 that the submit refuses;
- DICOM errors naming the internal staging-<hex>.zip;
- the dataset PATCH refusing "," and ";" without listing the delimiter names;
- the command line reading a binary hierarchy file as values not covered.
"""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from api_helpers import SMALL_CSV, api_for, set_roles, upload
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from anonymizer_app.engine import HierarchyError, InputError
from anonymizer_app.engine.io import json_limits
from anonymizer_app.engine.model import builders, formats, tree
from anonymizer_app.engine.model.hierarchy import decode_hierarchy, interval_hierarchy
from anonymizer_app.engine.republication.history import History
from anonymizer_app.models import Column, Dataset, Job
from hierarchy_editor.models import Hierarchy
from policies import policy_file

DEEP = 100_000


def _columns(dataset_id: int) -> list[tuple]:
    return list(Column.objects.filter(dataset_id=dataset_id).order_by("pk")
                .values_list("name", "role", "type", "hierarchy_id"))


@pytest.fixture
def api(user):
    return api_for(user)


@pytest.fixture
def ds(api):
    d = upload(api).json()
    set_roles(api, d["id"])
    return d


# ---- JSON bodies ---------------------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("body", [b"[" * DEEP, b'{"columns": ' + b"[" * DEEP, b'{"a":' * DEEP + b"1" + b"}" * DEEP])
def test_deep_json_body_on_columns_patch(api, ds, body):
    before = _columns(ds["id"])
    r = api.client.patch(f"/api/v1/datasets/{ds['id']}/columns/", body, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {api.key}")
    assert r.status_code == 400
    depth = json_limits.nesting_depth(body)
    assert r.json()["detail"] == (f"The request body: JSON nested {depth:,} levels deep (arrays and objects within "
                                  f"each other), more than the limit of 64.")
    assert _columns(ds["id"]) == before


@pytest.mark.django_db
def test_json_body_at_the_limit_is_parsed(api, ds):
    """64 levels pass the check and reach the serializer, which names the field."""
    body = b'{"columns": ' + b"[" * 63 + b"]" * 63 + b"}"
    r = api.client.patch(f"/api/v1/datasets/{ds['id']}/columns/", body, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {api.key}")
    assert r.status_code == 400
    assert r.json()["detail"].startswith("columns[0].non_field_errors: ") or "columns" in r.json()["detail"]
    assert "nested" not in r.json()["detail"]


@pytest.mark.django_db
def test_json_body_over_the_size_limit(api, ds, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    before = _columns(ds["id"])
    body = json.dumps({"columns": [{"name": "zip", "role": "insensitive", "pad": "x" * 2000}]})
    r = api.patch(f"/api/v1/datasets/{ds['id']}/columns/", json.loads(body))
    assert r.status_code == 413
    assert r.json()["detail"] == "The request body is larger than the limit of 1,000 bytes."
    assert _columns(ds["id"]) == before


@pytest.mark.django_db
def test_every_api_json_parser_is_bounded():
    """Every API view that reads JSON does it through the bounded parser (a view listing DRF's own JSONParser
    would read a deep body with the recursive decoder again)."""
    from django.urls import get_resolver
    from rest_framework.parsers import JSONParser
    from rest_framework.settings import api_settings

    from anonymizer_app.api.parsers import BoundedJSONParser

    def views(patterns):
        for p in patterns:
            if hasattr(p, "url_patterns"):
                yield from views(p.url_patterns)
            else:
                cls = getattr(p.callback, "cls", None)
                if cls is not None:
                    yield cls

    checked = 0
    for cls in set(views(get_resolver().url_patterns)):
        parsers = getattr(cls, "parser_classes", api_settings.DEFAULT_PARSER_CLASSES)
        for parser in parsers:
            assert not (issubclass(parser, JSONParser) and not issubclass(parser, BoundedJSONParser)), cls
        checked += 1
    assert checked > 30


@pytest.mark.django_db
def test_deep_json_in_the_hierarchy_editor(client_alice, user):
    from hierarchy_editor_helpers import make_hierarchy, start_session

    h = make_hierarchy(user)
    base = start_session(client_alice, h)
    r = client_alice.post(base + "op/", b"[" * 60_000, content_type="application/json")
    assert r.status_code == 400
    assert b"The request body: JSON nested 60,000 levels deep" in r.content
    r = client_alice.get(base + "nodes/", {"path": "[" * 5000})
    assert r.status_code == 400
    assert b"path: JSON nested 5,000 levels deep" in r.content
    assert Hierarchy.objects.get(pk=h.pk).content == h.content


@pytest.mark.django_db
def test_editor_moves_cannot_nest_deeper_than_the_level_limit(client_alice, user):
    """Moves one at a time could chain nodes thousands of levels deep (each move one more), past what the
    recursive JSON encoder and the draft's file can hold: a move beyond the level limit is refused as an add is."""
    from hierarchy_editor_helpers import make_hierarchy, op, start_session

    h = make_hierarchy(user)  # root > area > region > city: 4 levels, the limit below
    base = start_session(client_alice, h)
    with override_settings(HIERARCHY_MAX_LEVELS=4):
        r = op(client_alice, base, op="move", path=["Centre", "Lazio"], to=["North", "Lombardy"])
        assert r.status_code == 400
        assert "Moving Centre > Lazio under North > Lombardy would make 5 levels, more than the limit of 4." \
            in r.content.decode()
        r = op(client_alice, base, op="move", path=["North", "Piedmont"], to=["Centre"])
        assert r.status_code == 200, r.content
    assert Hierarchy.objects.get(pk=h.pk).content == h.content


# ---- files that hold JSON ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["[" * 3000 + "]" * 3000, '{"level1": ' * 3000 + "1" + "}" * 3000])
@pytest.mark.parametrize("filename", ["deep.json", "deep.txt"])
def test_deep_hierarchy_json_file(text, filename):
    with pytest.raises(HierarchyError) as exc:
        formats.read_hierarchy_text(text, "h", filename)
    assert str(exc.value) == (f"{filename}: JSON nested 3,000 levels deep (arrays and objects within each other), "
                              f"more than the limit of 64")


@pytest.mark.django_db
def test_deep_hierarchy_json_upload_through_the_api(api, ds):
    before = Hierarchy.objects.count()
    r = api.post("/api/v1/hierarchies/", {"file": SimpleUploadedFile("deep.json", b"[" * 3000 + b"]" * 3000),
                                          "dataset": ds["id"], "column": "zip"}, json=False)
    assert r.status_code == 400, r.content
    assert "deep.json: JSON nested 3,000 levels deep" in r.json()["detail"]
    assert "limit of 64" in r.json()["detail"]
    assert Hierarchy.objects.count() == before
    assert Column.objects.get(dataset_id=ds["id"], name="zip").hierarchy_id is None


def test_deep_policy_file():
    with pytest.raises(policy_file.PolicyError) as exc:
        policy_file.loads(b'{"columns": ' + b"[" * 5000 + b"]" * 5000 + b"}", "policy.json")
    assert str(exc.value) == ("policy.json: JSON nested 5,001 levels deep (arrays and objects within each other), "
                              "more than the limit of 64")


def test_deep_history_and_node_id():
    with pytest.raises(InputError) as exc:
        History.from_json("[" * 5000, "history.json")
    assert str(exc.value).startswith("history.json: JSON nested 5,000 levels deep")
    with pytest.raises(HierarchyError) as exc:
        tree.path_from_id("[" * 5000)
    assert str(exc.value) == f"node id {'[' * 80!r} is not a path"


def test_nesting_depth_is_measured_without_parsing():
    assert [json_limits.nesting_depth(t) for t in ("1", "[]", '{"a": "[[[["}', '["\\\\", [[]]]', "]]][[", '"\\"[["')] \
        == [0, 1, 1, 3, 2, 0]
    assert json_limits.nesting_depth(b"[" * 1_000_000) == 1_000_000
    json_limits.check_json("[" * 64 + "]" * 64, "x")
    with pytest.raises(json_limits.JsonLimitError):
        json_limits.check_json("[" * 65, "x")
    with pytest.raises(json_limits.JsonLimitError) as exc:
        json_limits.check_json("[1, 2]", "body", max_bytes=3)
    assert str(exc.value) == "body: 6 bytes of JSON, more than the limit of 3"


# ---- the intervals builder -----------------------------------------------------------------------------------
LIMIT = "beyond the limit of ±1e+300 for interval bounds and widths"
INTERVALS = [
    ({"width": 1e308, "lower": -1e308, "upper": 1e308}, f"lower -1e+308 is {LIMIT}"),
    ({"width": 1e308}, f"width 1e+308 is {LIMIT}"),
    ({"lower": 0, "upper": 1e308}, f"upper 1e+308 is {LIMIT}"),
    ({"lower": 0, "upper": 1e300, "width": 1e299}, None),
    ({"width": float("nan")}, "width must be a finite number, got nan"),
    ({"width": "inf"}, "width must be a finite number, got 'inf'"),
    ({"lower": float("nan"), "upper": 5, "width": 1}, "lower must be a finite number, got nan"),
    ({"width": 0}, "width must be a positive number, got 0.0"),
    ({"width": -5}, "width must be a positive number, got -5.0"),
    ({"lower": 0, "upper": 1e15, "width": 0.001},
     "width 0.001 lays 1e+18 intervals over [0, 1e+15), more than the limit of 100,000; choose a width of at "
     "least 1e+10"),
    ({"lower": -1e300, "upper": 1e300, "width": 1e-300},
     "width 1e-300 lays more than 1e+308 intervals over [-1e+300, 1e+300), more than the limit of 100,000; choose a width of "
     "at least 5e+295"),
]


@pytest.mark.parametrize(("options", "message"), INTERVALS)
def test_intervals_builder_parameters(options, message):
    if message is None:  # at the limit: laid out
        assert builders.build_intervals("age", pd.Series(["21", "28", "55"]), **options).level_count >= 3
        return
    with pytest.raises(InputError) as exc:
        builders.build_intervals("age", pd.Series(["21", "28", "55"]), **options)
    assert str(exc.value) == message


def test_intervals_builder_huge_values():
    values = pd.Series(["1e308", "-1e308", "5"])
    with pytest.raises(InputError) as exc:
        builders.build_intervals("age", values)
    assert str(exc.value) == ("column 'age': value '1e308' is beyond ±1e+300, the largest magnitude the intervals "
                              "builder lays out; set lower and upper (values outside them go to the '<lower' and "
                              "'>=upper' nodes)")
    h = builders.build_intervals("age", values, lower=0, upper=10, width=5)
    assert h.to_rows() == [["-1e308", "<0", "*"], ["5", "[5-10)", "*"], ["1e308", ">=10", "*"]]
    with pytest.raises(HierarchyError) as exc:
        interval_hierarchy("age", ["1e308", "-1e308", "5"])
    assert str(exc.value).startswith("column 'age': values from '-1e308' to '1e308' are beyond ±1e+300")


@pytest.mark.django_db
def test_intervals_builder_through_the_api(api, ds):
    before = (Hierarchy.objects.count(), _columns(ds["id"]))
    r = api.post("/api/v1/hierarchies/build/", {"dataset": ds["id"], "column": "age", "builder": "intervals",
                                                "options": {"width": 1e308, "lower": -1e308, "upper": 1e308}})
    assert r.status_code == 400, r.content
    assert LIMIT in r.json()["detail"]
    assert (Hierarchy.objects.count(), _columns(ds["id"])) == before


# ---- runs: the check refuses what the submit refuses ---------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("k", [-1, 0])
def test_run_check_refuses_what_the_submit_refuses(api, ds, k):
    body = {"dataset": ds["id"], "algorithm": "flash", "k": k}
    check = api.post("/api/v1/runs/check/", body)
    assert check.status_code == 200
    message = f"k must be at least 1, got {k}"
    assert check.json() == {"problems": [{"field": None, "message": message}]}
    submit = api.post("/api/v1/runs/", body)
    assert submit.status_code == 400
    assert submit.json() == {"detail": message, "problems": [{"field": None, "message": message}]}
    assert not Job.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("k", ["-1", "0"])
def test_web_run_check_refuses_what_the_run_page_refuses(client_alice, ds, k):
    form = {"algorithm": "flash", "k": k, "suppression_percent": "5", "suppressed_rows": "remove"}
    r = client_alice.post(f"/datasets/{ds['id']}/run/check/", form)
    assert r.status_code == 200
    assert r.json() == {"problems": [{"field": None, "message": f"k must be at least 1, got {k}"}]}
    r = client_alice.post(f"/datasets/{ds['id']}/run/", form)
    assert r.status_code == 200 and f"k must be at least 1, got {k}" in r.content.decode()
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_run_check_of_a_valid_run_stores_nothing(api, ds):
    r = api.post("/api/v1/runs/check/", {"dataset": ds["id"], "algorithm": "flash", "k": 2})
    assert r.status_code == 200 and r.json() == {"problems": []}
    assert not Job.objects.exists()


# ---- DICOM: the user's file name, never the staging file -----------------------------------------------------
@pytest.mark.django_db
def test_dicom_errors_name_the_uploaded_file(api):
    before = Dataset.objects.count()
    r = api.post("/api/v1/dicom/datasets/", {"archive": SimpleUploadedFile("scans.zip", b"not a zip at all"),
                                    "level": "file"}, json=False)
    assert r.status_code == 400, r.content
    detail = r.json()["detail"]
    assert "scans.zip: neither a zip file nor a folder of DICOM files" in detail
    assert "staging" not in detail
    assert Dataset.objects.count() == before


def _nested_dicom(depth: int) -> bytes:
    """A DICOM file whose ContentSequence holds an item holding a ContentSequence ... ``depth`` times
    (undefined lengths, explicit VR little endian), written byte by byte: pydicom would recurse to write it."""
    import struct

    from pydicom.dataset import Dataset as DicomDataset
    from pydicom.dataset import FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.7"
    meta.MediaStorageSOPInstanceUID = "1.2.3.4"
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = DicomDataset()
    ds.file_meta = meta
    ds.SOPClassUID, ds.SOPInstanceUID = meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID
    ds.PatientID, ds.PatientSex, ds.Modality = "P1", "F", "OT"
    out = io.BytesIO()
    ds.save_as(out, enforce_file_format=True)
    open_sequence = struct.pack("<HH", 0x0040, 0xA730) + b"SQ\x00\x00\xff\xff\xff\xff" + b"\xfe\xff\x00\xe0\xff\xff\xff\xff"
    close_sequence = b"\xfe\xff\x0d\xe0\x00\x00\x00\x00" + b"\xfe\xff\xdd\xe0\x00\x00\x00\x00"
    return out.getvalue() + open_sequence * depth + close_sequence * depth


@pytest.mark.django_db
@pytest.mark.parametrize("depth", [33, 3000])
def test_dicom_sequences_nested_too_deep(api, depth):
    import zipfile

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("ok.dcm", _nested_dicom(2))
        z.writestr("deep.dcm", _nested_dicom(depth))
    before = Dataset.objects.count()
    r = api.post("/api/v1/dicom/datasets/", {"archive": SimpleUploadedFile("scans.zip", archive.getvalue()),
                                                "level": "file", "attributes": ["PatientID"]}, json=False)
    assert r.status_code == 400, r.content
    assert r.json()["detail"] == ("deep.dcm: sequences nested more than 32 levels deep, the limit; nothing was "
                                  "stored")
    assert Dataset.objects.count() == before


# ---- the dataset's read format -------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("value", [",", ";"])
def test_dataset_patch_lists_the_delimiter_names(api, ds, value):
    before = Dataset.objects.get(pk=ds["id"]).delimiter
    r = api.patch(f"/api/v1/datasets/{ds['id']}/", {"delimiter": value})
    assert r.status_code == 400
    assert r.json()["detail"] == (f'delimiter: "{value}" is not a delimiter name; use one of comma (\',\'), '
                                  f"semicolon (';'), tab ('\\t'), pipe ('|')")
    assert Dataset.objects.get(pk=ds["id"]).delimiter == before


# ---- the command line: a binary hierarchy file ---------------------------------------------------------------
def test_cli_binary_hierarchy_file(tmp_path):
    (tmp_path / "small.csv").write_bytes(SMALL_CSV)
    (tmp_path / "zip.csv").write_bytes(bytes(range(128, 192)))  # 64 high bytes: no NUL, no C0 control
    out = tmp_path / "out.csv"
    with pytest.raises(CommandError) as exc:
        call_command("anonymize", str(tmp_path / "small.csv"), "--qi", "zip", "--k", "2", "--hierarchy",
                     f"zip={tmp_path / 'zip.csv'}", "--out", str(out), "--quiet",
                     stdout=io.StringIO(), stderr=io.StringIO())
    assert str(exc.value) == "--hierarchy zip: zip.csv: binary content, not a text hierarchy file"
    assert not out.exists()


def test_binary_detection_keeps_windows_text():
    text = "caf\x92;\x93north\x94;*\nbar;south;*\n".encode("latin-1")
    assert decode_hierarchy(text, "h.csv").startswith("caf\x92;")
