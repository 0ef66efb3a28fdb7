#!/usr/bin/env python3
"""Scenarios of GPS that lies, for tools/bench/quality: a trace, its regions and the true events.

  lying_gps.py spike|zones|zones-layer --out DIR [--seed S] [--interval SECONDS]

spike: a walker at 1.4 m/s on a straight street, a fix every --interval seconds (default 10) with
  8 m of noise reported as 8 to 15 m accuracy. Circles of 40 m radius line the street, their
  edges 10 to 25 m from it (never entered); every other circle lies on the street (entered for
  about a minute). Once per circle, a fix jumps 200 m sideways into a never-entered circle at
  1.9 m reported accuracy (Ikolvi/Tracelet#294: an over-confident spike).
zones: two circles of 50 m radius whose centres are 72 m apart (home-assistant/core#175663). The
  device sits 12 m from the first's centre for 3 hours, a fix every --interval seconds; indoors its
  scatter and reported accuracy grow from 5 to 60 m and back. Truth: one visit of the first zone.
zones-layer: the same, both zones in one `layer` (a device is in one of them at a time).

Writes DIR/regions.geojson, DIR/trace.csv (time,lat,lon,accuracy) and DIR/truth.csv
(time,kind,region)."""
import argparse, datetime, json, math, random

LAT, LON = 47.37, 8.54
M_LAT = 111_320.0
M_LON = 111_320.0 * math.cos(math.radians(LAT))
T0 = datetime.datetime(2025, 6, 1, 8, 0, 0, tzinfo=datetime.timezone.utc)


def lonlat(x, y):
    return LON + x / M_LON, LAT + y / M_LAT


def stamp(t):
    return (T0 + datetime.timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%SZ")


def circle(region, x, y, radius):
    lon, lat = lonlat(x, y)
    return {"type": "Feature", "geometry": {"type": "Point", "coordinates": [round(lon, 7), round(lat, 7)]},
            "properties": {"id": region, "radius": radius}}


def spike(rnd, interval):
    speed, spacing, count, pause = 1.4, 400.0, 30, 60.0
    regions, truth, centres = [], [], []
    for i in range(count):
        x = spacing * (i + 1)
        if i % 3 == 0:  # on the street: entered, with a minute's stop at the centre
            regions.append(circle(f"stop{i}", x, 0, 40))
            centres.append(x)
        elif i % 3 == 1:  # beside it, its edge 10 to 25 m away: never entered
            regions.append(circle(f"near{i}", x, (40 + rnd.uniform(10, 25)) * rnd.choice([-1, 1]), 40))
        else:  # 200 m away: never entered; a spike lands in it
            regions.append(circle(f"far{i}", x, 200 * rnd.choice([-1, 1]), 40))

    def position(t):  # x along the street at time t, pausing at each stop's centre
        x, clock = 0.0, 0.0
        for c in centres:
            reach = clock + (c - x) / speed
            if t < reach:
                return x + (t - clock) * speed
            if t < reach + pause:
                return c
            x, clock = c, reach + pause
        return x + (t - clock) * speed

    clock, x = 0.0, 0.0
    for i, c in enumerate(centres):
        reach = clock + (c - x) / speed
        truth += [(reach - 40 / speed, "enter", f"stop{3 * i}"), (reach + pause + 40 / speed, "exit", f"stop{3 * i}")]
        x, clock = c, reach + pause
    end = clock + (spacing * (count + 1) - x) / speed
    fixes, spiked, t = [], set(), 0.0
    while t < end:
        x = position(t)
        far = next((r for r in regions if r["properties"]["id"].startswith("far")
                    and abs(x - float(r["properties"]["id"][3:] and spacing * (int(r["properties"]["id"][3:]) + 1))) < 20), None)
        if far is not None and far["properties"]["id"] not in spiked:
            spiked.add(far["properties"]["id"])
            lon, lat = far["geometry"]["coordinates"]
            fixes.append((t, x, (lat - LAT) * M_LAT, 1.9))
        else:
            fixes.append((t, x + rnd.gauss(0, 8), rnd.gauss(0, 8), round(rnd.uniform(8, 15), 1)))
        t += interval
    return regions, truth, fixes


def zones(rnd, interval):
    regions = [circle("home", 0, 0, 50), circle("neighbour", 72, 0, 50)]
    hours = 3
    steps = int(hours * 3600 / interval)
    fixes = []
    # Arrives from 300 m west at 1.4 m/s, sits 12 m from home's centre, leaves west.
    approach = int(300 / 1.4 / interval)
    t = 0.0
    for k in range(approach):
        fixes.append((t, -300 + 1.4 * interval * k + rnd.gauss(0, 5), rnd.gauss(0, 5), 5.0))
        t += interval
    enter = (300 - 50) / 1.4
    for k in range(steps):
        phase = k / steps
        accuracy = 5 + 55 * math.sin(math.pi * phase)  # 5 m, worsening to 60 m indoors, back
        fixes.append((t, 12 + rnd.gauss(0, accuracy / 1.5), rnd.gauss(0, accuracy / 1.5), round(accuracy, 1)))
        t += interval
    leave_start = t
    for k in range(approach):
        fixes.append((t, 12 - 1.4 * interval * k + rnd.gauss(0, 5), rnd.gauss(0, 5), 5.0))
        t += interval
    exit = leave_start + (50 + 12) / 1.4
    truth = [(enter, "enter", "home"), (exit, "exit", "home")]
    return regions, truth, fixes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["spike", "zones", "zones-layer"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--interval", type=float, default=10)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    regions, truth, fixes = (spike if a.scenario == "spike" else zones)(rnd, a.interval)
    if a.scenario == "zones-layer":
        for region in regions:
            region["properties"]["layer"] = "zones"
    with open(f"{a.out}/regions.geojson", "w") as f:
        json.dump({"type": "FeatureCollection", "features": regions}, f)
    with open(f"{a.out}/trace.csv", "w") as f:
        f.write("time,lat,lon,accuracy\n")
        for t, x, y, acc in fixes:
            lon, lat = lonlat(x, y)
            f.write(f"{stamp(t)},{lat:.7f},{lon:.7f},{acc}\n")
    with open(f"{a.out}/truth.csv", "w") as f:
        f.write("time,kind,region\n")
        for t, kind, region in sorted(truth):
            f.write(f"{stamp(t)},{kind},{region}\n")


if __name__ == "__main__":
    main()
