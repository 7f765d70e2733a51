"""Headless Chromium: build an interval hierarchy for Adult's age, rename a node, drag a subtree, save,
and the exported ARX file is the expected one. Screenshots of the pages go to var/screenshots/."""

import json
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from anonymizer_app.services import datasets
from anonymizer_app.services.datasets import create_dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "anonymizer_app" / "demo_data" / "adult" / "adult.csv"
SHOTS = ROOT / "var" / "screenshots"

FIND_NODE = ("var path = arguments[0]; return Array.from(document.querySelectorAll('#tree li.node'))"
             ".find(function (li) { return li.dataset.path === path; }) || null;")
DRAG = """
var src = arguments[0].querySelector('.node-row'), dst = arguments[1].querySelector('.node-row');
var dt = new DataTransfer();
src.dispatchEvent(new DragEvent('dragstart', {bubbles: true, cancelable: true, dataTransfer: dt}));
dst.dispatchEvent(new DragEvent('dragover', {bubbles: true, cancelable: true, dataTransfer: dt}));
dst.dispatchEvent(new DragEvent('drop', {bubbles: true, cancelable: true, dataTransfer: dt}));
src.dispatchEvent(new DragEvent('dragend', {bubbles: true, cancelable: true, dataTransfer: dt}));
"""


def expected_arx(ages: list[int]) -> str:
    """Ages in [0-100) by 20, merged by 2 ([0-40), [40-80), [80-100), then [0-80), [80-100), then *);
    [0-40) renamed 'young', then [20-40) moved under [40-80)."""
    def row(age):
        l1 = f"[{age // 20 * 20}-{age // 20 * 20 + 20})"
        l2 = {0: "young", 1: "young", 2: "[40-80)", 3: "[40-80)", 4: "[80-100)"}[age // 20]
        if l1 == "[20-40)":
            l2 = "[40-80)"
        l3 = "[80-100)" if age >= 80 else "[0-80)"
        return f"{age};{l1};{l2};{l3};*"
    # depth-first order of the edited tree: the moved subtree comes last under its new parent
    order = [a for a in ages if a < 20] + [a for a in ages if 40 <= a < 80] + [a for a in ages if 20 <= a < 40] \
        + [a for a in ages if a >= 80]
    return "".join(row(a) + "\n" for a in order)


def test_build_rename_drag_save_export(browser, live_server, django_user_model):
    user = django_user_model.objects.create_user(username="editor", password="editor-Secret-1")
    dataset = create_dataset(user, ADULT.read_bytes(), "adult.csv")
    age = dataset.columns.get(name="age")
    wait = WebDriverWait(browser, 30)
    SHOTS.mkdir(parents=True, exist_ok=True)

    browser.get(f"{live_server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys("editor")
    browser.find_element(By.NAME, "password").send_keys("editor-Secret-1", Keys.ENTER)
    wait.until(lambda b: "/accounts/login/" not in b.current_url)

    # The builder: intervals of 20 from 0 to 100, merged by 2; the preview follows the form.
    browser.get(f"{live_server.url}/hierarchies/dataset/{dataset.pk}/column/{age.pk}/")
    browser.find_element(By.ID, "build-link").click()
    form = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, "#builder-form[data-preview-ready]"))
    for name, value in {"lower": "0", "upper": "100", "width": "20", "fanout": "2"}.items():
        box = form.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#builder-form[data-preview-ready]")
               and "[0-20)" in b.find_element(By.CSS_SELECTOR, ".preview-levels").text)
    counts = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".preview-levels td.level-count")]
    assert counts == ["72", "5", "3", "2", "1"]
    browser.save_screenshot(str(SHOTS / "hierarchy-build.png"))
    browser.find_element(By.ID, "build-save").click()
    wait.until(lambda b: b.current_url.endswith(f"/column/{age.pk}/"))
    age.refresh_from_db()
    h = age.hierarchy
    assert (h.leaves, h.height) == (72, 4)

    # The editor: open [0-80), rename [0-40) to 'young', drag [20-40) onto [40-80).
    browser.find_element(By.ID, "edit-link").click()

    def node(path):
        return browser.execute_script(FIND_NODE, json.dumps(path, ensure_ascii=False, separators=(",", ":")))

    def open_node(path):
        li = wait.until(lambda b: node(path))
        li.find_element(By.CSS_SELECTOR, ":scope > .node-row > .toggle").click()
        wait.until(lambda b: node(path).find_elements(By.CSS_SELECTOR, ":scope > ul.children > li.node"))

    open_node(["[0-80)"])
    open_node(["[0-80)", "[0-40)"])
    li = node(["[0-80)", "[0-40)"])
    li.find_element(By.CSS_SELECTOR, ":scope > .node-row > .node-label").click()  # select: shows the actions
    li.find_element(By.CSS_SELECTOR, ":scope > .node-row [data-action=rename]").click()
    box = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, "#tree input.inline-edit"))
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("young", Keys.ENTER)
    young = wait.until(lambda b: node(["[0-80)", "young"]))
    assert node(["[0-80)", "[0-40)"]) is None
    # still open after the rename
    wait.until(lambda b: node(["[0-80)", "young", "[20-40)"]))

    browser.execute_script(DRAG, node(["[0-80)", "young", "[20-40)"]), node(["[0-80)", "[40-80)"]))
    wait.until(lambda b: node(["[0-80)", "[40-80)", "[20-40)"]))
    assert node(["[0-80)", "young", "[20-40)"]) is None
    assert young is not None
    assert "2 unsaved edits" in browser.find_element(By.ID, "unsaved").text
    wait.until(lambda b: b.execute_script("return document.querySelectorAll('#sunburst .js-plotly-plot, "
                                          "#sunburst.js-plotly-plot').length") >= 1)

    browser.find_element(By.ID, "save").click()
    wait.until(lambda b: "Saved" in b.find_element(By.ID, "editor-message").text)
    browser.set_window_size(1400, 1300)
    browser.save_screenshot(str(SHOTS / "hierarchy-editor.png"))

    exported = browser.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {credentials: 'same-origin'}).then(function (r) { return r.text(); }).then(done);",
        f"/hierarchies/{h.pk}/export/arx/")
    ages = sorted(int(a) for a in datasets.load_frame(dataset)["age"].unique())
    assert exported == expected_arx(ages)
