// Privacy models beside k on the comparison form (as on the run form, static/js/run.js): a model's fields
// show only while it is ticked; a field that only some variants have (data-variants, from the model
// registry) only while one of them is chosen.
(function () {
  "use strict";
  document.querySelectorAll("[data-model-group]").forEach(function (group) {
    var box = group.querySelector("input[type=checkbox]");
    var fields = group.querySelector(".model-fields");
    var variant = group.querySelector("select[name$=':variant']");
    var byVariant = group.querySelectorAll("[data-variants]");
    function show() {
      if (fields && box) fields.classList.toggle("hidden", !box.checked);
      if (variant) byVariant.forEach(function (el) {
        el.closest(".field").classList.toggle("hidden", el.getAttribute("data-variants").split(" ").indexOf(variant.value) < 0);
      });
    }
    if (box) box.addEventListener("change", show);
    if (variant) variant.addEventListener("change", show);
    show();
  });
})();
