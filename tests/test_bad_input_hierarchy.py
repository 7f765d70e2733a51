"""The bad-input catalogue of hierarchies: upload (every format), the builders and the visual editor.

Each case asserts the status, the exact message a person reads (naming the file, line, level, column or
value) and that nothing was half-written: no Hierarchy row and no file under MEDIA_ROOT beyond what the
case is about (a conflicting upload is kept, on purpose, to be resolved without uploading it again).
"""

import html
import json
import os
import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from erasure_helpers import media
from hierarchy_editor_helpers import bind, make_dataset, make_hierarchy, op, start_session

from anonymizer_app.services import storage
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

UPLOAD = "/hierarchies/upload/"
AMNESIA_JSON = {"hierType": "distinct", "name": "city", "type": "string", "height": 2,
                "level1": {"*": ["North", "South"]}, "level2": {"North": ["Milan"], "South": ["Bari"]}}


def upload_error(r) -> str | None:
    m = re.search(r'<div class="form-errors upload-error" role="alert"><p>(.*?)</p></div>', r.content.decode(),
                  re.S)
    return html.unescape(m.group(1)) if m else None


def field_errors(r) -> list[str]:
    return [html.unescape(e) for e in re.findall(r"<li>(.*?)</li>", r.content.decode().split("<form", 1)[-1])
            if "characters" in e or "Choose" in e or "available" in e]


def form_errors(r) -> list[str]:
    return [html.unescape(e) for e in
            re.findall(r'<div class="form-errors"[^>]*>\s*(?:<p>(.*?)</p>\s*)+</div>', r.content.decode(), re.S)]


def post_file(client, filename: str, content: bytes, **fields):
    return client.post(UPLOAD, {"file": SimpleUploadedFile(filename, content), "on_conflict": "error",
                                "format": "auto", **fields})


# ---- upload: every format, refused with the file and the place named ------------------------------
UPLOADS = [
    ("empty.csv", b"", "empty.csv: the hierarchy is empty"),
    ("picture.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200), "picture.png: binary content, not a text "
                                                                        "hierarchy file"),
    ("noise.csv", bytes(range(1, 256)) * 4, "noise.csv: binary content, not a text hierarchy file"),
    ("ragged.csv", b"Rome;Lazio;*\nMilan;*\n", "ragged.csv, line 2: 2 values where the first line has 3 (every "
                                               "line must give a leaf and all its generalizations)"),
    ("blank.csv", b"Rome;;*\n", "blank.csv, line 1: an empty value"),
    ("quote.csv", b"\"Rome;Lazio;*\n", "quote.csv, line 1: a quoted value is not closed before the end of the "
                                       "file"),
    ("datafly.csv", b"Rome,Lazio,*\nMilan,*\n", "datafly.csv, line 2: 2 values where the first line has 3 (every "
                                                "line must give a leaf and all its generalizations)"),
    ("long.csv", ("R" * 5000 + ";x;*\n").encode(), "long.csv: a label of 5,000 characters at level 0 "
                                                   "('RRRRRRRRRRRRRRRRRRRRRRRRRRRRRR'…), more than the limit of 1,000"),
    ("deep.csv", (";".join(["a"] + [f"l{i}" for i in range(3000)]) + "\n").encode(),
     "deep.csv: 3001 levels (the values and 3000 generalizations), more than the limit of 64"),
    ("numbers.json", b"[1, 2, 3]", "numbers.json, line 1: expected an Amnesia JSON object with hierType and "
                                   "level1..levelN maps; got a list of numbers"),
    ("numbers.txt", b"[1, 2, 3]", "numbers.txt, line 1: expected an Amnesia JSON object with hierType and "
                                  "level1..levelN maps; got a list of numbers"),
    ("text.json", b'"Rome"', "text.json, line 1: expected an Amnesia JSON object with hierType and level1..levelN "
                             "maps; got a string"),
    ("broken.json", b'{"level1": ', "broken.json, line 1: not valid JSON (Expecting value)"),
    ("nolevels.json", b'{"hierType": "distinct"}', "nolevels.json: no level1..levelN maps"),
    ("gap.json", json.dumps({"level1": {"*": ["a"]}, "level3": {"a": ["b"]}}).encode(),
     "gap.json: levels must be level1..level2 without gaps, got level1, level3"),
    ("kids.json", json.dumps({"level1": {"*": "Rome"}}).encode(),
     "kids.json: level1, parent '*': children must be a non-empty list"),
    ("child.json", json.dumps({"level1": {"*": [{"a": 1}]}}).encode(),
     "child.json: level1, parent '*': child {'a': 1} is not a label"),
    # a label-keyed Amnesia file (JSON keys nodes by level, where a label may recur on another level)
    ("cycle.txt", b"distinct\nA has B\nB has A\n", "cycle.txt: no root: the parent links form a cycle"),
    ("header.txt", b"distinct\nfoo bar\n", "header.txt, line 2: expected 'PARENT has CHILD ...' or a header line "
                                           "(name, type, height), got 'foo bar'"),
    ("nochild.txt", b"distinct\n* has\n", "nochild.txt, line 2: '*' has no children listed"),
]


