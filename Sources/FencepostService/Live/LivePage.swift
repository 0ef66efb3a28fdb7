import FencepostRender

/// The live page's HTML and stylesheet; the script is in `LivePage+Script.swift`.
enum LivePage {
    static let html = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Fencepost · live</title>
        <link rel="stylesheet" href="/assets/live.css">
        </head>
        <body>
        <header>
          <h1>Fencepost <span>live</span></h1>
          <span id="status" class="status">not connected</span>
          <form id="login" autocomplete="off">
            <label for="token">Token</label>
            <input id="token" name="token" type="password" placeholder="fp_…" autocomplete="off" spellcheck="false" required>
            <button type="submit">Connect</button>
          </form>
          <button id="logout" type="button" hidden>Forget token</button>
        </header>
        <main>
          <section id="map-panel">
            <div class="controls"><button id="zoom-in" type="button" title="Zoom in (+)">+</button><button id="zoom-out" type="button" title="Zoom out (-)">−</button><button id="zoom-reset" type="button" title="Whole map (0)">Fit</button>
            <span class="hint">Drag to pan, wheel to zoom, click a region for its details.</span></div>
            <div id="map"><p class="empty">Enter a token to see the regions, devices and events.</p></div>
            <div id="attribution" hidden></div>
          </section>
          <aside>
            <section id="region-details" hidden></section>
            <section><h2>Open visits <span id="open-count"></span></h2><ul id="open-visits"></ul></section>
            <section><h2>Events</h2><ol id="feed"></ol></section>
          </aside>
        </main>
        <script src="/assets/map.js"></script>
        <script src="/assets/live.js"></script>
        </body>
        </html>

        """

    static let style = """
        [hidden]{display:none !important}
        body{margin:0;font:14px "DejaVu Sans",Verdana,Arial,sans-serif;color:#1c1917;background:#fafaf9}
        header{display:flex;flex-wrap:wrap;align-items:center;gap:14px;padding:8px 14px;background:#1c1917;color:#fafaf9}
        h1{font-size:17px;margin:0}h1 span{font-weight:normal;color:#fbbf24}
        .status{font-size:12px;padding:2px 8px;border-radius:10px;background:#57534e}
        .status.live{background:#15803d}.status.error{background:#b91c1c}
        form{display:flex;gap:6px;align-items:center;margin-left:auto}
        form input{font:inherit;padding:3px 6px;width:220px}
        button{font:inherit;padding:3px 10px;border-radius:4px;border:1px solid #a8a29e;background:#fff;cursor:pointer}
        #logout{margin-left:auto}
        main{display:flex;gap:12px;padding:12px;align-items:flex-start}
        #map-panel{flex:1 1 auto;min-width:0;position:relative}
        .controls{margin-bottom:6px}.controls button{min-width:34px;margin-right:4px}
        .hint{color:#78716c;font-size:12px;margin-left:8px}
        #map svg{display:block;width:100%;height:calc(100vh - 120px);min-height:360px;border:1px solid #d6d3d1;background:#f3f1ec;cursor:grab;touch-action:none}
        #attribution{font-size:11px;color:#57534e;text-align:right}
        aside{flex:0 0 340px;display:flex;flex-direction:column;gap:12px}
        aside section{background:#fff;border:1px solid #d6d3d1;border-radius:4px;padding:10px}
        aside h2{font-size:14px;margin:0 0 6px}
        #feed,#open-visits{list-style:none;margin:0;padding:0;max-height:420px;overflow-y:auto;font-size:12px}
        #feed li,#open-visits li{padding:4px 2px;border-bottom:1px solid #f5f5f4}
        #feed li.fresh{animation:fresh 2s ease-out}
        @keyframes fresh{from{background:#fef3c7}to{background:transparent}}
        .kind{display:inline-block;min-width:42px;font-weight:bold}
        .kind.enter{color:#15803d}.kind.exit{color:#b91c1c}.kind.dwell{color:#6d28d9}
        .when{color:#78716c}
        #region-details th{text-align:left;vertical-align:top;padding:2px 8px 2px 0;color:#57534e;font-weight:normal;font-size:12px}
        #region-details td{font-size:12px;overflow-wrap:anywhere}
        .live-track{fill:none;stroke-width:2.4;stroke-linejoin:round;stroke-linecap:round;vector-effect:non-scaling-stroke;stroke-opacity:.85}
        .live-label{font-size:11px;font-weight:bold;fill:#111827;paint-order:stroke;stroke:#fff;stroke-width:3px}
        .region.selected{stroke:#111827;stroke-width:2.5}
        .empty{color:#78716c;padding:40px;text-align:center;border:1px dashed #d6d3d1}
        @media (max-width:900px){main{flex-direction:column}aside{flex-basis:auto;width:100%}}
        """
}
