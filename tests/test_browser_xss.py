"""Stored XSS in headless Chromium: a table whose column names, cell values, dataset name, file name and
hierarchy labels (an uploaded hierarchy file, a built one and a node renamed in the editor) are script
payloads, shown on every page of the product, with plotly hovers, and no payload ever runs.

Each payload, if it ran, would set window.__xss, change document.title to "pwned" or open an alert.
The browser ignores any Content-Security-Policy for the main pass (DevTools Page.setBypassCSP), so the
test proves the escaping alone keeps the payloads inert; a short second pass with the policy enforced
(when the server sends one) checks that no payload even tried to run and that our own scripts raise no
violation. Each page must also show the payload text literally (escaped, not stripped).

Jobs run synchronously inside the live server's request (run_jobs_synchronously), as in
test_browser_lattice.py.
"""

import csv
import io
import json

import pytest
from anonymizer_helpers import run_jobs_synchronously
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.models import Dataset, Job
from hierarchy_editor.models import Hierarchy

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "xss-Secret-42"

# Column names: identifying, two quasi-identifiers (A: uploaded hierarchy, B: built one), sensitive.
COL_ID = "{{7*7}}${7*7}"
COL_A = "<img src=x onerror=\"window.__xss='col-a'\">"
COL_B = "\"><a href=\"javascript:window.__xss='col-b'\">b</a>"
COL_S = "<a href=\"javascript:window.__xss='col-s'\">s</a>"
# Cell values of A, B and S: HTML, javascript: URLs, plotly's own pseudo-HTML, JSON/JS-string breakouts.
VALUES_A = ["<script>window.__xss='va'</script>", "javascript:window.__xss='vjs'", "<b>bold</b>", "plain-a"]
VALUES_B = ["<a href=\"javascript:window.__xss='vb'\">pb</a>", "<img src=x onerror=\"document.title='pwned'\">",
            "'-alert(1)-'"]
VALUES_S = ["<svg onload=\"window.__xss='vs'\">", "<a href=\"javascript:window.__xss='vs1'\">{{7*7}}</a>", "</script><script>window.__xss='vs2'</script>"]
# Hierarchy labels of A (uploaded file) and the node renamed in the editor.
LABEL_1 = "<a href=\"javascript:window.__xss='h1'\">g1</a>"
LABEL_2 = "<img src=x onerror=\"window.__xss='h2'\">"
RENAMED = "<svg/onload=\"window.__xss='edit'\">"
DATASET_NAME = "\"><img src=x onerror=\"window.__xss='ds'\"><b>{{7*7}}</b>"
FILE_NAME = "<img src=x onerror=window.__xss='file'>.csv"
HIERARCHY_NAME = "<script>window.__xss='hname'</script>"
BUILT_NAME = "<b onmouseover=\"window.__xss='bname'\">built</b>"
PAYLOADS = [COL_ID, COL_A, COL_B, COL_S, *VALUES_A, *VALUES_B, *VALUES_S, LABEL_1, LABEL_2, RENAMED,
            DATASET_NAME, FILE_NAME, HIERARCHY_NAME, BUILT_NAME]
MARKERS = ("__xss", "pwned", "alert(")  # every payload's code holds one of these

# What a payload would leave in the DOM if it had been parsed as markup: handlers, inline scripts and
# javascript: links holding a marker. The page's own markup holds none of them.
STATE = """
const markers = %s;
const hit = (s) => markers.some((m) => String(s || '').includes(m));
const injected = [];
for (const el of document.querySelectorAll('*')) {
  for (const a of el.attributes) {
    if ((a.name.startsWith('on') && hit(a.value)) ||
        (/^(href|src|xlink:href|action|formaction)$/.test(a.name) && /^\\s*javascript:/i.test(a.value))) {
      injected.push(el.outerHTML.slice(0, 160));
    }
  }
  if (el.tagName === 'SCRIPT' && !el.src && el.type !== 'application/json' && hit(el.textContent)) {
    injected.push(el.outerHTML.slice(0, 160));
  }
}
return {xss: window.__xss === undefined ? null : String(window.__xss), title: document.title, injected: injected,
        text: document.body.innerText + '\\n' + Array.from(document.querySelectorAll('svg text'))
          .map((t) => t.textContent).join('\\n')};
""" % json.dumps(MARKERS)

