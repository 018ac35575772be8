"""Path-loss model: what RSSI a gateway at the door measures for a tag at distance d.

Log-distance model, rssi = P(1 m) - 10·n·log10(d) + N(0, σ), clamped to the HCI
range -127…20. Beyond `max_range_m`, or when the drawn RSSI is below the receiver's
sensitivity `min_rssi`, the PDU is simply not received: that is how a tag "leaves".
"""

from __future__ import annotations

import dataclasses
import math
import random

from . import hcibytes


@dataclasses.dataclass
class RadioModel:
    tx_power_at_1m: float = -59.0
    path_loss_exponent: float = 2.0
    sigma_db: float = 2.0
    max_range_m: float = 30.0
    min_rssi: float = -100.0
    # Distances below this are treated as this: log10(0) has no RSSI.
    min_distance_m: float = 0.1

    @classmethod
    def from_dict(cls, data: dict | None) -> "RadioModel":
        data = dict(data or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown radio keys: {sorted(unknown)} (valid: {sorted(known)})")
        return cls(**{k: float(v) for k, v in data.items()})

    def mean_rssi(self, distance_m: float, tx_power_at_1m: float | None = None) -> float:
        p1 = self.tx_power_at_1m if tx_power_at_1m is None else tx_power_at_1m
        d = max(self.min_distance_m, distance_m)
        return p1 - 10.0 * self.path_loss_exponent * math.log10(d)

    def sample(self, distance_m: float, rng: random.Random, tx_power_at_1m: float | None = None) -> int | None:
        """An RSSI for one received PDU, or None when the PDU is not received."""
        if not math.isfinite(distance_m) or distance_m > self.max_range_m:
            return None
        rssi = self.mean_rssi(distance_m, tx_power_at_1m) + rng.gauss(0.0, self.sigma_db)
        if rssi < self.min_rssi:
            return None
        return int(max(hcibytes.RSSI_MIN, min(hcibytes.RSSI_MAX, round(rssi))))
