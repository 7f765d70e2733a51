// Run form: show the summary and the options of the selected algorithm only.
(function () {
  "use strict";
  var select = document.getElementById("id_algorithm");
  if (!select) return;
  function update() {
    document.querySelectorAll("[data-algorithm]").forEach(function (el) {
      el.classList.toggle("hidden", el.getAttribute("data-algorithm") !== select.value);
    });
  }
  select.addEventListener("change", update);
  update();

  // Privacy models: the fields of a model show only while it is ticked; c only for recursive l-diversity.
  document.querySelectorAll("[data-model-group]").forEach(function (group) {
    var box = group.querySelector("input[type=checkbox]");
    var fields = group.querySelector(".model-fields");
    var variant = group.querySelector("select[name$=':variant']");
    var c = group.querySelector("[name='model:l:c']");
    // δ-presence: the 0/1 column only while no population dataset is chosen
    var population = group.querySelector("[name='model:delta:population']");
    var subsetColumn = group.querySelector("[name='model:delta:column']");
    function show() {
      if (fields && box) fields.classList.toggle("hidden", !box.checked);
      if (c && variant) c.closest(".field").classList.toggle("hidden", variant.value !== "recursive");
      if (population && subsetColumn) subsetColumn.closest(".field").classList.toggle("hidden", population.value !== "");
    }
    if (box) box.addEventListener("change", show);
    if (population) population.addEventListener("change", show);
    if (variant) variant.addEventListener("change", show);
    show();
  });
})();