# Hover every point of every trace of a plotly chart (Plotly.Fx.hover is throttled: one point per 60 ms)
# and collect the hover label texts and any link plotly drew in them.
HOVER = """
const gd = arguments[0], limit = arguments[1], done = arguments[arguments.length - 1];
const todo = [];
gd.data.forEach((t, c) => {
  const n = Math.min((t.x || t.labels || []).length, limit);
  for (let p = 0; p < n; p++) todo.push([c, p, (t.xaxis || 'x') + (t.yaxis || 'y')]);
});
const texts = [], links = [];
const step = () => {
  if (!todo.length) { window.Plotly.Fx.unhover(gd); done({texts: texts, links: links}); return; }
  const [c, p, sub] = todo.shift();
  window.Plotly.Fx.hover(gd, [{curveNumber: c, pointNumber: p}], sub);
  setTimeout(() => {
    const layer = gd.querySelector('.hoverlayer');
    texts.push(layer ? layer.textContent : '');
    if (layer) layer.querySelectorAll('a').forEach((a) => links.push(a.outerHTML));
    step();
  }, 60);
};
step();
"""

# A point inside an SVG shape, as an offset from its bounding box's centre: the first of a grid of points
# that the browser hit-tests to the shape itself.
INSIDE = """
const el = arguments[0], r = el.getBoundingClientRect();
for (let fy = 0.5; fy < 1; fy += 0.05) for (let fx = 0.05; fx < 1; fx += 0.05) for (const sy of [1, -1]) {
  const x = r.left + fx * r.width, y = r.top + (0.5 + sy * (fy - 0.5)) * r.height;
  if (document.elementFromPoint(x, y) === el) return [Math.round(x - r.left - r.width / 2),
                                                      Math.round(y - r.top - r.height / 2)];
}
return [0, 0];
"""

# Collects Content-Security-Policy violations of every page (installed before the page's own scripts).
CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  {directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile, sample: e.sample}));
"""


def _table_csv() -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([COL_ID, COL_A, COL_B, COL_S])
    for i in range(12):
        writer.writerow([f"<i>id{i}</i>", VALUES_A[i % 4], VALUES_B[i % 3], VALUES_S[i % 3]])
    return buf.getvalue().encode()


def _hierarchy_csv() -> bytes:
    """ARX layout for A: the first two values under LABEL_1, the other two under LABEL_2, then *."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=";", lineterminator="\n")
    for i, value in enumerate(VALUES_A):
        writer.writerow([value, LABEL_1 if i < 2 else LABEL_2, "*"])
    return buf.getvalue().encode()


class Pages:
    """The browser plus the checks every page gets."""

    def __init__(self, browser, base: str):
        self.browser = browser
        self.base = base
        self.wait = WebDriverWait(browser, 30)
        self.visited: list[str] = []
        self.hovers = 0

    def get(self, path: str) -> None:
        self.browser.get(self.base + path)
        self.wait.until(lambda b: b.execute_script("return document.readyState") == "complete")

    def check(self, where: str, shown: list[str] = ()) -> str:
        """No payload ran or became markup; every text in `shown` is on the page literally."""
        try:
            alert = self.browser.switch_to.alert
            text = alert.text
            alert.dismiss()
            pytest.fail(f"{where}: an alert opened ({text!r})")
        except NoAlertPresentException:
            pass
        state = self.browser.execute_script(STATE)
        assert state["xss"] is None, f"{where}: a payload ran (window.__xss = {state['xss']!r})"
        assert state["title"] != "pwned", f"{where}: a payload changed the title"
        assert state["injected"] == [], f"{where}: payload parsed as markup: {state['injected']}"
        for text in shown:
            assert text in state["text"], f"{where}: {text!r} is not shown literally"
        self.visited.append(where)
        return state["text"]

    def hover(self, where: str, element, limit: int = 40) -> str:
        """Hover the chart's points; the hover labels show the payloads as text, with no links."""
        out = self.browser.execute_async_script(HOVER, element, limit)
        assert out["links"] == [], f"{where}: plotly drew links from data: {out['links']}"
        self.hovers += len(out["texts"])
        self.check(f"{where} (hovered {len(out['texts'])} points)")
        return "\n".join(out["texts"])

    def plot(self, css: str):
        return self.wait.until(lambda b: b.find_element(By.CSS_SELECTOR, f"{css}.js-plotly-plot"))


