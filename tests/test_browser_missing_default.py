"""In Chromium (issue 29, items 5 and 7): a table with blanks shows "(missing)" and the per-column missing counts
on its columns page; a default hierarchy's "Edit the tree" opens the editor on it in one click, whose sunburst
writes readable labels, and the way back restores the default. Every page axe-clean; screenshots in
var/screenshots/."""

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_browser_axe import _report, _violations

from anonymizer_app.services.datasets import create_dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"
LEVELS = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad", "Some-college",
          "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate"]


def table() -> bytes:
    rows = ["id,payor_group,education,age"]
    for i in range(120):
        payor = "" if i % 3 == 0 else ("Medicare" if i % 3 == 1 else "Private insurance (employer)")
        rows.append(f"{i},{payor},{LEVELS[i % len(LEVELS)]},{20 + (i * 7) % 60}")
    return ("\n".join(rows) + "\n").encode()


def test_missing_named_and_default_edited(browser, live_server, client, user):
    ds = create_dataset(user, table(), "clinic.csv")
    education = ds.columns.get(name="education")
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    wait = WebDriverWait(browser, 30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    found = {}

    path = f"/datasets/{ds.pk}/columns/"
    found[path] = _violations(browser, live_server.url + path)
    counts = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "td.missing-cells")]
    assert counts == ["0", "40", "0", "0"]  # 40 blank payor_group cells of 120
    chips = browser.find_elements(By.CSS_SELECTOR, ".samples .missing-value")
    assert [c.text for c in chips] == ["(missing)"]
    assert chips[0].value_of_css_property("font-style") == "italic"
    browser.save_screenshot(str(SHOTS / "columns-missing.png"))

    # the builder's live preview names the missing value too (its most frequent "value" here)
    payor = ds.columns.get(name="payor_group")
    path = f"/hierarchies/dataset/{ds.pk}/column/{payor.pk}/build/"
    browser.get(live_server.url + path)
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#builder-form[data-preview-ready]"))
    first = wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, ".preview-values tbody tr"))[0]
    assert first.text.split()[:2] == ["(missing)", "40"]
    assert first.find_element(By.CSS_SELECTOR, ".missing-value").text == "(missing)"
    found[path] = _violations(browser, live_server.url + path)

    path = f"/hierarchies/dataset/{ds.pk}/column/{education.pk}/"
    found[path] = _violations(browser, live_server.url + path)
    text = browser.find_element(By.ID, "default-description").text
    assert text.startswith("Ordered grouping: the values in their natural order (Preschool, 1st-4th, 5th-6th, …, "
                           "Masters, Prof-school, Doctorate), grouped 2 at a time")
    browser.save_screenshot(str(SHOTS / "hierarchy-default.png"))

    browser.find_element(By.ID, "edit-default").click()
    wait.until(lambda b: b.find_elements(By.ID, "replaces-default"))
    wait.until(lambda b: b.execute_script("return document.getElementById('sunburst').dataset.ready") == "1")
    found["editor"] = _violations(browser, browser.current_url)
    wait.until(lambda b: b.execute_script("return document.getElementById('sunburst').dataset.ready") == "1")
    sizes = browser.execute_script(
        "return Array.from(document.querySelectorAll('#sunburst text.slicetext')).filter(t => t.textContent)"
        ".map(t => parseFloat(getComputedStyle(t).fontSize))")
    assert sizes and min(sizes) >= 11, sizes  # written labels are readable, none shrunk to a speck
    browser.execute_script("document.getElementById('sunburst-card').scrollIntoView()")
    browser.save_screenshot(str(SHOTS / "hierarchy-edit-default.png"))

    browser.find_element(By.ID, "back-to-default").click()
    wait.until(lambda b: b.find_elements(By.ID, "default-description"))
    education.refresh_from_db()
    assert education.hierarchy_id is None
    assert not any(found.values()), "\n" + _report({k: v for k, v in found.items() if v})
