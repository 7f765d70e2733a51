"""DICOM in headless Chromium against pytest-django's live server: upload a folder of pydicom's sample
files (the folder picker, webkitdirectory), one row per study; set the roles, run Datafly k=2, and
download the de-identified files from the result page. Jobs run through Celery in eager mode, as in
test_browser_flow.py."""

from __future__ import annotations

import base64
import io
import zipfile

import browser_flow
import pydicom
import pytest
from dicom_helpers import SAMPLES, sample_bytes
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.models import Column, Dataset, Job
from anonymizer_app.services import exports

eager_celery = browser_flow.eager_celery  # the fixture
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _fetch_bytes(browser, url: str) -> tuple[int, bytes]:
    status, data = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.arrayBuffer().then(b => {"
        "  let s = ''; const a = new Uint8Array(b); for (let i = 0; i < a.length; i++) s += String.fromCharCode(a[i]);"
        "  done([r.status, btoa(s)]); }));", url)
    return status, base64.b64decode(data)


def test_folder_upload_to_dicom_download(browser, live_server, eager_celery, user, tmp_path):
    from conftest import ALICE_PASSWORD

    base = live_server.url
    wait = WebDriverWait(browser, 60)
    folder = tmp_path / "scans"
    (folder / "sub").mkdir(parents=True)
    for i, name in enumerate(SAMPLES):
        (folder / ("sub" if i % 2 else "") / name).write_bytes(sample_bytes(name))
    browser.get(f"{base}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys("alice")
    browser.find_element(By.NAME, "password").send_keys(ALICE_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait.until(lambda b: "/accounts/login/" not in b.current_url)

    browser.get(f"{base}/")
    browser.find_element(By.ID, "upload-dicom-link").click()
    wait.until(lambda b: b.current_url.endswith("/datasets/upload-dicom/"))
    browser.find_element(By.CSS_SELECTOR, "input[name=folder]").send_keys(str(folder))
    browser.find_element(By.CSS_SELECTOR, "#dicom-level input[value=study]").click()
    browser.find_element(By.ID, "dicom-upload").click()
    wait.until(lambda b: b.current_url.endswith("/columns/"))
    dataset = Dataset.objects.get(owner=user)
    assert dataset.n_rows == 7  # 8 files, 7 studies
    assert "8 files, one row per study" in browser.find_element(By.ID, "dicom-facts").text

    # choosing the level 'study' left the attributes that a study's files share
    names = list(Column.objects.filter(dataset=dataset).values_list("name", flat=True))
    assert "SOPInstanceUID" not in names and "SeriesInstanceUID" not in names and "PatientSex" in names
    # PatientSex and StudyDate as the QIs; the other proposed QIs made identifiers
    for column in Column.objects.filter(dataset=dataset, role="quasi-identifying"):
        role = "quasi-identifying" if column.name in ("PatientSex", "StudyDate") else "identifying"
        Select(browser.find_element(By.ID, f"col-{column.position}-role")).select_by_value(role)
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    wait.until(lambda b: Column.objects.filter(dataset=dataset, role="quasi-identifying").count() == 2)

    browser.get(f"{base}/datasets/{dataset.pk}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    k = browser.find_element(By.NAME, "k")
    k.clear()
    k.send_keys("2")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    wait.until(lambda b: "/result/" in b.current_url or b.find_elements(By.ID, "result-link"))
    if "/result/" not in browser.current_url:
        browser.find_element(By.ID, "result-link").click()
        wait.until(lambda b: "/result/" in b.current_url)
    job = Job.objects.get(dataset=dataset)
    assert job.status == "succeeded", job.message

    link = browser.find_element(By.ID, "download-dicom")
    assert link.text == "Download DICOM (zip)"
    status, content = _fetch_bytes(browser, link.get_attribute("href"))
    assert status == 200
    published = exports.result_frame(job.result, drop_suppressed=True)
    with zipfile.ZipFile(io.BytesIO(content)) as z:
        files = [pydicom.dcmread(io.BytesIO(z.read(n))) for n in z.namelist()]
    assert len(files) == 8
    cells = {(str(r["PatientSex"]), str(r["StudyDate"])) for _, r in published.iterrows()}
    assert {(str(f.PatientSex), str(f.StudyDate)) for f in files} <= cells
    assert all(not f.get("PatientBirthDate") and f.PatientIdentityRemoved == "YES" for f in files)
