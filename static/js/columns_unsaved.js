// Columns page: changed types or roles that are not saved are not lost silently. While a select differs
// from its saved value, "Next: run →" shows a warning with "Save and run" (saves, then opens the run form)
// and "Run with the saved settings"; leaving the page otherwise asks the browser's confirmation.
(function () {
  "use strict";
  var form = document.getElementById("columns-form");
  var next = document.getElementById("next-run");
  var panel = document.getElementById("unsaved-columns");
  if (!form || !next || !panel) return;
  var submitting = false, leaving = false;

  function dirty() {
    return Array.prototype.some.call(form.querySelectorAll("select"), function (select) {
      return Array.prototype.some.call(select.options, function (o) { return o.selected !== o.defaultSelected; });
    });
  }

  form.addEventListener("change", function () {
    if (!dirty()) panel.classList.add("hidden");
  });
  form.addEventListener("submit", function () { submitting = true; });
  next.addEventListener("click", function (event) {
    if (!dirty()) return;
    event.preventDefault();
    panel.classList.remove("hidden");
    panel.focus();
  });
  document.getElementById("run-unsaved").addEventListener("click", function () { leaving = true; });
  window.addEventListener("beforeunload", function (event) {
    if (submitting || leaving || !dirty()) return;
    event.preventDefault();
    event.returnValue = "";  // the browser shows its own "leave the page?" question
  });
})();
