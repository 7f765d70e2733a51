// Run form: the pre-flight checks (k against the records, hierarchy coverage, l or t against the sensitive
// column, classes at the top of the hierarchies) asked of the server while fields change, so a problem is
// named before "Start anonymization" is pressed. The server checks again when the form is posted.
(function () {
  "use strict";
  var form = document.getElementById("run-form");
  var box = document.getElementById("preflight");
  if (!form || !box || !window.fetch) return;
  var url = form.getAttribute("data-check-url");
  var timer = null, asked = 0;

  function show(problems) {
    var list = box.querySelector("ul");
    list.textContent = "";
    problems.forEach(function (p) {
      var li = document.createElement("li");
      li.textContent = p.message;  // text, never markup: messages quote the data's values
      list.appendChild(li);
    });
    box.classList.toggle("hidden", problems.length === 0);
    box.setAttribute("data-checked", String(asked));
  }

  function check() {
    var mine = ++asked;
    fetch(url, {method: "POST", body: new FormData(form), credentials: "same-origin",
                headers: {"X-Requested-With": "fetch"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data && mine === asked) show(data.problems || []); })
      .catch(function () { /* offline: the server checks when the form is posted */ });
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(check, 400);
  }
  form.addEventListener("change", later);
  form.addEventListener("input", later);
})();
