(function () {
  "use strict";
  var R = 6378137, MAX_LAT = 85.05112878;
  function attach(svg) {
    var viewport = svg.querySelector(".viewport");
    var width = parseFloat(svg.getAttribute("data-map-width"));
    var height = parseFloat(svg.getAttribute("data-map-height"));
    var scale = parseFloat(svg.getAttribute("data-scale"));
    var originX = parseFloat(svg.getAttribute("data-origin-x"));
    var originY = parseFloat(svg.getAttribute("data-origin-y"));
    var view = { k: 1, x: 0, y: 0 };
    var listeners = [];
    var pending = false;

    function project(lon, lat) {
      var phi = Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI / 180;
      var x = R * lon * Math.PI / 180, y = R * Math.log(Math.tan(Math.PI / 4 + phi / 2));
      return { x: (x - originX) * scale, y: (originY - y) * scale };
    }
    function svgPoint(event) {
      var matrix = svg.getScreenCTM();
      if (!matrix) { return { x: 0, y: 0 }; }
      var point = svg.createSVGPoint();
      point.x = event.clientX; point.y = event.clientY;
      return point.matrixTransform(matrix.inverse());
    }
    function fixedSize(element) {
      if (!element.__base) {
        var match = /translate\(\s*([-\d.e]+)[ ,]+([-\d.e]+)\s*\)/.exec(element.getAttribute("transform") || "");
        element.__base = match ? [parseFloat(match[1]), parseFloat(match[2])] : [0, 0];
      }
      element.setAttribute("transform", "translate(" + element.__base[0] + " " + element.__base[1] + ") scale(" + (1 / view.k) + ")");
    }
    function niceMetres(target) {
      var power = Math.pow(10, Math.floor(Math.log10(target)));
      var steps = [5, 2, 1];
      for (var i = 0; i < steps.length; i++) { if (steps[i] * power <= target) { return steps[i] * power; } }
      return power;
    }
    function updateScaleBar() {
      var bar = svg.querySelector(".scale-bar");
      if (!bar) { return; }
      var perMetre = parseFloat(bar.getAttribute("data-pixels-per-metre")) * view.k;
      var metres = niceMetres(120 / perMetre), pixels = metres * perMetre;
      var rects = bar.querySelectorAll("rect");
      rects[0].setAttribute("width", pixels + 62);
      rects[1].setAttribute("width", pixels / 2);
      rects[2].setAttribute("x", 20 + pixels / 2);
      rects[2].setAttribute("width", pixels / 2);
      var text = bar.querySelector("text");
      text.setAttribute("x", 20 + pixels + 6);
      text.textContent = metres >= 1000 ? (metres / 1000) + " km" : metres + " m";
    }
    function render() {
      pending = false;
      viewport.setAttribute("transform", "translate(" + view.x + " " + view.y + ") scale(" + view.k + ")");
      var labels = svg.querySelectorAll(".labels text");
      for (var i = 0; i < labels.length; i++) {
        var label = labels[i];
        var min = parseFloat(label.getAttribute("data-min-zoom") || "1");
        label.style.display = min <= view.k * 1.0001 ? "" : "none";
        label.style.fontSize = (11 / view.k) + "px";
        label.style.strokeWidth = (3 / view.k) + "px";
      }
      var fixed = svg.querySelectorAll(".fixed-size");
      for (var j = 0; j < fixed.length; j++) { fixedSize(fixed[j]); }
      updateScaleBar();
      for (var n = 0; n < listeners.length; n++) { listeners[n](view); }
    }
    function schedule() {
      if (!pending) { pending = true; window.requestAnimationFrame(render); }
    }
    function zoomAt(factor, at) {
      var k = Math.max(0.25, Math.min(256, view.k * factor));
      view.x = at.x - (at.x - view.x) * k / view.k;
      view.y = at.y - (at.y - view.y) * k / view.k;
      view.k = k;
      schedule();
    }
    svg.addEventListener("wheel", function (event) {
      event.preventDefault();
      zoomAt(Math.exp(-event.deltaY * 0.0015), svgPoint(event));
    }, { passive: false });
    var drag = null;
    svg.addEventListener("pointerdown", function (event) {
      if (event.button !== 0) { return; }
      drag = { start: svgPoint(event), x: view.x, y: view.y, moved: false };
    });
    window.addEventListener("pointermove", function (event) {
      if (!drag) { return; }
      var here = svgPoint(event);
      if (Math.abs(here.x - drag.start.x) + Math.abs(here.y - drag.start.y) > 3) { drag.moved = true; }
      view.x = drag.x + here.x - drag.start.x;
      view.y = drag.y + here.y - drag.start.y;
      schedule();
    });
    window.addEventListener("pointerup", function () {
      if (drag && drag.moved) { svg.__dragged = true; window.setTimeout(function () { svg.__dragged = false; }, 0); }
      drag = null;
    });
    var controller = {
      svg: svg, width: width, height: height, scale: scale, originX: originX, originY: originY, view: view,
      project: project,
      zoomIn: function () { zoomAt(1.6, { x: width / 2, y: height / 2 }); },
      zoomOut: function () { zoomAt(1 / 1.6, { x: width / 2, y: height / 2 }); },
      reset: function () { view.k = 1; view.x = 0; view.y = 0; schedule(); },
      refresh: schedule,
      onChange: function (listener) { listeners.push(listener); },
      wasDragged: function () { return !!svg.__dragged; }
    };
    svg.setAttribute("tabindex", "0");
    svg.addEventListener("keydown", function (event) {
      if (event.key === "+" || event.key === "=") { controller.zoomIn(); }
      else if (event.key === "-") { controller.zoomOut(); }
      else if (event.key === "0") { controller.reset(); }
    });
    render();
    return controller;
  }
  window.FencepostMap = { attach: attach };
})();