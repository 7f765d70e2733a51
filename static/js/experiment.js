// Homogeneity experiment result: one plotly line chart (homogeneous ECs against k, one line per
// table) from the server-built figure (json_script). plotly.min.js is served from /static/vendor/plotly/.
(function () {
  "use strict";
  var dataEl = document.getElementById("experiment-data");
  var el = document.getElementById("chart-homogeneity");
  if (!dataEl || !el || typeof window.Plotly === "undefined") return;
  var fig = JSON.parse(dataEl.textContent);
  var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  window.Plotly.react(el, fig.data, fig.layout, config);
})();
