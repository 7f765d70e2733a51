// Result page: plotly charts from server-built figures (json_script), a QI picker for the
// value distributions. plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("chart-data");
  if (!dataEl || typeof window.Plotly === "undefined") return;
  var charts = JSON.parse(dataEl.textContent);
  var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };

  function draw(id, fig) {
    var el = document.getElementById(id);
    if (el && fig) window.Plotly.react(el, fig.data, fig.layout, config);
  }

  draw("chart-classes", charts.classes);
  draw("chart-set-itemsets", charts.set_itemsets);  // a set-valued column's frequent itemsets (mixed mode)

  // Attack report: one stacked-bar chart per sensitive column.
  document.querySelectorAll(".chart-attack").forEach(function (el) {
    var fig = (charts.attack || {})[el.getAttribute("data-column")];
    if (fig) window.Plotly.react(el, fig.data, fig.layout, config);
  });

  var select = document.getElementById("qi-select");
  if (select) {
    var showQi = function () { draw("chart-distribution", charts.distributions[select.value]); };
    select.addEventListener("change", showQi);
    showQi();
  }
})();
