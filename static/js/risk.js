// Risk pages: plotly bar charts of records per risk band from server-built figures (json_script,
// labels already escaped for plotly). plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("risk-data");
  if (!dataEl || typeof window.Plotly === "undefined") return;
  var charts = JSON.parse(dataEl.textContent);
  var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  ["bands", "journalist", "sdc_contributions"].forEach(function (key) {
    var el = document.getElementById("chart-" + key.replace("_", "-"));
    var fig = charts[key];
    if (el && fig) window.Plotly.react(el, fig.data, fig.layout, config);
  });
})();