@pytest.mark.parametrize("name, content, message", UPLOADS, ids=[u[0] for u in UPLOADS])
def test_upload_is_refused_naming_the_file(client_alice, name, content, message):
    before = media()
    r = post_file(client_alice, name, content)
    assert r.status_code == 400
    assert upload_error(r) == message
    assert Hierarchy.objects.count() == 0
    assert media() == before


def test_a_value_with_two_parents_waits_for_a_resolution(client_alice):
    before = media()
    r = post_file(client_alice, "twice.csv", b"Rome;Lazio;*\nRome;Tuscany;*\nMilan;Lombardy;*\n")
    assert r.status_code == 400
    assert upload_error(r).startswith(
        "twice.csv: 1 value(s) have contradictory generalizations, so the file is not a tree: 'Rome' "
        "(lines 1, 2: Lazio;* vs Tuscany;*).")
    assert Hierarchy.objects.count() == 0
    added = media() - before
    assert len([p for p in added if p.endswith(".json")]) == 1  # the pending upload, kept to be resolved


def test_duplicate_labels_in_json_are_a_value_with_two_parents(client_alice):
    doc = {"level1": {"*": ["North", "South"]}, "level2": {"North": ["Rome"], "South": ["Rome"]}}
    r = post_file(client_alice, "dup.json", json.dumps(doc).encode())
    assert r.status_code == 400
    assert upload_error(r).startswith("dup.json: 1 value(s) have contradictory generalizations")
    assert Hierarchy.objects.count() == 0


def test_utf16_and_cr_only_files_are_read(client_alice, user):
    r = post_file(client_alice, "utf16.csv", "Città;Nord;*\nBari;Sud;*\n".encode("utf-16"))
    assert r.status_code == 302
    r = post_file(client_alice, "mac.csv", b"Rome;Centre;*\rBari;South;*\r")
    assert r.status_code == 302
    got = {h.source_name: sorted(h.to_engine().leaves) for h in Hierarchy.objects.filter(owner=user)}
    assert got == {"utf16.csv": ["Bari", "Città"], "mac.csv": ["Bari", "Rome"]}


def test_a_name_over_the_limit_is_refused(client_alice):
    r = post_file(client_alice, "a.csv", b"Rome;*\n", name="n" * 300)
    assert r.status_code == 400
    assert "Ensure this value has at most 200 characters (it has 300)." in r.content.decode()
    assert Hierarchy.objects.count() == 0


def test_no_file_and_a_forged_pending_token(client_alice):
    r = client_alice.post(UPLOAD, {"on_conflict": "error"})
    assert r.status_code == 400 and "Choose a hierarchy file to upload." in r.content.decode()
    r = client_alice.post(UPLOAD, {"on_conflict": "lift", "pending": "0" * 32})
    assert r.status_code == 400
    assert "The uploaded file is no longer available; please upload it again." in r.content.decode()
    assert Hierarchy.objects.count() == 0


