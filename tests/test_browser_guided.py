"""The guided workflow in headless Chromium: the columns page's unsaved-changes warning, the run form's live
pre-flight check, and the hierarchy editor driven by the keyboard alone (arrow keys, cut and paste)."""

import json

import pytest
from anonymizer_helpers import make_dataset
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.models import Column
from hierarchy_editor.models import Hierarchy

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUSED = ("var a = document.activeElement; return a && a.matches('#tree li.node') ? "
           "a.querySelector(':scope > .node-row > .node-label').textContent : null;")
FIND_NODE = ("var path = arguments[0]; return Array.from(document.querySelectorAll('#tree li.node'))"
             ".find(function (li) { return li.dataset.path === path; }) || null;")


@pytest.fixture
def signed_in(browser, live_server, client, user):
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    return browser


def test_unsaved_roles_are_not_lost_on_the_way_to_the_run_form(signed_in, live_server, user):
    b = signed_in
    ds = make_dataset(user)
    note = ds.columns.get(name="note")
    b.get(f"{live_server.url}/datasets/{ds.pk}/columns/")
    wait = WebDriverWait(b, 20)
    panel = b.find_element(By.ID, "unsaved-columns")
    b.find_element(By.ID, "next-run").click()  # nothing changed: straight to the run form
    wait.until(lambda d: d.current_url.endswith(f"/datasets/{ds.pk}/run/"))
    b.back()
    wait.until(lambda d: d.find_elements(By.ID, f"col-{note.position}-role"))
    Select(b.find_element(By.ID, f"col-{note.position}-role")).select_by_value("quasi-identifying")
    b.find_element(By.ID, "next-run").click()
    panel = b.find_element(By.ID, "unsaved-columns")
    wait.until(lambda d: panel.is_displayed())
    assert b.current_url.endswith(f"/datasets/{ds.pk}/columns/")
    assert b.switch_to.active_element.get_attribute("id") == "unsaved-columns"
    b.find_element(By.ID, "save-and-run").click()
    wait.until(lambda d: d.current_url.endswith(f"/datasets/{ds.pk}/run/"))
    assert Column.objects.get(pk=note.pk).role == "quasi-identifying"


def test_the_run_form_names_a_problem_while_fields_change(signed_in, live_server, user):
    b = signed_in
    ds = make_dataset(user)
    b.get(f"{live_server.url}/datasets/{ds.pk}/run/")
    k = b.find_element(By.NAME, "k")
    k.clear()
    k.send_keys("9")
    box = b.find_element(By.ID, "preflight")
    WebDriverWait(b, 20).until(lambda d: box.is_displayed())
    assert "k=9 is larger than the dataset's 8 records: lower k to at most 8" in box.text
    k.clear()
    k.send_keys("2")
    WebDriverWait(b, 20).until(lambda d: not box.is_displayed())


def test_the_editor_moves_a_node_with_the_keyboard_alone(signed_in, live_server, user):
    b = signed_in
    h = Hierarchy.from_text(user, "letters", "a;g1;*\nb;g1;*\nc;g2;*\n", "letters.csv")
    h.save()
    b.get(f"{live_server.url}/hierarchies/{h.pk}/edit/")
    wait = WebDriverWait(b, 20)

    def node(path):
        return b.execute_script(FIND_NODE, json.dumps(path, separators=(",", ":")))

    wait.until(lambda d: node(["g1"]))
    # one node of the tree is in the tab order (roving focus): the root at first
    stops = b.find_elements(By.CSS_SELECTOR, '#tree li.node[tabindex="0"]')
    assert len(stops) == 1 and len(b.find_elements(By.CSS_SELECTOR, "#tree li.node")) == 3
    b.execute_script("arguments[0].focus()", stops[0])
    wait.until(lambda d: d.execute_script(FOCUSED) == "*")

    def press(*keys, then):
        ActionChains(b).send_keys(*keys).perform()
        wait.until(lambda d: d.execute_script(FOCUSED) == then)

    press(Keys.ARROW_DOWN, then="g1")
    ActionChains(b).send_keys(Keys.ARROW_RIGHT).perform()  # opens g1 in place
    wait.until(lambda d: node(["g1", "a"]))
    press(Keys.ARROW_DOWN, then="a")
    ActionChains(b).key_down(Keys.CONTROL).send_keys("x").key_up(Keys.CONTROL).perform()
    wait.until(lambda d: "Cut “a”" in d.find_element(By.ID, "editor-message").text)
    wait.until(lambda d: d.execute_script(FOCUSED) == "a")
    press(Keys.ARROW_DOWN, then="b")
    press(Keys.ARROW_DOWN, then="g2")
    ActionChains(b).key_down(Keys.CONTROL).send_keys("v").key_up(Keys.CONTROL).perform()
    wait.until(lambda d: node(["g2", "a"]))
    assert node(["g1", "a"]) is None
    assert "1 unsaved edit" in b.find_element(By.ID, "unsaved").text
    press(Keys.ARROW_LEFT, then="g2")  # g2 is open: closes it
    press(Keys.ARROW_LEFT, then="*")  # closed: up to its parent
    b.find_element(By.ID, "save").click()
    wait.until(lambda d: "Saved" in d.find_element(By.ID, "editor-message").text)
    h.refresh_from_db()
    assert "a;g2;*" in h.content and "b;g1;*" in h.content
