// Run form: SafePub's derived parameters (ε_anon, ε_search, β, k) shown live while ε, δ or the search
// share change, from the server's JSON (the same engine.safepub.parameters.derive the run uses).
// Text only (textContent): nothing the server or the user typed is read as markup.
(function () {
  "use strict";
  var box = document.getElementById("safepub-derived");
  if (!box) return;
  var text = document.getElementById("safepub-derived-text");
  var url = box.getAttribute("data-url");
  var algorithm = document.getElementById("id_algorithm");
  var enabled = document.querySelector("[name='model:dp:enabled']");
  var inputs = {
    epsilon: document.querySelector("[name='model:dp:epsilon']"),
    delta: document.querySelector("[name='model:dp:delta']"),
    search_share: document.querySelector("[name='model:dp:search_share']")
  };
  var timer = null;
  var asked = 0;

  function wanted() {
    return (enabled && enabled.checked) || (algorithm && algorithm.value === "safepub");
  }

  function fmt(x, digits) {
    return Number(x).toLocaleString(undefined, {maximumSignificantDigits: digits});
  }

  function refresh() {
    box.classList.toggle("hidden", !wanted());
    if (!wanted() || !inputs.epsilon) return;
    var params = new URLSearchParams();
    Object.keys(inputs).forEach(function (name) {
      if (inputs[name] && inputs[name].value !== "") params.set(name, inputs[name].value);
    });
    var mine = ++asked;
    fetch(url + "?" + params.toString(), {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json(); })
      .then(function (d) {
        if (mine !== asked) return;  // an answer to an older question
        if (d.error) {
          text.textContent = d.error;
          box.classList.add("message-warning");
          return;
        }
        box.classList.remove("message-warning");
        text.textContent = "ε = " + fmt(d.epsilon, 6) + " (ε_anon = " + fmt(d.epsilon_anon, 6) + " for sampling and " +
          "suppression, ε_search = " + fmt(d.epsilon_search, 6) + " for choosing the generalization), δ = " +
          fmt(d.delta, 3) + ": every record is drawn into the sample with probability β = " + fmt(d.beta, 4) +
          ", and every published class holds at least k = " + d.k + " records.";
      })
      .catch(function () {
        if (mine === asked) text.textContent = "The derived parameters could not be fetched; they are checked when the run starts.";
      });
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 250);
  }

  Object.keys(inputs).forEach(function (name) {
    if (inputs[name]) inputs[name].addEventListener("input", later);
  });
  if (enabled) enabled.addEventListener("change", refresh);
  if (algorithm) algorithm.addEventListener("change", refresh);
  refresh();
})();
