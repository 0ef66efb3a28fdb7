(function () {
  "use strict";
  var svg = document.querySelector("svg.fencepost-map");
  var map = window.FencepostMap.attach(svg);
  var data = JSON.parse(document.getElementById("fencepost-details").textContent);
  var panel = document.getElementById("details");
  document.getElementById("zoom-in").onclick = map.zoomIn;
  document.getElementById("zoom-out").onclick = map.zoomOut;
  document.getElementById("zoom-reset").onclick = map.reset;
  function row(table, key, value) {
    if (value === undefined || value === null || value === "") { return; }
    var tr = document.createElement("tr");
    var th = document.createElement("th"); th.textContent = key;
    var td = document.createElement("td");
    td.textContent = typeof value === "object" ? JSON.stringify(value) : String(value);
    tr.appendChild(th); tr.appendChild(td); table.appendChild(tr);
  }
  function show(title, fields) {
    panel.textContent = "";
    var heading = document.createElement("h2"); heading.textContent = title;
    var table = document.createElement("table");
    Object.keys(fields).forEach(function (key) { row(table, key, fields[key]); });
    panel.appendChild(heading); panel.appendChild(table);
    panel.hidden = false;
  }
  function describe(element) {
    var id;
    if ((id = element.getAttribute("data-event-id"))) {
      var event = data.events[id] || {};
      show(event.kind + " event", event);
      return true;
    }
    if ((id = element.getAttribute("data-visit-id"))) {
      show("open visit", data.visits[id] || { id: id });
      return true;
    }
    if ((id = element.getAttribute("data-region-id"))) {
      show("region " + id, data.regions[id] || {});
      return true;
    }
    if ((id = element.getAttribute("data-region-ids"))) {
      var ids = id.split(" ");
      show(ids.length + " small regions", { regions: ids.slice(0, 40).join(", ") + (ids.length > 40 ? ", …" : "") });
      return true;
    }
    if (element.getAttribute("data-problems")) {
      var numbers = element.getAttribute("data-problems").split(",");
      var fields = {};
      numbers.forEach(function (n) { fields[n] = data.problems[parseInt(n, 10) - 1]; });
      show("refused feature", fields);
      return true;
    }
    if ((id = element.getAttribute("data-device"))) {
      show("device " + id, data.devices[id] || {});
      return true;
    }
    return false;
  }
  svg.addEventListener("pointerover", function (event) {
    for (var element = event.target; element && element !== svg; element = element.parentNode) {
      if (element.getAttribute && describe(element)) { return; }
    }
  });
})();