def _select(browser, element, value: str) -> None:
    """Choose an option by value (selenium's Select builds a CSS selector these values break)."""
    found = browser.execute_script(
        "const s = arguments[0]; if (![...s.options].some((o) => o.value === arguments[1])) return false;"
        "s.value = arguments[1]; s.dispatchEvent(new Event('change', {bubbles: true})); return true;",
        element, value)
    assert found, f"no option {value!r}"


def _fill(browser, name: str, value: str) -> None:
    box = browser.find_element(By.NAME, name)
    box.clear()
    box.send_keys(value)


def test_payloads_stay_text_on_every_page(browser, live_server, django_user_model, tmp_path, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    django_user_model.objects.create_user(username="xss", password=PASSWORD)
    browser.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})  # escaping must hold without a CSP
    p = Pages(browser, live_server.url)
    b = browser

    p.get("/accounts/login/")
    _fill(b, "username", "xss")
    b.find_element(By.NAME, "password").send_keys(PASSWORD, Keys.ENTER)
    p.wait.until(lambda d: "/accounts/login/" not in d.current_url)

    # ---- upload: a payload file name and dataset name --------------------------------------------------
    table = tmp_path / FILE_NAME
    table.write_bytes(_table_csv())
    b.find_element(By.CSS_SELECTOR, "#upload-form input[type=file]").send_keys(str(table))
    _fill(b, "name", DATASET_NAME)
    b.find_element(By.CSS_SELECTOR, "#upload-form button[type=submit]").click()
    p.wait.until(lambda d: "/datasets/" in d.current_url and "upload" not in d.current_url)
    ds = Dataset.objects.get(owner__username="xss")
    assert ds.name == DATASET_NAME and [c.name for c in ds.columns.order_by("position")] == [
        COL_ID, COL_A, COL_B, COL_S]
    p.check("dataset", [DATASET_NAME, FILE_NAME, COL_A, COL_B, COL_S, VALUES_A[0], VALUES_B[1], VALUES_S[2]])
    p.get("/")
    p.check("index", [DATASET_NAME, FILE_NAME])

    # ---- columns: roles ---------------------------------------------------------------------------------
    p.get(f"/datasets/{ds.pk}/columns/")
    p.check("columns", [COL_ID, COL_A, COL_B, COL_S])
    roles = {COL_ID: "identifying", COL_A: "quasi-identifying", COL_B: "quasi-identifying", COL_S: "sensitive"}
    for column in ds.columns.all():
        Select(b.find_element(By.ID, f"col-{column.position}-role")).select_by_value(roles[column.name])
    b.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    p.wait.until(lambda d: ds.columns.filter(role="quasi-identifying").count() == 2)
    col = {c.name: c for c in ds.columns.all()}

    # ---- hierarchies: upload one for A (payload labels and name), build one for B -----------------------
    p.get(f"/hierarchies/dataset/{ds.pk}/column/{col[COL_A].pk}/")
    p.check("hierarchy page of A (before the upload)", [COL_A, DATASET_NAME, "value;level1;…;root"])
    hfile = tmp_path / "labels.csv"
    hfile.write_bytes(_hierarchy_csv())
    b.find_element(By.CSS_SELECTOR, "form.upload-form input[type=file]").send_keys(str(hfile))
    b.find_element(By.CSS_SELECTOR, "form.upload-form input[name=name]").send_keys(HIERARCHY_NAME)
    b.find_element(By.CSS_SELECTOR, "form.upload-form button[type=submit]").click()
    p.wait.until(lambda d: Dataset.objects.get(pk=ds.pk).columns.get(pk=col[COL_A].pk).hierarchy_id is not None)
    h_a = Hierarchy.objects.get(name=HIERARCHY_NAME)
    p.get(f"/hierarchies/dataset/{ds.pk}/column/{col[COL_A].pk}/")
    p.check("hierarchy page of A", [COL_A, HIERARCHY_NAME, LABEL_1, LABEL_2])

    p.get(f"/hierarchies/dataset/{ds.pk}/column/{col[COL_B].pk}/build/")
    p.wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#builder-form[data-preview-ready]"))
    p.check("builder preview of B", [COL_B, DATASET_NAME, *VALUES_B])
    box = b.find_element(By.ID, "id_hierarchy_name")
    box.clear()
    box.send_keys(BUILT_NAME)
    b.find_element(By.ID, "build-save").click()
    p.wait.until(lambda d: d.current_url.endswith(f"/column/{col[COL_B].pk}/"))
    h_b = Hierarchy.objects.get(name=BUILT_NAME)
    p.check("hierarchy page of B", [COL_B, BUILT_NAME, *VALUES_B])
    for name in (COL_ID, COL_S):
        p.get(f"/hierarchies/dataset/{ds.pk}/column/{col[name].pk}/")
        p.check(f"hierarchy page of {name}", [name, DATASET_NAME])
    p.get("/hierarchies/")
    p.check("hierarchy library", [HIERARCHY_NAME, BUILT_NAME])
    p.get(f"/hierarchies/{h_b.pk}/")
    p.check("hierarchy detail of B", [BUILT_NAME, *VALUES_B])

    # ---- the editor: tree, search, a node renamed to a payload, sunburst hovered with the mouse ---------
    p.get(f"/hierarchies/dataset/{ds.pk}/column/{col[COL_A].pk}/")
    b.find_element(By.ID, "edit-link").click()
    p.wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tree[data-ready] li.node"))
    p.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#tree .node-label")) >= 3)
    p.check("editor", [HIERARCHY_NAME, LABEL_1, LABEL_2])
    label = next(e for e in b.find_elements(By.CSS_SELECTOR, "#tree .node-label") if e.text == LABEL_2)
    row = label.find_element(By.XPATH, "..")
    label.click()
    row.find_element(By.CSS_SELECTOR, "[data-action=rename]").click()
    box = p.wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#tree input.inline-edit"))
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(RENAMED, Keys.ENTER)
    p.wait.until(lambda d: any(e.text == RENAMED for e in d.find_elements(By.CSS_SELECTOR, "#tree .node-label")))
    p.check("editor after the rename", [RENAMED, LABEL_1])
    for toggle in b.find_elements(By.CSS_SELECTOR, "#tree li.node li.node > .node-row > .toggle:not([disabled])"):
        toggle.click()
    p.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#tree .node-label")) == 7)
    p.check("editor, every node open", [RENAMED, LABEL_1, *VALUES_A])
    search = b.find_element(By.ID, "tree-search")
    search.send_keys("<a href")
    p.wait.until(lambda d: d.find_element(By.ID, "search-hits").text)
    p.check("editor search", [LABEL_1])
    search.clear()
    search.send_keys(RENAMED[:6] + "no such label")
    p.wait.until(lambda d: "No label contains" in d.find_element(By.ID, "search-summary").text)
    p.check("editor search without hits", [RENAMED[:6] + "no such label"])
    # the sunburst: every slice hovered with the mouse; labels with plotly markup (<a href>, <b>) stay text
    sunburst = p.plot("#sunburst")
    p.wait.until(lambda d: len(sunburst.find_elements(By.CSS_SELECTOR, "g.slice")) == 7)
    p.check("editor sunburst")
    hovered = []
    for piece in sunburst.find_elements(By.CSS_SELECTOR, "g.slice path.surface"):
        # the mouse on a point inside the ring sector (its bounding box's centre may be outside it)
        dx, dy = b.execute_script(INSIDE, piece)
        ActionChains(b).move_to_element_with_offset(piece, dx, dy).perform()
        layer = sunburst.find_elements(By.CSS_SELECTOR, ".hoverlayer")
        hovered.append(layer[0].text if layer else "")
        assert not sunburst.find_elements(By.CSS_SELECTOR, ".hoverlayer a, .slicetext a")
    p.hovers += len(hovered)
    p.check(f"editor sunburst (hovered {len(hovered)} slices)")
    for text in (LABEL_1, RENAMED, *VALUES_A):
        assert any(text in t for t in hovered), f"sunburst hover: {text!r} not shown literally in {hovered}"
    b.find_element(By.ID, "save").click()
    p.wait.until(lambda d: "Saved" in d.find_element(By.ID, "editor-message").text)
    p.check("editor saved", [RENAMED])
    p.get(f"/hierarchies/{h_a.pk}/")
    p.check("hierarchy detail of A", [HIERARCHY_NAME, RENAMED, LABEL_1])

    # ---- run a lattice algorithm: run form, job page, result page with hovers ---------------------------
    p.get(f"/datasets/{ds.pk}/run/")
    p.check("run form", [DATASET_NAME, COL_A, COL_B, COL_S])
    Select(b.find_element(By.NAME, "algorithm")).select_by_value("flash")
    _fill(b, "k", "2")
    _select(b, b.find_element(By.NAME, "sensitive"), COL_S)
    b.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    p.wait.until(lambda d: "/jobs/" in d.current_url)
    job = Job.objects.get(dataset=ds, kind=Job.RUN)
    assert job.status == Job.SUCCEEDED, job.message
    p.get(f"/jobs/{job.pk}/")
    p.check("job page", [DATASET_NAME])
    p.get("/jobs/")
    p.check("job list", [DATASET_NAME])

    p.get(f"/jobs/{job.pk}/result/")
    p.check("result", [DATASET_NAME, COL_A, COL_B, COL_S, VALUES_S[0], VALUES_S[2], "<i>id0</i>"])
    hover_text = p.hover("result: class sizes", p.plot("#chart-classes"))
    assert "EC size" in hover_text
    for qi, values in ((COL_A, VALUES_A), (COL_B, VALUES_B)):
        _select(b, b.find_element(By.ID, "qi-select"), qi)
        chart = p.plot("#chart-distribution")
        p.wait.until(lambda d, v=values, c=chart: v[-1] in c.text or v[-1][:23] in c.text)
        hover_text = p.hover(f"result: distribution of {qi}", chart)
        for value in values:
            assert value in hover_text, f"distribution of {qi}: {value!r} not in the hover labels"
    attack = p.plot(".chart-attack")
    legend = p.check("result: attack chart")
    hover_text = p.hover("result: attack chart", attack)
    for value in VALUES_S:
        assert value in hover_text, f"attack chart: {value!r} not in the hover labels"
        assert value[:23] in legend

    # ---- the solution lattice: hover nodes, click one ---------------------------------------------------
    p.get(f"/jobs/{job.pk}/lattice/")
    chart = p.wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#lattice-chart.js-plotly-plot"))
    p.wait.until(lambda d: "nodes, optimum" in d.find_element(By.ID, "lattice-summary").text)
    p.check("lattice", [DATASET_NAME])
    hover_text = p.hover("lattice", chart)
    for text in (COL_A, COL_B):
        assert text in hover_text, f"lattice hover: {text!r} missing"
    b.execute_script(
        "const chart = document.getElementById('lattice-chart');"
        "chart.emit('plotly_click', {points: [{customdata: chart.data[1].customdata[0]}]});")
    p.wait.until(lambda d: d.find_element(By.ID, "node-compare").is_displayed())
    p.check("lattice node", [COL_ID, COL_A, COL_B, "<i>id0</i>", VALUES_A[0], VALUES_S[2]])

    # ---- comparison and experiment ------------------------------------------------------------------------
    p.get(f"/datasets/{ds.pk}/compare/")
    p.check("compare form", [DATASET_NAME])
    for box in b.find_elements(By.CSS_SELECTOR, "input[name=algorithms]"):
        if box.is_selected() != (box.get_attribute("value") in ("datafly", "mondrian")):
            box.click()
    _fill(b, "k_values", "2, 3")
    b.find_element(By.CSS_SELECTOR, "form button[type=submit].btn-primary").click()
    p.wait.until(lambda d: Job.objects.filter(dataset=ds, kind=Job.COMPARISON).exists())
    comparison = Job.objects.get(dataset=ds, kind=Job.COMPARISON)
    assert comparison.status == Job.SUCCEEDED, comparison.message
    p.get(f"/jobs/{comparison.pk}/comparison/")
    p.check("comparison", [DATASET_NAME])
    p.hover("comparison chart", p.plot("#chart-ncp"))

    p.get(f"/datasets/{ds.pk}/experiment/")
    p.check("experiment form", [DATASET_NAME])
    _fill(b, "sizes", "")
    _fill(b, "k_values", "2")
    box = b.find_element(By.NAME, "include_dataset")
    if not box.is_selected():
        box.click()
    Select(b.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    b.find_element(By.CSS_SELECTOR, "form button[type=submit].btn-primary").click()
    p.wait.until(lambda d: Job.objects.filter(dataset=ds, kind=Job.EXPERIMENT).exists())
    experiment = Job.objects.get(dataset=ds, kind=Job.EXPERIMENT)
    assert experiment.status == Job.SUCCEEDED, experiment.message
    p.get(f"/jobs/{experiment.pk}/experiment/")
    p.check("experiment result", [DATASET_NAME])  # the table column and the chart's legend
    hover_text = p.hover("experiment chart", p.plot("#chart-homogeneity"))
    assert DATASET_NAME in hover_text

    # ---- downloads: never HTML, always attachments, payloads kept as text --------------------------------
    downloads = [f"/jobs/{job.pk}/result/anonymized.csv", f"/jobs/{job.pk}/result/anonymized.csv?delimiter=%3B",
                 f"/jobs/{job.pk}/config.json", f"/hierarchies/{h_a.pk}/download/",
                 f"/hierarchies/{h_a.pk}/export/arx/", f"/hierarchies/{h_b.pk}/download/",
                 f"/jobs/{comparison.pk}/comparison/?format=csv", f"/jobs/{experiment.pk}/experiment/?format=csv"]
    for url in downloads:
        got = b.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {credentials: 'same-origin'}).then((r) => r.text().then((t) => done({"
            "status: r.status, type: r.headers.get('content-type'), disposition: r.headers.get('content-disposition'),"
            "nosniff: r.headers.get('x-content-type-options'), body: t})));", url)
        assert got["status"] == 200, url
        assert "html" not in got["type"] and got["disposition"].startswith("attachment"), (url, got["type"])
        assert got["nosniff"] == "nosniff", url
        p.visited.append(f"download {url}")
    p.check("after the downloads")

    # ---- with the server's Content-Security-Policy enforced (when it sends one) ---------------------------
    policy = b.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/', {credentials: 'same-origin'}).then((r) => done(r.headers.get('content-security-policy')));")
    if policy:
        b.execute_cdp_cmd("Page.setBypassCSP", {"enabled": False})
        b.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_LISTENER})
        for path in (f"/datasets/{ds.pk}/", f"/jobs/{job.pk}/result/", f"/hierarchies/{h_a.pk}/edit/"):
            p.get(path)
            p.check(f"{path} under the CSP")
            violations = b.execute_script("return window.__csp || []")
            # a payload that became code would be refused as inline script (sample only with 'report-sample');
            # a refused script of our own would break the page: neither may happen
            scripts = [v for v in violations if v["directive"].startswith("script-src")
                       or any(m in (v["sample"] or "") for m in MARKERS)
                       or "/static/js/" in (v["source"] or "") + (v["blocked"] or "")]
            assert scripts == [], f"{path}: scripts refused by the CSP: {scripts}"

    print(f"\nXSS: {len(PAYLOADS)} payloads, {len(p.visited)} pages/states checked, {p.hovers} hover labels, "
          f"CSP {'enforced in a second pass' if policy else 'absent'}")
