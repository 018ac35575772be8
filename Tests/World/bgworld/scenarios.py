"""Built-in scenarios, as data. A scenario file (`--scenario-file PATH.json`) has the
same shape:

{
  "name": "…",
  "radio": {"tx_power_at_1m": -59, "path_loss_exponent": 2.0, "sigma_db": 2.0,
            "max_range_m": 30, "min_rssi": -100},
  "tags": [
    {"id": "aiko", "kind": "ibeacon", "uuid": "…", "major": 100, "minor": 1,
     "measured_power": -59, "address": "C0:…", "address_type": "random",
     "interval_ms": 100, "connectable": false,
     "distance": 1.0                         # fixed, or:
     "path": [[0, 12], [8, 1.0], [40, null]], "loop": true}   # (t s, metres|null)
    {"id": "b", "kind": "eddystone-uid", "namespace": "20 hex", "instance": "12 hex", …}
    {"id": "c", "kind": "named", "name": "…", "address_type": "public", …}
    {"id": "d", "kind": "manufacturer", "company_id": 89, "payload_hex": "…", …}
    {"id": "tag-1001", "kind": "ibeacon", …, "proof": "genuine",     # or clone, silent,
     "master_key": "64 hex", "proof_tag_id": "tag-1001",             # malicious-… (peer.py);
     "advertise_after": 60}                                          # or "key": "64 hex"
  ],
  "noise": {"count": 20, "interval_ms": [100, 1000], "distance_m": [1, 25]}
}

A rooms world (bgworld/rooms.py) adds "gateways": [{"id": …, "position": [x, y]}, …],
"walls": [{"from": [x, y], "to": [x, y], "loss_db": 6}, …] and "fading": {…}; its tags
have "position": [x, y] or a "path" of [t, [x, y] | null] instead of distances.
"""

from __future__ import annotations

import copy
import json
import random

DEMO_UUID = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
EDDYSTONE_NAMESPACE = "edd1ebeac04e5defa017"

# iBeacons at 1, 3 and 8 m advertising every 100, 200 and 500 ms: three clearly
# separated RSSI levels (-59, -68.5, -77 dBm mean) and rates (≈9.5, 4.9, 2.0 /s with the
# 0–10 ms advDelay).
THREE_TAGS = {
    "name": "three-tags",
    "tags": [
        {"id": "tag-1m", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 100, "minor": 1,
         "address": "C0:11:22:33:44:01", "interval_ms": 100, "distance": 1.0},
        {"id": "tag-3m", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 100, "minor": 2,
         "address": "C0:11:22:33:44:02", "interval_ms": 200, "distance": 3.0},
        {"id": "tag-8m", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 100, "minor": 3,
         "address": "C0:11:22:33:44:03", "interval_ms": 500, "distance": 8.0},
    ],
}

# People walking up to the door, lingering and leaving, on loops of different lengths
# so that within the first minute someone arrives and someone leaves. null = away.
DEMO = {
    "name": "demo",
    "tags": [
        {"id": "aiko", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 100, "minor": 1,
         "address": "C0:11:22:33:44:55", "interval_ms": 200,
         "path": [[0, 12], [8, 1.0], [38, 1.5], [46, 15], [48, None], [90, None]], "loop": True},
        {"id": "bruno", "kind": "ibeacon", "uuid": DEMO_UUID, "major": 100, "minor": 2,
         "address": "C0:11:22:33:44:66", "interval_ms": 300,
         "path": [[0, None], [15, None], [16, 20], [25, 2.0], [75, 2.5], [85, 20], [86, None], [120, None]],
         "loop": True},
        {"id": "chen", "kind": "eddystone-uid", "namespace": EDDYSTONE_NAMESPACE, "instance": "00000000c4e1",
         "address": "C0:11:22:33:44:77", "interval_ms": 250,
         "path": [[0, None], [30, None], [31, 18], [40, 0.8], [80, 1.2], [88, 18], [89, None], [110, None]],
         "loop": True},
        {"id": "dana", "kind": "named", "name": "Dana's badge", "address": "00:1B:DC:07:32:10",
         "address_type": "public", "interval_ms": 500,
         "path": [[0, None], [45, None], [46, 25], [55, 1.2], [100, 1.0], [108, 25], [109, None], [150, None]],
         "loop": True},
        {"id": "printer", "kind": "named", "name": "Office printer", "interval_ms": 1000,
         "address": "C4:AA:BB:CC:DD:01", "distance": 7.0},
    ],
    "noise": {"count": 6, "interval_ms": [200, 1000], "distance_m": [4, 25]},
}

NOISE = {
    "name": "noise",
    "tags": [],
    "noise": {"count": 50, "interval_ms": [100, 1000], "distance_m": [1, 25]},
}

BUILTIN = {"three-tags": THREE_TAGS, "demo": DEMO, "noise": NOISE}

# Company identifiers real phones and gadgets advertise (Microsoft, Samsung, Google…):
# noise looks like a real street, not like the configured tags.
_NOISE_COMPANIES = [0x0006, 0x0075, 0x00E0, 0x0087, 0x0157, 0x0059]
_NOISE_NAMES = ["LE-Bose", "Galaxy Buds", "Mi Band", "JBL Flip", "Tile", "Fitbit"]


def expand(scenario: dict, seed: int, noise_count: int | None = None) -> dict:
    """The scenario with its `noise` section turned into concrete tags (reproducibly)."""
    result = copy.deepcopy(scenario)
    noise = result.pop("noise", None)
    if noise_count is not None:
        noise = dict(noise or {"interval_ms": [100, 1000], "distance_m": [1, 25]})
        noise["count"] = noise_count
    if not noise:
        return result
    rng = random.Random(seed ^ 0x5EED)
    low_ms, high_ms = noise.get("interval_ms", [100, 1000])
    near, far = noise.get("distance_m", [1, 25])
    tags = result.setdefault("tags", [])
    for i in range(int(noise.get("count", 0))):
        spec = {"id": f"noise-{i}", "interval_ms": rng.uniform(low_ms, high_ms), "distance": rng.uniform(near, far)}
        if rng.random() < 0.5:
            spec.update(kind="manufacturer", company_id=rng.choice(_NOISE_COMPANIES),
                        payload_hex=rng.randbytes(rng.randrange(4, 20)).hex())
        else:
            spec.update(kind="named", name=f"{rng.choice(_NOISE_NAMES)} {rng.randrange(100, 999)}")
        tags.append(spec)
    return result


def load(name: str | None, path: str | None) -> dict:
    if path:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    if name not in BUILTIN:
        raise ValueError(f"unknown scenario {name!r} (built in: {', '.join(sorted(BUILTIN))})")
    return BUILTIN[name]
