// Statistics page: one plotly chart per column from server-built figures (json_script, values already
// escaped for plotly). plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("statistics-data");
  if (!dataEl || typeof window.Plotly === "undefined") return;
  var charts = JSON.parse(dataEl.textContent);
  var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  document.querySelectorAll(".statistics-chart").forEach(function (el) {
    var fig = charts[el.id];
    if (fig) window.Plotly.react(el, fig.data, fig.layout, config);
  });
})();
