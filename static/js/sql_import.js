// Database import and export pages: the table field or the query field, as the "Read" choice says; submitting
// says that the URL is being checked (the import or export then runs on a worker, with a page of its own).
(function () {
  var form = document.getElementById("import-sql-form") || document.getElementById("export-sql-form");
  if (!form) return;
  function show() {
    var chosen = form.querySelector("input[name=source]:checked");
    if (!chosen) return;
    ["table", "query"].forEach(function (name) {
      var box = form.querySelector("[name=" + name + "]");
      if (box && box.closest(".field")) box.closest(".field").hidden = chosen.value !== name;
    });
  }
  form.querySelectorAll("input[name=source]").forEach(function (radio) {
    radio.addEventListener("change", show);
  });
  show();
  form.addEventListener("submit", function () {
    var note = document.getElementById("sql-busy");
    if (note) note.hidden = false;
    form.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = true; });
  });
})();