def test_long_derived_names_are_shortened_to_fit(client_alice, user):
    """Names we derive (a 250-character file name; a 255-character column in a 200-character dataset) fit
    the 200-character column instead of failing on PostgreSQL."""
    from anonymizer_app.services.datasets import create_dataset

    r = post_file(client_alice, "a" * 246 + ".csv", b"Rome;*\n")
    assert r.status_code == 302
    dataset = create_dataset(user, ("x" * 255 + ",b\n1,2\n3,4\n").encode(), "t.csv", name="d" * 200)
    column = dataset.columns.get(position=0)
    r = client_alice.post(f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/upload/",
                          {"file": SimpleUploadedFile("h.csv", b"1;*\n3;*\n"), "on_conflict": "error"})
    assert r.status_code == 302
    r = client_alice.post(f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/build/",
                          {"builder": "grouping", "order": "numeric", "fanout": "2"})
    assert r.status_code == 302
    names = sorted(Hierarchy.objects.values_list("name", flat=True), key=len)
    assert [len(n) for n in names] == [200, 200, 200]
    assert sorted(names) == ["a" * 199 + "…", "x" * 199 + "…", "x" * 199 + "…"]


def test_an_uncovered_value_is_a_warning_not_an_error(client_alice, user):
    dataset = make_dataset(user)
    city = dataset.columns.get(name="city")
    r = client_alice.post(f"/hierarchies/dataset/{dataset.pk}/column/{city.pk}/upload/",
                          {"file": SimpleUploadedFile("h.csv", b"Rome;*\nMilan;*\nTurin;*\nNaples;*\n"),
                           "on_conflict": "error"}, follow=True)
    assert r.status_code == 200
    assert ("1 value(s) of column 'city' are not covered by the hierarchy: a run will fail until they are. "
            "They are listed below.") in html.unescape(r.content.decode())


# ---- builders -----------------------------------------------------------------------------------------
NOT_A_NUMBER = ("column 'city': value 'Rome' is not a number: the numeric intervals builder cannot use this "
                "column; builders that fit: Ordered grouping, Masking, Data-driven grouping for k, Value → *")
BUILDS = [
    ("city", {"builder": "intervals", "width": "10", "outside": "nodes"}, NOT_A_NUMBER),
    ("city", {"builder": "dates", "levels": "year"},
     "column 'city': value 'Rome' is not a date in a known format (no value of the column is): the dates builder "
     "cannot use this column; builders that fit: Ordered grouping, Masking, Data-driven grouping for k, Value → *"),
    ("age", {"builder": "intervals", "width": "-5", "outside": "nodes"}, "Width: width must be at least 0, got -5.0"),
    ("age", {"builder": "intervals", "width": "0", "outside": "nodes"}, "width must be a positive number, got 0.0"),
    ("age", {"builder": "intervals", "width": "nan", "outside": "nodes"}, "Width: width must be a number, got 'nan'"),
    ("age", {"builder": "intervals", "fanout": "0", "outside": "nodes"},
     "fanout must be at least 2 on every level, got '0'"),
    ("age", {"builder": "intervals", "fanout": "2,x", "outside": "nodes"},
     "fanout must be an integer or integers separated by commas, got '2,x'"),
    ("age", {"builder": "intervals", "fanout": "99999999999999999999", "outside": "nodes"},
     "fanout must be at most 1,000,000 on every level and list at most 64 levels, got '99999999999999999999'"),
    ("age", {"builder": "intervals", "lower": "60", "upper": "20", "outside": "nodes"},
     "upper (20) must be greater than lower (60)"),
    ("age", {"builder": "intervals", "lower": "20", "upper": "60", "width": "1e-9", "outside": "nodes"},
     "width 1e-09 lays 40,000,000,000 intervals over [20, 60), more than the limit of 100,000; choose a width of "
     "at least 0.0005"),
    ("age", {"builder": "intervals", "lower": "0", "upper": "60", "outside": "refuse", "width": "10"}, None),
    ("city", {"builder": "masking", "mask": "*", "levels": "9"},
     "levels 9 masks more characters than the values of column 'city' have: the longest, 'Naples', has 6; choose "
     "at most 6 levels"),
    ("city", {"builder": "masking", "mask": "**"}, "mask must be one character, got '**'"),
    ("city", {"builder": "grouping", "order": "custom", "custom_order": "", "fanout": "2"},
     "column 'city': the custom order is empty; list every value of the column"),
    ("city", {"builder": "grouping", "order": "custom", "custom_order": "Rome\nMilan", "fanout": "2"},
     "column 'city': the custom order lacks 3 value(s) of the column: 'Turin', 'Naples', 'Bari'"),
    ("city", {"builder": "data-driven", "k": "0"}, "K: k must be at least 1, got 0"),
]


