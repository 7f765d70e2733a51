"""The run form's sensitive column with several sensitive columns (issue 29, item 1; docs/definitions.md
"Defaults of the run form"): a fresh form starts on the column with the most distinct values (on a tie the one on
the original scale: a column whose name holds another tied column's name, logwage beside wage, is passed over; then
the first), the models on a sensitive column start on it too, a submitted form with no column for the reports takes
its first sensitive model's column, and the model parameters read as whole numbers where they are (l "2", c "3")."""

import math
import re

import pytest
from anonymizer_helpers import make_dataset, queue_without_running

from anonymizer_app.forms import tied_sensitive_choice
from anonymizer_app.models import Job

pytestmark = pytest.mark.django_db

# three sensitive columns: a has 2 distinct values, b and c have 4 each (a tie that b, first, wins)
CSV = "age,zip,a,b,c\n" + "\n".join(f"{20 + i},{1000 + i % 3},{i % 2},{i % 4},{(i * 7) % 4}" for i in range(12)) + "\n"
ROLES = {"age": "quasi-identifying", "zip": "quasi-identifying", "a": "sensitive", "b": "sensitive",
         "c": "sensitive"}
SENSITIVE_MODELS = ("l", "t", "beta", "alphak", "ddisclosure")


def _selected(html: str, name: str) -> str:
    select = re.search(rf'<select name="{re.escape(name)}"[^>]*>(.*?)</select>', html, re.S)
    assert select, name
    chosen = re.findall(r'<option value="([^"]*)" selected>', select.group(1))
    assert len(chosen) == 1, (name, chosen)
    return chosen[0]


def _value(html: str, name: str) -> str:
    match = re.search(rf'<input type="number" name="{re.escape(name)}" value="([^"]*)"', html)
    assert match, name
    return match.group(1)


def test_a_fresh_form_starts_on_the_column_with_the_most_distinct_values(client_alice, user):
    ds = make_dataset(user, CSV, "three.csv", roles=ROLES)
    # counted here from the CSV, independently of the dataset's column statistics
    rows = [line.split(",") for line in CSV.splitlines()[1:]]
    distinct = {name: len({r[i] for r in rows}) for i, name in enumerate(["age", "zip", "a", "b", "c"])}
    assert (distinct["a"], distinct["b"], distinct["c"]) == (2, 4, 4)
    for path in (f"/datasets/{ds.pk}/run/", f"/datasets/{ds.pk}/compare/"):
        html = client_alice.get(path).content.decode()
        assert _selected(html, "sensitive") == "b", path
        for key in SENSITIVE_MODELS:
            assert _selected(html, f"model:{key}:column") == "b", (path, key)
            assert re.search(rf'<select name="model:{key}:column"[^>]*data-sensitive-model="{key}"', html), key


def test_l_and_c_read_as_whole_numbers(client_alice, user):
    ds = make_dataset(user, CSV, "three.csv", roles=ROLES)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert (_value(html, "model:l:l"), _value(html, "model:l:c")) == ("2", "3")
    assert _value(html, "model:t:t") == "0.2"


def test_no_reports_column_takes_the_first_sensitive_models_column(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user, CSV, "three.csv", roles=ROLES)
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {
        "algorithm": "flash", "k": 2, "suppression_percent": 50, "sensitive": "",
        "model:l:enabled": "on", "model:l:variant": "distinct", "model:l:l": "2", "model:l:column": "c"})
    assert r.status_code == 302, r.content.decode()[:2000]
    first = Job.objects.get()
    assert first.sensitive == "c"
    # a column given for the reports is kept
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {
        "algorithm": "flash", "k": 2, "suppression_percent": 50, "sensitive": "a",
        "model:l:enabled": "on", "model:l:variant": "distinct", "model:l:l": "2", "model:l:column": "c"})
    assert r.status_code == 302
    assert Job.objects.exclude(pk=first.pk).get().sensitive == "a"  # job ids are not ordered


def test_a_tie_goes_to_the_original_scale(client_alice, user):
    # ISLR Wage's case: logwage = log(wage) has as many distinct values as wage and comes first in the table; the
    # derived column (its name holds the other's) is passed over, so wage is the reports' and the models' column
    wages = [50.5, 75.25, 100.0, 120.75]
    rows = [f"{30 + i},{1000 + i % 3},{math.log(wages[i % 4])!r},{wages[i % 4]}" for i in range(12)]
    csv = "age,zip,logwage,wage\n" + "\n".join(rows) + "\n"
    roles = {"age": "quasi-identifying", "zip": "quasi-identifying", "logwage": "sensitive", "wage": "sensitive"}
    ds = make_dataset(user, csv, "wages.csv", roles=roles)
    cells = [line.split(",") for line in csv.splitlines()[1:]]
    assert len({r[2] for r in cells}) == len({r[3] for r in cells}) == 4  # the tie, counted from the CSV
    for path in (f"/datasets/{ds.pk}/run/", f"/datasets/{ds.pk}/compare/"):
        html = client_alice.get(path).content.decode()
        assert _selected(html, "sensitive") == "wage", path
        for key in SENSITIVE_MODELS:
            assert _selected(html, f"model:{key}:column") == "wage", (path, key)


@pytest.mark.parametrize("names, chosen", [
    (["b", "c"], "b"),  # no name holds another's: the dataset's order
    (["logwage", "wage"], "wage"),
    (["wage", "logwage"], "wage"),
    (["age_squared", "stage", "age"], "age"),  # both hold "age"
    (["Wage", "wage"], "Wage"),  # the same name but for case: neither is derived, the first
    (["log_income", "income", "income_band"], "income"),
])
def test_tied_sensitive_choice(names, chosen):
    assert tied_sensitive_choice(names) == chosen
