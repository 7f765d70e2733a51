// Run form: a model parameter that its variants read differently (l of distinct, entropy and recursive
// l-diversity) carries one help per variant (data-variant-help); only the chosen variant's is shown.
(function () {
  "use strict";
  document.querySelectorAll("[data-model-group]").forEach(function (group) {
    var variant = group.querySelector("select[name$=':variant']");
    var helps = group.querySelectorAll("[data-variant-help]");
    if (!variant || !helps.length) return;
    function show() {
      helps.forEach(function (el) {
        el.classList.toggle("hidden", el.getAttribute("data-variant-help") !== variant.value);
      });
    }
    variant.addEventListener("change", show);
    show();
  });
})();