@pytest.mark.parametrize("column, data, message", BUILDS, ids=[f"{b[1]['builder']}-{i}" for i, b in
                                                                 enumerate(BUILDS)])
def test_builder_preview_and_save_refuse(client_alice, user, column, data, message):
    dataset = make_dataset(user)
    col = dataset.columns.get(name=column)
    url = f"/hierarchies/dataset/{dataset.pk}/column/{col.pk}/build/"
    if message is None:  # every value inside [lower, upper): nothing to refuse
        assert client_alice.post(url + "preview/", data).status_code == 200
        return
    before = media()
    r = client_alice.post(url + "preview/", data)
    assert r.status_code == 400
    assert r.json()["error"] == message
    r = client_alice.post(url, {**data, "hierarchy_name": "h"})
    assert r.status_code == 400
    assert html.unescape(re.search(r'build-error" role="alert"><p>(.*?)</p>', r.content.decode(), re.S).group(1)) \
        == message
    assert Hierarchy.objects.count() == 0 and media() == before


def test_the_intervals_tab_on_a_text_column_names_the_builders_that_fit(client_alice, user):
    dataset = make_dataset(user)
    city = dataset.columns.get(name="city")
    r = client_alice.get(f"/hierarchies/dataset/{dataset.pk}/column/{city.pk}/build/", {"builder": "intervals"})
    assert r.status_code == 200
    assert NOT_A_NUMBER in html.unescape(r.content.decode())


def test_a_builder_name_over_the_limit_is_refused(client_alice, user):
    dataset = make_dataset(user)
    city = dataset.columns.get(name="city")
    r = client_alice.post(f"/hierarchies/dataset/{dataset.pk}/column/{city.pk}/build/",
                          {"builder": "grouping", "order": "alphabetical", "fanout": "2", "hierarchy_name": "n" * 300})
    assert r.status_code == 400
    assert "Name in your library: at most 200 characters (it has 300)" in r.content.decode()
    assert Hierarchy.objects.count() == 0


def test_an_unknown_builder_is_404(client_alice, user):
    dataset = make_dataset(user)
    city = dataset.columns.get(name="city")
    r = client_alice.post(f"/hierarchies/dataset/{dataset.pk}/column/{city.pk}/build/preview/", {"builder": "nope"})
    assert r.status_code == 404 and r.json() == {"error": "Not found."}


# ---- the visual editor ----------------------------------------------------------------------------------
EDITS = [
    ({"op": "explode"}, "Unknown operation 'explode'; use one of rename, add, delete, move, pad, undo, redo."),
    ({"op": "rename", "path": ["North"], "label": 5}, "label must be text, got 5."),
    ({"op": "add", "path": ["North"], "label": None}, "label must be text, got null."),
    ({"op": "rename", "path": ["North"], "label": "x" * 2000}, "label has 2,000 characters, more than the limit of "
                                                               "1,000."),
    ({"op": "rename", "path": ["North"], "label": ""}, "empty label under '*': every node needs a label"),
    ({"op": "delete", "path": ["Nowhere"]}, "no node 'Nowhere' under the root"),
    ({"op": "delete", "path": [1, 2]}, "path must be a list of labels."),
    ({"op": "move", "path": ["North"], "to": ["North", "Lombardy"]},
     "cannot move 'North' under its own descendant 'Lombardy'"),
    ({"op": "move", "path": ["North"], "to": 5}, "to must be a list of labels."),
    ({"op": "delete", "path": ["North"], "children": "x"}, "children must be one of move, delete, got 'x'"),
    ({"op": "rename", "path": ["North"], "label": "South"},
     "cannot rename 'North' to 'South': '*' already has a child 'South'"),
    ({"op": "undo"}, "Nothing to undo."),
]


