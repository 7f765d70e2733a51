// Run form: a numeric sensitive column with many distinct values (the page's #continuous-sensitive, from
// templatetags/figures.continuous_sensitive) gets t-closeness with the ordered distance on it, where
// homogeneity and l on exact values mean little (every wage differs) and the equal distance ignores how far
// apart two values are. Only on a fresh form (not a re-run's or a submitted one's settings) and until the user
// changes the t-closeness fields; a note says what was selected and why.
(function () {
  "use strict";
  var data = document.getElementById("continuous-sensitive");
  var sensitive = document.getElementById("id_sensitive");
  var box = document.querySelector("input[name='model:t:enabled']");
  var distance = document.querySelector("select[name='model:t:distance']");
  var column = document.querySelector("select[name='model:t:column']");
  var note = document.getElementById("sensitive-ordered-note");
  if (!data || !sensitive || !box || !distance || !column || !note) return;
  var continuous = JSON.parse(data.textContent);
  var fresh = !/[?&]from=/.test(window.location.search) && !document.querySelector(".field-errors, .message-error");
  var applied = false;  // the t-closeness fields as this script set them (the user's own choice is kept)
  var touched = false;
  [box, distance, column].forEach(function (el) {
    el.addEventListener("change", function (event) { if (event.isTrusted) touched = true; });
  });
  function has(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }
  function fire(el) { el.dispatchEvent(new Event("change", {bubbles: true})); }
  function update() {
    var name = sensitive.value;
    var count = Object.prototype.hasOwnProperty.call(continuous, name) ? continuous[name] : null;
    if (touched) return;
    if (count !== null && has(distance, "ordered") && has(column, name)) {
      box.checked = true;
      distance.value = "ordered";
      column.value = name;
      applied = true;
      note.textContent = name + " is numeric with " + count.toLocaleString("en") + " distinct values: " +
        "t-closeness with the ordered distance is selected on it (how far the values of a group are from the " +
        "table's, in value order); the result page counts homogeneity and l on ranges of its values.";
      note.classList.remove("hidden");
    } else if (applied) {
      box.checked = false;
      applied = false;
      note.classList.add("hidden");
    } else {
      return;
    }
    [box, distance, column].forEach(fire);
  }
  if (fresh) {
    sensitive.addEventListener("change", update);
    update();
  }
})();

// The column selects of the models on a sensitive column (l-diversity, t-closeness, β-likeness, (α,k)-anonymity,
// δ-disclosure: forms.PrivacyModelFields marks them data-sensitive-model) follow the reports' column until the
// user picks a model's column; a column the user picks for a model becomes the reports' column while the user has
// not chosen that one (the reports read the column the run's models protect: docs/definitions.md "Defaults of
// the run form").
(function () {
  "use strict";
  var sensitive = document.getElementById("id_sensitive");
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-sensitive-model]"));
  if (!sensitive || !selects.length) return;
  var picked = [];  // model selects the user set
  var reportsPicked = false;
  function has(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }
  function fire(el) { el.dispatchEvent(new Event("change", {bubbles: true})); }
  sensitive.addEventListener("change", function (event) {
    if (event.isTrusted) reportsPicked = true;
    var name = sensitive.value;
    if (!name) return;  // "(none)": the models keep their columns
    selects.forEach(function (select) {
      if (picked.indexOf(select) < 0 && select.value !== name && has(select, name)) {
        select.value = name;
        fire(select);
      }
    });
  });
  selects.forEach(function (select) {
    select.addEventListener("change", function (event) {
      if (!event.isTrusted) return;
      if (picked.indexOf(select) < 0) picked.push(select);
      if (!reportsPicked && select.value && sensitive.value !== select.value && has(sensitive, select.value)) {
        sensitive.value = select.value;
        fire(sensitive);
      }
    });
  });
})();
