// Builder page: live preview. The form is posted (debounced) to the preview endpoint on every change;
// the answer is drawn with textContent only (labels come from the user's data).
(function () {
  "use strict";
  var form = document.getElementById("builder-form");
  if (!form) return;
  var url = form.getAttribute("data-preview-url");
  var statusEl = document.getElementById("preview-status");
  var errorBox = document.getElementById("preview-error");
  var body = document.getElementById("preview-body");
  var timer = null;
  var seq = 0;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function showFieldErrors(errors) {
    form.querySelectorAll("[data-field]").forEach(function (field) {
      var name = field.getAttribute("data-field");
      var list = field.querySelector(".field-errors");
      var msgs = (errors && errors[name]) || [];
      field.classList.toggle("has-error", msgs.length > 0);
      if (list) {
        clear(list);
        msgs.forEach(function (m) { list.appendChild(el("li", m)); });
      }
    });
  }

  function drawTree(ul, node) {
    var li = el("li");
    var label = el("span", node.label, "tree-label");
    li.appendChild(label);
    if (node.leaves !== null && node.leaves !== undefined) {
      li.appendChild(el("span", node.leaves + (node.leaves === 1 ? " leaf" : " leaves"), "muted small count"));
    }
    if (node.children && node.children.length) {
      var sub = el("ul");
      node.children.forEach(function (c) { drawTree(sub, c); });
      if (node.more) sub.appendChild(el("li", "… and " + node.more + " more", "muted small"));
      li.appendChild(sub);
    }
    ul.appendChild(li);
  }

  function render(data) {
    document.getElementById("preview-summary").textContent =
      data.leaves + " leaves, height " + data.height + " (level 0: the original values).";
    var levels = document.querySelector(".preview-levels tbody");
    clear(levels);
    data.levels.forEach(function (lv) {
      var tr = el("tr");
      tr.appendChild(el("td", lv.level, "num"));
      tr.appendChild(el("td", lv.count, "num level-count"));
      var td = el("td");
      lv.sample.forEach(function (s) {
        var chip = el("code", null, "value-chip");
        chip.appendChild(s.trim() === "" ? missingMark() : document.createTextNode(s));
        td.appendChild(chip);
      });
      if (lv.count > lv.sample.length) td.appendChild(el("span", "and " + (lv.count - lv.sample.length) + " more", "muted small"));
      tr.appendChild(td);
      levels.appendChild(tr);
    });
    var tree = document.getElementById("preview-tree");
    clear(tree);
    drawTree(tree, data.tree);
    var head = document.querySelector(".preview-values thead tr");
    clear(head);
    head.appendChild(el("th", "Value"));
    head.appendChild(el("th", "Rows", "num"));
    for (var i = 0; i < data.levels.length; i++) head.appendChild(el("th", "Level " + i));
    head.querySelectorAll("th").forEach(function (th) { th.setAttribute("scope", "col"); });
    var rows = document.querySelector(".preview-values tbody");
    clear(rows);
    data.values.forEach(function (v) {
      var tr = el("tr");
      tr.appendChild(valueCell(v.value));
      tr.appendChild(el("td", v.count, "num"));
      if (v.labels) {
        v.labels.forEach(function (l) { tr.appendChild(valueCell(l)); });
      } else {
        var td = el("td", "not covered", "not-covered");
        td.colSpan = data.levels.length;
        tr.appendChild(td);
      }
      rows.appendChild(tr);
    });
  }

  // A missing cell (blank: a run reads every NA marker as one) is named, as the pages' value_or_missing does.
  function missingMark() {
    var span = el("span", "(missing)", "missing-value");
    span.title = "empty cells and NA markers";
    return span;
  }

  function valueCell(text) {
    var td = el("td");
    td.appendChild(String(text).trim() === "" ? missingMark() : document.createTextNode(String(text)));
    return td;
  }

  function preview() {
    var mine = ++seq;
    statusEl.textContent = "updating…";
    fetch(url, { method: "POST", body: new FormData(form), credentials: "same-origin",
                 headers: { "X-Requested-With": "fetch" } })
      .then(function (r) { return r.json().then(function (data) { return { ok: r.ok, data: data }; }); })
      .then(function (res) {
        if (mine !== seq) return; // a newer preview is on its way
        showFieldErrors(res.data.field_errors || {});
        if (!res.ok) {
          errorBox.querySelector("p").textContent = res.data.error || "The preview failed.";
          errorBox.classList.remove("hidden");
          body.classList.add("stale");
          statusEl.textContent = "";
          return;
        }
        errorBox.classList.add("hidden");
        body.classList.remove("stale");
        render(res.data);
        statusEl.textContent = "up to date";
        form.setAttribute("data-preview-ready", "1");
      })
      .catch(function () {
        if (mine !== seq) return;
        errorBox.querySelector("p").textContent = "The preview could not be loaded; check your connection.";
        errorBox.classList.remove("hidden");
        statusEl.textContent = "";
      });
  }

  function schedule() {
    form.removeAttribute("data-preview-ready");
    if (timer) clearTimeout(timer);
    timer = setTimeout(preview, 300);
  }

  form.addEventListener("input", schedule);
  form.addEventListener("change", schedule);
  preview();
})();