@pytest.fixture
def session(client_alice, user):
    dataset = make_dataset(user)
    h = make_hierarchy(user)
    bind(dataset, "city", h)
    return h, start_session(client_alice, h)


def _state(h) -> tuple:
    h.refresh_from_db()
    return h.content, media()


@pytest.mark.parametrize("body, message", EDITS, ids=[f"{e[0]['op']}-{i}" for i, e in enumerate(EDITS)])
def test_editor_refuses_an_edit(client_alice, session, body, message):
    h, base = session
    before = _state(h)
    r = op(client_alice, base, **body)
    assert r.status_code == 400
    assert r.json()["error"] == message
    assert _state(h) == before


@pytest.mark.parametrize("body, message", [
    (b"\xff\xfe", "The request body is not JSON."),
    (b"[1]", "The request body must be a JSON object."),
    (json.dumps({"op": "add", "path": [], "label": "y" * 70000}).encode(),
     "The request body is 70,038 bytes, more than the editor's limit of 65,536."),
], ids=["not-json", "array", "oversized"])
def test_editor_refuses_a_body(client_alice, session, body, message):
    h, base = session
    before = _state(h)
    for endpoint in ("op/", "save/"):
        r = client_alice.post(base + endpoint, body, content_type="application/json")
        assert r.status_code == 400
        assert r.json()["error"] == message
    assert _state(h) == before


def test_editor_caps_nodes_and_levels(client_alice, session, settings):
    h, base = session
    settings.HIERARCHY_EDITOR_MAX_NODES = 11  # the cities tree has 1 + 3 + 5 + 5 = 14 nodes
    r = op(client_alice, base, op="add", path=["North"], label="Veneto")
    assert r.status_code == 400
    assert r.json()["error"] == "The tree has 14 nodes, the editor's limit; delete some before adding more."
    settings.HIERARCHY_EDITOR_MAX_NODES = 1000
    settings.HIERARCHY_MAX_LEVELS = 3
    r = op(client_alice, base, op="add", path=["North", "Lombardy"], label="Brescia")
    assert r.status_code == 400
    assert r.json()["error"] == "A node under North > Lombardy would make 4 levels, more than the limit of 3."


def test_editor_search_and_paging_refuse_bad_queries(client_alice, session):
    h, base = session
    r = client_alice.get(base + "search/", {"q": "x" * 201})
    assert r.status_code == 400
    assert r.json()["error"] == "The search text has 201 characters; search for at most 200."
    r = client_alice.get(base + "nodes/", {"path": "{"})
    assert r.status_code == 400 and r.json()["error"] == "path must be a JSON list of labels."
    r = client_alice.get(base + "nodes/", {"path": '["Nowhere"]'})
    assert r.status_code == 404
    assert r.json()["error"] == "No node at Nowhere (it was moved, renamed or deleted)."


def test_another_users_session_is_404(client, user, other_user, session):
    h, base = session
    client.force_login(other_user)
    for path in ("", "nodes/", "checks/"):
        assert client.get(base + path).status_code == 404
    assert op(client, base, op="undo").status_code == 404


def _drafts() -> set[str]:
    return {p for p in media() if p.startswith("hierarchy-drafts/") and p.count("/") == 2 and p.endswith("/")}


