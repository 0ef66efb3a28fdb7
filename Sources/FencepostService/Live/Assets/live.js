(function () {
  "use strict";
  var KEY = "fencepost-token";
  var COLOURS = ["#0f766e", "#c026d3", "#ea580c", "#4f46e5", "#65a30d", "#0369a1", "#be123c", "#a16207"];
  var SVG = "http://www.w3.org/2000/svg";
  var state = { token: null, map: null, svg: null, regions: {}, devices: {}, colours: {}, seq: 0, tracksSeq: 0,
                abort: null, poll: null, tiles: null, tileImages: {}, generation: 0 };
  function $(id) { return document.getElementById(id); }

  function setStatus(text, kind) {
    var status = $("status");
    status.textContent = text;
    status.className = "status" + (kind ? " " + kind : "");
  }

  function api(path, options) {
    options = options || {};
    var headers = options.headers || {};
    headers.Authorization = "Bearer " + state.token;
    return fetch(path, { headers: headers, signal: options.signal, cache: "no-store" }).then(function (response) {
      if (response.status === 401) { forget("the token was refused"); throw new Error("unauthorized"); }
      if (!response.ok) { throw new Error(path + ": HTTP " + response.status); }
      return response;
    });
  }

  // MARK: - Token

  function showLogin(message) {
    $("login").hidden = false;
    $("logout").hidden = true;
    setStatus(message || "not connected", message ? "error" : "");
  }

  function forget(message) {
    sessionStorage.removeItem(KEY);
    state.token = null;
    state.generation += 1;
    if (state.abort) { state.abort.abort(); state.abort = null; }
    if (state.poll) { clearInterval(state.poll); state.poll = null; }
    showLogin(message);
  }

  $("login").addEventListener("submit", function (event) {
    event.preventDefault();
    var field = $("token");
    var token = field.value.trim();
    field.value = "";
    if (!token) { return; }
    sessionStorage.setItem(KEY, token);
    state.token = token;
    connect();
  });
  $("logout").addEventListener("click", function () { forget(); });

  // MARK: - Connecting

  function connect() {
    var generation = ++state.generation;
    $("login").hidden = true;
    $("logout").hidden = false;
    setStatus("connecting…");
    Promise.all([
      api("/v1/live/map.svg").then(function (r) { return r.text(); }),
      api("/v1/regions").then(function (r) { return r.json(); }),
      api("/v1/live/snapshot").then(function (r) { return r.json(); })
    ]).then(function (results) {
      if (generation !== state.generation) { return; }
      showMap(results[0]);
      state.regions = {};
      (results[1].features || []).forEach(function (feature) {
        var properties = feature.properties || {};
        var id = properties.id || feature.id;
        properties.geometry = feature.geometry ? feature.geometry.type : "";
        state.regions[id] = properties;
      });
      var snapshot = results[2];
      state.seq = snapshot.seq;
      state.tracksSeq = snapshot.tracks_seq;
      state.tiles = snapshot.map_tiles;
      if (state.tiles && state.tiles.attribution) {
        $("attribution").textContent = state.tiles.attribution;
        $("attribution").hidden = false;
      }
      snapshot.devices.forEach(function (device) { updateDevice(device.device, device.track, device.last); });
      $("feed").textContent = "";
      snapshot.events.forEach(function (event) { addEvent(event, false); });
      drawTiles();
      refreshOpenVisits();
      follow(generation);
      state.poll = setInterval(function () { pollTracks(generation); }, 1000);
    }).catch(function (error) {
      if (state.token) { setStatus("cannot connect: " + error.message, "error"); }
    });
  }

  // MARK: - The map

  function element(name, attributes) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attributes || {}).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    return node;
  }

  function showMap(text) {
    var doc = new DOMParser().parseFromString(text, "image/svg+xml");
    var svg = document.importNode(doc.documentElement, true);
    $("map").replaceChildren(svg);
    state.svg = svg;
    state.devices = {};
    state.tileImages = {};
    var viewport = svg.querySelector(".viewport");
    var labels = svg.querySelector(".labels");
    ["live-tracks", "live-events", "live-devices"].forEach(function (name) {
      viewport.insertBefore(element("g", { "class": name }), labels);
    });
    state.map = window.FencepostMap.attach(svg);
    state.map.onChange(function () { drawTiles(); fitLabels(); });
    $("zoom-in").onclick = state.map.zoomIn;
    $("zoom-out").onclick = state.map.zoomOut;
    $("zoom-reset").onclick = state.map.reset;
    svg.addEventListener("click", function (event) {
      if (state.map.wasDragged()) { return; }
      var target = event.target.closest ? event.target.closest("[data-region-id]") : null;
      if (target) { showRegion(target.getAttribute("data-region-id")); }
    });
  }

  function place(node, x, y) {
    node.__base = [x, y];
    node.setAttribute("transform", "translate(" + x + " " + y + ") scale(" + (1 / state.map.view.k) + ")");
  }

  function colour(device) {
    if (!state.colours[device]) {
      state.colours[device] = COLOURS[Object.keys(state.colours).length % COLOURS.length];
    }
    return state.colours[device];
  }

  function updateDevice(device, track, last) {
    if (!state.map) { return; }
    var entry = state.devices[device];
    if (!entry) {
      entry = state.devices[device] = {
        path: element("path", { "class": "live-track", "data-device": device, stroke: colour(device) }),
        dot: element("circle", { "class": "device-position fixed-size", "data-device": device, r: 6, fill: colour(device) }),
        label: element("text", { "class": "live-label fixed-size", "data-label-device": device, x: 9, y: 4 })
      };
      entry.label.textContent = device;
      var title = element("title");
      entry.dot.appendChild(title);
      state.svg.querySelector(".live-tracks").appendChild(entry.path);
      state.svg.querySelector(".live-devices").appendChild(entry.dot);
      state.svg.querySelector(".live-devices").appendChild(entry.label);
    }
    var points = (track || []).map(function (p) { return state.map.project(p[0], p[1]); });
    if (points.length > 1) {
      entry.path.setAttribute("d", "M" + points.map(function (p) { return p.x.toFixed(1) + " " + p.y.toFixed(1); }).join("L"));
    }
    var end = track && track.length ? { lon: track[track.length - 1][0], lat: track[track.length - 1][1], time: track[track.length - 1][2] } : last;
    if (!end) { return; }
    var at = state.map.project(end.lon, end.lat);
    place(entry.dot, at.x, at.y);
    place(entry.label, at.x, at.y);
    fitLabel(entry.label);
    entry.dot.firstChild.textContent = device + " at " + end.time;
    entry.dot.setAttribute("data-time", end.time);
  }

  // A device's label goes left of its dot when, right of it, the map's edge would cut it.
  function fitLabel(label) {
    var map = state.map, base = label.__base;
    if (!map || !base) { return; }
    var right = base[0] * map.view.k + map.view.x + 12 + label.textContent.length * 7.5;
    var left = right > map.width;
    label.setAttribute("x", left ? -9 : 9);
    label.setAttribute("text-anchor", left ? "end" : "start");
  }

  function fitLabels() {
    Object.keys(state.devices).forEach(function (device) { fitLabel(state.devices[device].label); });
  }

  function pollTracks(generation) {
    api("/v1/live/tracks?after=" + state.tracksSeq).then(function (r) { return r.json(); }).then(function (answer) {
      if (generation !== state.generation) { return; }
      state.tracksSeq = answer.tracks_seq;
      answer.devices.forEach(function (device) { updateDevice(device.device, device.track, null); });
    }).catch(function () {});
  }

  function drawTiles() {
    var tiles = state.tiles, map = state.map;
    if (!tiles || !map) { return; }
    var layer = state.svg.querySelector(".basemap");
    var world = 2 * Math.PI * 6378137, k = map.view.k;
    var z = Math.max(0, Math.min(19, Math.round(Math.log(world * map.scale * k / 256) / Math.LN2)));
    var span = world / Math.pow(2, z), count = Math.pow(2, z);
    function tileX(px) { return Math.floor((map.originX + px / map.scale + world / 2) / span); }
    function tileY(py) { return Math.floor((world / 2 - (map.originY - py / map.scale)) / span); }
    var x0 = tileX(-map.view.x / k), x1 = tileX((map.width - map.view.x) / k);
    var y0 = tileY(-map.view.y / k), y1 = tileY((map.height - map.view.y) / k);
    var wanted = {};
    for (var x = Math.max(0, x0); x <= Math.min(count - 1, x1); x++) {
      for (var y = Math.max(0, y0); y <= Math.min(count - 1, y1); y++) {
        if (Object.keys(wanted).length > 200) { break; }
        var key = z + "/" + x + "/" + y;
        wanted[key] = true;
        if (state.tileImages[key]) { continue; }
        var image = element("image", {
          x: (x * span - world / 2 - map.originX) * map.scale, y: (map.originY - (world / 2 - y * span)) * map.scale,
          width: span * map.scale + 0.5, height: span * map.scale + 0.5, preserveAspectRatio: "none"
        });
        image.setAttribute("href", tiles.url.replace("{z}", z).replace("{x}", x).replace("{y}", y));
        layer.appendChild(image);
        state.tileImages[key] = image;
      }
    }
    Object.keys(state.tileImages).forEach(function (key) {
      if (!wanted[key]) { state.tileImages[key].remove(); delete state.tileImages[key]; }
    });
  }

  // MARK: - Events

  function addEvent(event, fresh) {
    var feed = $("feed");
    if (feed.querySelector('[data-event-id="' + event.id + '"]')) { return; }
    var item = document.createElement("li");
    item.setAttribute("data-event-id", event.id);
    if (fresh) { item.className = "fresh"; }
    var kind = document.createElement("span");
    kind.className = "kind " + event.kind;
    kind.textContent = event.kind;
    var name = state.regions[event.region] && state.regions[event.region].name;
    var text = document.createTextNode(" " + event.device + " · " + (name ? name + " (" + event.region + ")" : (event.region || "")) +
      (event.flags && event.flags.length ? " · " + event.flags.join(", ") : "") + " ");
    var when = document.createElement("span");
    when.className = "when";
    when.textContent = event.time;
    item.appendChild(kind); item.appendChild(text); item.appendChild(when);
    feed.insertBefore(item, feed.firstChild);
    while (feed.children.length > 200) { feed.removeChild(feed.lastChild); }
    if (state.map && typeof event.lat === "number" && typeof event.lon === "number") {
      var at = state.map.project(event.lon, event.lat);
      var marker = element("path", {
        "class": "event " + event.kind + " fixed-size", "data-event-id": event.id, "data-device": event.device,
        d: event.kind === "exit" ? "M-4 -4h8v8h-8Z" : (event.kind === "dwell" ? "M0 -5.5l5.5 5.5l-5.5 5.5l-5.5 -5.5Z" : "M-4.5 0a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0 -9 0Z")
      });
      var title = element("title");
      title.textContent = event.kind + " · " + event.device + " · " + event.region + " · " + event.time;
      marker.appendChild(title);
      state.svg.querySelector(".live-events").appendChild(marker);
      place(marker, at.x, at.y);
    }
  }

  /// Reads the Server-Sent Events stream through fetch, with the token in a header, and
  /// reconnects from the last id after a failure.
  function follow(generation) {
    if (generation !== state.generation) { return; }
    var controller = new AbortController();
    state.abort = controller;
    api("/v1/events/stream", { headers: { "Last-Event-ID": String(state.seq) }, signal: controller.signal }).then(function (response) {
      setStatus("live", "live");
      var reader = response.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function read() {
        return reader.read().then(function (chunk) {
          if (chunk.done) { throw new Error("stream ended"); }
          buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n/g, "\n");
          var split;
          while ((split = buffer.indexOf("\n\n")) >= 0) {
            handle(buffer.slice(0, split));
            buffer = buffer.slice(split + 2);
          }
          return read();
        });
      }
      return read();
    }).catch(function () {
      if (generation !== state.generation || !state.token) { return; }
      setStatus("reconnecting…", "error");
      setTimeout(function () { follow(generation); }, 2000);
    });
  }

  function handle(block) {
    var id = null, data = [];
    block.split("\n").forEach(function (line) {
      if (line.indexOf("id:") === 0) { id = line.slice(3).trim(); }
      else if (line.indexOf("data:") === 0) { data.push(line.slice(5).replace(/^ /, "")); }
    });
    if (id !== null) { state.seq = parseInt(id, 10) || state.seq; }
    if (!data.length) { return; }
    var event;
    try { event = JSON.parse(data.join("\n")); } catch (error) { return; }
    addEvent(event, true);
    if (event.kind === "enter" || event.kind === "exit") { refreshOpenVisits(); }
  }

  // MARK: - Visits and regions

  function refreshOpenVisits() {
    api("/v1/visits?open=true").then(function (r) { return r.json(); }).then(function (answer) {
      var list = $("open-visits");
      list.textContent = "";
      var open = {};
      answer.visits.forEach(function (visit) {
        open[visit.region] = true;
        var item = document.createElement("li");
        item.setAttribute("data-visit-id", visit.id);
        var name = state.regions[visit.region] && state.regions[visit.region].name;
        item.textContent = visit.device + " in " + (name ? name + " (" + visit.region + ")" : visit.region) + " since " + visit.entered_at;
        list.appendChild(item);
      });
      $("open-count").textContent = "(" + answer.visits.length + ")";
      if (!state.svg) { return; }
      var shapes = state.svg.querySelectorAll(".regions [data-region-id]");
      for (var i = 0; i < shapes.length; i++) {
        shapes[i].classList.toggle("has-open-visit", !!open[shapes[i].getAttribute("data-region-id")]);
      }
    }).catch(function () {});
  }

  function showRegion(id) {
    var panel = $("region-details");
    panel.textContent = "";
    var heading = document.createElement("h2");
    var properties = state.regions[id] || { id: id };
    heading.textContent = properties.name ? properties.name + " (" + id + ")" : id;
    var table = document.createElement("table");
    Object.keys(properties).sort().forEach(function (key) {
      var row = document.createElement("tr"), th = document.createElement("th"), td = document.createElement("td");
      th.textContent = key;
      var value = properties[key];
      td.textContent = typeof value === "object" ? JSON.stringify(value) : String(value);
      row.appendChild(th); row.appendChild(td); table.appendChild(row);
    });
    panel.appendChild(heading);
    panel.appendChild(table);
    panel.hidden = false;
    var selected = state.svg.querySelectorAll(".region.selected");
    for (var i = 0; i < selected.length; i++) { selected[i].classList.remove("selected"); }
    var shape = state.svg.querySelector('.regions [data-region-id="' + id + '"]');
    if (shape) { shape.classList.add("selected"); }
  }

  state.token = sessionStorage.getItem(KEY);
  if (state.token) { connect(); } else { showLogin(); }
})();