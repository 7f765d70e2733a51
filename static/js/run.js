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

  // Privacy models: the fields of a model show only while it is ticked; a field that only some variants
  // have (data-variants, from the model registry) only while one of them is chosen.
  document.querySelectorAll("[data-model-group]").forEach(function (group) {
    var box = group.querySelector("input[type=checkbox]");
    var fields = group.querySelector(".model-fields");
    var variant = group.querySelector("select[name$=':variant']");
    var byVariant = group.querySelectorAll("[data-variants]");
    // a model on the research subset (δ-presence): its 0/1 column only while no population dataset is chosen
    var population = group.querySelector("[name$=':population']");
    var subsetColumn = population ? group.querySelector("[name$=':column']") : null;
    function show() {
      if (fields && box) fields.classList.toggle("hidden", !box.checked);
      if (variant) byVariant.forEach(function (el) {
        el.closest(".field").classList.toggle("hidden", el.getAttribute("data-variants").split(" ").indexOf(variant.value) < 0);
      });
      if (population && subsetColumn) subsetColumn.closest(".field").classList.toggle("hidden", population.value !== "");
    }
    if (box) box.addEventListener("change", show);
    if (population) population.addEventListener("change", show);
    if (variant) variant.addEventListener("change", show);
    show();
  });
})();