def test_opening_the_editor_again_writes_nothing(client_alice, user):
    h = make_hierarchy(user)
    first = start_session(client_alice, h)
    files = media()
    assert [start_session(client_alice, h) for _ in range(3)] == [first] * 3
    assert media() == files
    assert op(client_alice, first, op="add", path=["North"], label="Veneto").status_code == 200
    second = start_session(client_alice, h)  # the first has an edit: a new session
    assert second != first and len(_drafts()) == 2


def test_drafts_are_capped_per_user(client_alice, user, settings):
    settings.HIERARCHY_DRAFTS_PER_USER = 2
    hs = [make_hierarchy(user, name=f"h{i}") for i in range(4)]
    edited = start_session(client_alice, hs[0])
    assert op(client_alice, edited, op="add", path=["North"], label="Veneto").status_code == 200
    for h in hs[1:]:
        start_session(client_alice, h)
    kept = _drafts()
    assert len(kept) == 2
    # the untouched ones go first: the edited session and the newest remain
    assert {p.split("-")[2] for p in kept} == {str(hs[0].pk), str(hs[3].pk)}
    settings.HIERARCHY_DRAFT_BYTES_PER_USER = 100
    r = client_alice.get(f"/hierarchies/{hs[1].pk}/edit/", follow=True)

    def node(label, *children):
        return {"label": label, "children": list(children)}

    tree = node("*", node("Centre", node("Lazio", node("Rome"))),
                node("North", node("Lombardy", node("Milan")), node("Piedmont", node("Turin"))),
                node("South", node("Campania", node("Naples")), node("Puglia", node("Bari"))))
    size = len(json.dumps(tree, separators=(",", ":")))
    assert size == 444
    assert (f"This hierarchy cannot be edited: the edited tree takes {size} bytes, more than the 100 bytes an "
            f"account may keep in editing sessions (HIERARCHY_DRAFT_BYTES_PER_USER)") in html.unescape(
                r.content.decode())
    assert r.redirect_chain == [(f"/hierarchies/{hs[1].pk}/", 302)]



@pytest.mark.parametrize("column", ["abc", "1e309", "²", "9" * 30])
def test_a_column_that_is_not_an_id_opens_the_editor_on_the_bound_one(client_alice, user, column):
    dataset = make_dataset(user)
    h = make_hierarchy(user)
    bound = bind(dataset, "city", h)
    r = client_alice.get(f"/hierarchies/{h.pk}/edit/", {"column": column})
    assert r.status_code == 302
    html_page = client_alice.get(r["Location"]).content.decode()
    assert f"Checks and sizes use column <strong>{dataset.name} / {bound.name}</strong>" in html_page


# ---- no server error, whatever a field holds ---------------------------------------------------------
HOSTILE = ["", "-1", "1e309", "nan", "9" * 400, "x" * 5000, "\x00", "²", "[]", "<script>"]


@pytest.mark.parametrize("value", HOSTILE, ids=[f"value{i}" for i in range(len(HOSTILE))])
def test_no_field_of_the_hierarchy_pages_gives_a_server_error(client_alice, user, other_user, value):
    client_alice.raise_request_exception = False
    dataset = make_dataset(user)
    h = make_hierarchy(user)
    bind(dataset, "city", h)
    base = start_session(client_alice, h)
    statuses = []
    for column in dataset.columns.filter(name__in=("age", "city")):
        url = f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/"
        for builder in ("intervals", "grouping", "masking", "dates", "data-driven"):
            data = {"builder": builder, "hierarchy_name": value, **{name: value for name in (
                "lower", "upper", "width", "fanout", "outside", "order", "custom_order", "from_right", "mask",
                "levels", "format", "k")}}
            statuses += [client_alice.post(url + "build/preview/", data).status_code,
                         client_alice.post(url + "build/", data).status_code]
        statuses.append(client_alice.post(url + "select/", {"hierarchy": value}).status_code)
    statuses.append(client_alice.post(UPLOAD, {"file": SimpleUploadedFile("a.csv", b"Rome;*\n"), "format": value,
                                               "on_conflict": value, "name": value, "pending": value}).status_code)
    statuses.append(client_alice.get(base + "nodes/", {"path": value, "offset": value, "limit": value,
                                                       "around": value}).status_code)
    statuses.append(client_alice.get(base + "sunburst/", {"depth": value}).status_code)
    for body in ({"op": "rename", "path": value, "label": value}, {"op": "add", "path": [value], "label": value},
                 {"op": "move", "path": ["North"], "to": value}, {"op": value}):
        statuses.append(op(client_alice, base, **body).status_code)
    statuses.append(client_alice.post(base + "save/", json.dumps({"pad": value}),
                                      content_type="application/json").status_code)
    assert max(statuses) < 500, statuses


