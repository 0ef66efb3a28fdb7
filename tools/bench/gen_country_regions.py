#!/usr/bin/env python3
"""Write a country-sized region config for the million-region benchmark (issue #33, item 3).

90 % circles (radius 50-500 m), 10 % star-shaped polygons (5-200 vertices around a centre, so
every ring is simple and valid); half of the regions clustered around 40 cities, the rest uniform
over a box the size of Germany. Deterministic for a given --seed. Streams the output: memory stays
flat whatever --regions.

    gen_country_regions.py --regions 1000000 --seed 7 --out regions.geojson
"""
import argparse, math, random

BOX = (5.9, 47.3, 15.0, 55.0)  # lon/lat box of Germany
M_PER_DEG_LAT = 111_320.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--regions", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cities", type=int, default=40)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    lon0, lat0, lon1, lat1 = BOX
    cities = [(rnd.uniform(lon0 + 0.3, lon1 - 0.3), rnd.uniform(lat0 + 0.3, lat1 - 0.3),
               rnd.uniform(3_000, 15_000)) for _ in range(a.cities)]

    def centre(i):
        if i % 2 == 0:  # clustered: Gaussian around a city, sigma = the city's radius
            clon, clat, sigma = cities[rnd.randrange(len(cities))]
            dy, dx = rnd.gauss(0, sigma), rnd.gauss(0, sigma)
            return (clon + dx / (M_PER_DEG_LAT * math.cos(math.radians(clat))), clat + dy / M_PER_DEG_LAT)
        return rnd.uniform(lon0, lon1), rnd.uniform(lat0, lat1)

    with open(a.out, "w") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        for i in range(a.regions):
            lon, lat = centre(i)
            if i % 10 != 9:
                r = round(rnd.uniform(50, 500), 1)
                f.write('{"type":"Feature","geometry":{"type":"Point","coordinates":[%.7f,%.7f]},'
                        '"properties":{"id":"c%d","name":"circle %d","radius":%s}}' % (lon, lat, i, i, r))
            else:
                n = rnd.randint(5, 200)
                r = rnd.uniform(80, 800)
                m_lon = M_PER_DEG_LAT * math.cos(math.radians(lat))
                pts = []
                for k in range(n):  # one vertex per angle step: a star around the centre is simple
                    ang = 2 * math.pi * k / n
                    rr = r * rnd.uniform(0.5, 1.0)
                    pts.append('[%.7f,%.7f]' % (lon + rr * math.cos(ang) / m_lon, lat + rr * math.sin(ang) / M_PER_DEG_LAT))
                pts.append(pts[0])
                f.write('{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[%s]]},'
                        '"properties":{"id":"p%d","name":"polygon %d"}}' % (",".join(pts), i, i))
            f.write(",\n" if i + 1 < a.regions else "\n")
        f.write("]}\n")


if __name__ == "__main__":
    main()
