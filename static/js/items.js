// Set-valued pages: the item-frequency chart of the preview and the frequent-itemset chart of a result,
// from server-built figures (json_script; item labels escaped for plotly on the server).
(function () {
  "use strict";
  var dataEl = document.getElementById("chart-data");
  if (!dataEl || typeof window.Plotly === "undefined") return;
  var charts = JSON.parse(dataEl.textContent);
  var config = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  [["chart-items", charts.items], ["chart-itemsets", charts.itemsets]].forEach(function (pair) {
    var el = document.getElementById(pair[0]);
    if (el && pair[1]) window.Plotly.react(el, pair[1].data, pair[1].layout, config);
  });
})();