def test_an_edit_past_the_bytes_cap_gives_up_undo_states_then_is_refused(client_alice, user, settings):
    h = make_hierarchy(user)
    base = start_session(client_alice, h)
    folder = next(p for p in _drafts())
    settings.HIERARCHY_DRAFT_BYTES_PER_USER = 1000  # the first state (444 bytes) and one more do not fit
    r = op(client_alice, base, op="add", path=["North"], label="Veneto")
    assert r.status_code == 200
    assert r.json()["state"] == {"can_undo": False, "can_redo": False, "edits": 1}  # the undo state went
    settings.HIERARCHY_DRAFT_BYTES_PER_USER = 300
    r = op(client_alice, base, op="add", path=["North"], label="Liguria")
    assert r.status_code == 400
    size = 444 + sum(len(json.dumps({"label": x, "children": []}, separators=(",", ":"))) + 1
                     for x in ("Veneto", "Liguria"))  # two more children of North, after a comma each
    assert r.json()["error"] == (f"The edit was not kept: the edited tree takes {size} bytes, more than the 300 "
                                 f"bytes an account may keep in editing sessions (HIERARCHY_DRAFT_BYTES_PER_USER).")
    assert folder in _drafts()
    assert "Liguria" not in json.dumps(client_alice.get(base + "nodes/", {"path": '["North"]'}).json())


def test_the_builders_a_column_cannot_use_are_marked(client_alice, user):
    dataset = make_dataset(user)
    city = dataset.columns.get(name="city")
    page = html.unescape(client_alice.get(f"/hierarchies/dataset/{dataset.pk}/column/{city.pk}/build/").content.decode())
    tabs = dict(re.findall(r'<a href="\?builder=([a-z-]+)" class="([^"]*)"', page))
    # the page opens on the column's default builder (cities: value -> *, engine.model.defaults)
    assert tabs == {"intervals": " unfit", "grouping": "", "masking": "", "dates": " unfit", "data-driven": "",
                    "quantiles": " unfit", "flat": "active"}
    assert f'title="{NOT_A_NUMBER}"' in page


def test_uploads_waiting_for_a_resolution_are_capped_per_user(client_alice, settings):
    settings.HIERARCHY_PENDING_PER_USER = 2
    tokens = []
    for i in range(4):
        r = post_file(client_alice, f"twice{i}.csv", b"Rome;Lazio;*\nRome;Tuscany;*\n")
        assert r.status_code == 400
        tokens.append(re.search(r'name="pending" value="([0-9a-f]{32})"', r.content.decode()).group(1))
        for path in (storage.media_root() / "pending-hierarchies").glob(f"*-{tokens[-1]}.json"):
            stamp = time.time() - 60 + i  # uploaded in this order, whatever the clock's grain
            os.utime(path, (stamp, stamp))
    pending = {p.rsplit("-", 1)[1][:-5] for p in media() if p.startswith("pending-hierarchies/") and p.endswith(".json")}
    assert pending == set(tokens[2:])  # the newest two
    r = client_alice.post(UPLOAD, {"on_conflict": "lift", "pending": tokens[0]})
    assert r.status_code == 400
    assert "The uploaded file is no longer available; please upload it again." in r.content.decode()
    r = client_alice.post(UPLOAD, {"on_conflict": "lift", "pending": tokens[3]})
    assert r.status_code == 302
