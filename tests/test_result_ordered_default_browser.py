"""The run form for a numeric sensitive column with many distinct values selects t-closeness with the ordered
distance on it (static/js/run_sensitive.js), says why, and undoes it for another sensitive column; a re-run's
form keeps the job's own models. In headless Chromium."""

import pytest
from anonymizer_helpers import make_dataset
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.engine import Role
from anonymizer_app.services import jobs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# 60 records: wage has 60 distinct decimals, grade 3 values
TEXT = "age,sex,wage,grade\n" + "".join(f"{20 + i % 30},{'FM'[i % 2]},{31.5 + i * 1.37:.4f},{'abc'[i % 3]}\n"
                                        for i in range(60))


def test_ordered_t_closeness_selected_for_a_continuous_sensitive_column(browser, live_server, client, user):
    ds = make_dataset(user, TEXT, "wage.csv", roles={"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
                                                     "wage": Role.SENSITIVE, "grade": Role.SENSITIVE})
    assert {c.name: (c.type, c.distinct_count) for c in ds.columns.all()}["wage"] == ("decimal", 60)
    html = client.get(f"/datasets/{ds.pk}/run/")  # anonymous: redirected, nothing leaks
    assert html.status_code == 302
    client.force_login(user)
    page = client.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert '<script id="continuous-sensitive" type="application/json">{"wage": 60}</script>' in page
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    browser.get(f"{live_server.url}/datasets/{ds.pk}/run/")
    wait = WebDriverWait(browser, 30)
    box = browser.find_element(By.NAME, "model:t:enabled")
    distance = Select(browser.find_element(By.NAME, "model:t:distance"))
    column = Select(browser.find_element(By.NAME, "model:t:column"))
    sensitive = Select(browser.find_element(By.ID, "id_sensitive"))
    note = browser.find_element(By.ID, "sensitive-ordered-note")
    assert sensitive.first_selected_option.get_attribute("value") == "wage"  # the first sensitive column
    wait.until(lambda b: box.is_selected())
    assert distance.first_selected_option.get_attribute("value") == "ordered"
    assert column.first_selected_option.get_attribute("value") == "wage"
    assert note.is_displayed() and note.text.startswith(
        "wage is numeric with 60 distinct values: t-closeness with the ordered distance is selected on it")
    assert browser.find_element(By.NAME, "model:t:t").is_displayed()  # the model's fields shown
    # another sensitive column (3 values): the selection is undone
    sensitive.select_by_value("grade")
    wait.until(lambda b: not box.is_selected())
    assert not note.is_displayed()
    sensitive.select_by_value("wage")
    wait.until(lambda b: box.is_selected())
    # a re-run's form keeps the job's models (none here)
    job = jobs.run_job(jobs.create_job(ds, "datafly", 2, 0.1, "wage"))
    browser.get(f"{live_server.url}/datasets/{ds.pk}/run/?from={job.pk}")
    wait.until(lambda b: b.execute_script("return document.readyState") == "complete")
    assert not browser.find_element(By.NAME, "model:t:enabled").is_selected()
    assert not browser.find_element(By.ID, "sensitive-ordered-note").is_displayed()
