"""Issue 31's web flow in headless Chromium: upload an SPSS .sav with value labels, mark the key variables, the
sampling weight and the household, look at the individual risk and SUDA2, run a recoding + local suppression to
k = 3 and PRAM on one variable, read the result's SDC cards, download the release as Stata .dta (labels back on,
suppressed cells missing, every record's fk >= 3 with missing as wildcard, recounted here)."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest
from browser_flow import eager_celery  # noqa: F401
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.models import Dataset, Job

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
COLUMNS = [*KEYS, "age", "hhcivil", "ori_hid", "sampling_weight"]
VALUE_LABELS = {"urbrur": {1: "urban", 2: "rural"}, "sex": {1: "male", 2: "female"}}


def _labelled_sav(folder: Path) -> Path:
    data = pd.read_csv(REFERENCE / "testdata2.csv")[COLUMNS].astype(float)
    path = folder / "survey.sav"
    pyreadstat.write_sav(data, path, variable_value_labels=VALUE_LABELS,
                         column_labels={"urbrur": "Urban or rural area", "sex": "Sex of the person"})
    return path


def _fk(rows: list[tuple]) -> list[int]:
    """Every record's fk, a missing cell matching any value (brute force over all pairs)."""
    def agree(a, b) -> bool:
        return all(pd.isna(x) or pd.isna(y) or x == "" or y == "" or x == y for x, y in zip(a, b))
    return [sum(agree(r, s) for s in rows) for r in rows]


def test_sav_upload_risk_local_suppression_pram_and_dta(browser, live_server, client, user, tmp_path,
                                                        eager_celery):  # noqa: F811
    wait = WebDriverWait(browser, 120)
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})

    # upload the labelled .sav through the file picker
    browser.get(f"{live_server.url}/")
    browser.find_element(By.CSS_SELECTOR, "input[type=file][name=file]").send_keys(str(_labelled_sav(tmp_path)))
    browser.find_element(By.CSS_SELECTOR, "form[enctype='multipart/form-data'] button[type=submit]").click()
    wait.until(lambda b: "/datasets/" in b.current_url and "upload" not in b.current_url)
    ds = Dataset.objects.get(owner=user)
    assert "female" in browser.page_source  # the value labels are shown as the values

    # roles: seven key variables, the sampling weight, the household
    browser.get(f"{live_server.url}/datasets/{ds.pk}/columns/")
    roles = {**{k: "quasi-identifying" for k in KEYS}, "sampling_weight": "sampling weight",
             "ori_hid": "household id"}
    for column, role in roles.items():
        Select(browser.find_element(By.NAME, f"role:{column}")).select_by_value(role)
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    wait.until(lambda b: ds.columns.filter(role="household id").exists()
               and ds.columns.filter(role="quasi-identifying").count() == 7)

    # the risk page: individual risk with the weights and SUDA2
    browser.get(f"{live_server.url}/datasets/{ds.pk}/risk/")
    section = wait.until(lambda b: b.find_element(By.ID, "sdc-risk"))
    assert "individual-risk" in section.text.lower().replace(" ", "-") or "individual risk" in section.text.lower()
    assert "SUDA2" in section.text

    # the run: water one level up its hierarchy (a lattice node), k = 1 for the recoding, then local suppression
    # to k = 3 and PRAM on hhcivil
    browser.get(f"{live_server.url}/datasets/{ds.pk}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("full-domain")
    for name, value in {"option:full-domain:levels": "0,0,0,1,0,0,0", "k": "1", "suppression_percent": "0",
                        "sdc:local_suppression:k": "3", "sdc:pram:variables": "hhcivil", "sdc_seed": "31"}.items():
        box = browser.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)
    for name in ("sdc:local_suppression:enabled", "sdc:pram:enabled"):
        box = browser.find_element(By.NAME, name)
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
        if not box.is_selected():
            box.click()
    for box in browser.find_elements(By.NAME, "publish_as_is"):  # columns that look identifying, if any
        if not box.is_selected():
            box.click()
    # the page's pre-flight check (asked 400 ms after the last change) answered with no problem before the run is
    # posted: a check still running would write to the same SQLite database as the run
    checked = "return document.getElementById('preflight').getAttribute('data-checked')"
    wait.until(lambda b: b.execute_script(checked) is not None)
    settled = [None]

    def stable(b) -> bool:
        now = b.execute_script(checked)
        done = now == settled[0]
        settled[0] = now
        time.sleep(1.0)
        return done
    wait.until(stable)
    assert "hidden" in browser.find_element(By.ID, "preflight").get_attribute("class")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    # (the database is read only once the page has moved: the job runs inside the request, on the server's thread)
    wait.until(lambda b: "/jobs/" in b.current_url)
    job = Job.objects.get(dataset=ds)
    assert job.status == Job.SUCCEEDED, job.message
    browser.get(f"{live_server.url}/jobs/{job.pk}/result/")
    cards = wait.until(lambda b: b.find_element(By.ID, "sdc-result"))
    text = cards.text.lower()  # (the cards' labels may be styled in capitals)
    assert "k-anonymity holds" in text and "no k guarantee" in text
    assert "pram" in text and "local suppression" in text
    steps = job.result.report["sdc"]["steps"]
    assert [s["method"] for s in steps] == ["local_suppression", "pram"]
    assert steps[0]["check"]["holds"] and steps[0]["check"]["k"] == 3 and steps[1]["check"] is None

    # the release as Stata .dta: labels back on, every record's fk >= 3 with missing cells as wildcards
    r = client.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": "dta"})
    assert r.status_code == 200
    back, meta = pyreadstat.read_dta(io.BytesIO(b"".join(r.streaming_content) if r.streaming else r.content))
    assert len(back) == 93
    assert {int(k): v for k, v in meta.variable_value_labels["sex"].items()} == VALUE_LABELS["sex"]
    keys = back[KEYS].astype(object).where(back[KEYS].notna(), "")
    assert int((keys == "").to_numpy().sum()) == steps[0]["figures"]["suppressed cells"] > 0
    assert min(_fk([tuple(row) for row in keys.itertuples(index=False)])) >= 3
