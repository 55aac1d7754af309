"""Realistic traffic for the UI tests and the README screenshots: a small radio telescope and
a storage ring — antennas, power supplies, beam current — logging and updating info objects."""

from __future__ import annotations

import math
import random
import time
from typing import Any, Dict, List

import herald
from herald import Kind, Priority
from herald.wire.record import Origin, Record

LOG_LINES = [
    (
        Priority.INFO,
        "ANTENNA.{a}.Mount",
        "acu",
        "tracking source J0854+2006, az {az:.3f} el {el:.3f}",
    ),
    (
        Priority.DEBUG,
        "ANTENNA.{a}.Mount",
        "acu",
        "servo loop sample: err_az={e:.5f} err_el={e2:.5f}",
    ),
    (Priority.INFO, "ANTENNA.{a}.Receiver", "rxctl", "band 6 LO locked at 226.0 GHz"),
    (Priority.NOTICE, "CORRELATOR.Scan", "corr-ctl", "scan {n} started: 24 antennas, 4 basebands"),
    (Priority.WARNING, "ANTENNA.{a}.Mount", "acu", "encoder drift {e:.2f} arcsec above threshold"),
    (Priority.INFO, "SR.mag_ps_b{p:02d}", "psctl", "current setpoint reached: {c:.3f} A"),
    (Priority.ERROR, "ANTENNA.{a}.Cryo", "cryoctl", "stage 2 temperature 4.9 K above limit 4.5 K"),
    (Priority.INFO, "runcontrol.cmd", "runcontrol", "run {n} configured by operator"),
    (Priority.DEBUG, "SR.BPM.{p:02d}", "bpm-daq", "orbit sample x={e:.4f} mm y={e2:.4f} mm"),
    (Priority.CRITICAL, "SR.RF.Cavity2", "rfctl", "reflected power trip, RF off"),
]
ANTENNAS = ["DV01", "DV02", "DV03", "DA41", "DA42", "PM01"]


def log_record(i: int, subject: str, priority: Priority, text: str, process: str) -> Record:
    host = "ctrl-" + subject.split(".")[0].lower()[:8]
    return Record(
        kind=Kind.LOG,
        subject=subject,
        time=time.time_ns(),
        priority=priority,
        origin=Origin(host=host, process=f"{process}[{4200 + i % 7}]", thread="main"),
        text=text,
        fields={"n": i},
    )


def publish_logs(client: herald.Client, count: int, seed: int = 1) -> None:
    """Publishes `count` log records of the facility, mostly INFO and DEBUG."""
    rng = random.Random(seed)
    weights = [30, 25, 10, 3, 6, 10, 2, 2, 10, 1]
    for i in range(count):
        priority, subject, process, text = rng.choices(LOG_LINES, weights)[0]
        values: Dict[str, Any] = {
            "a": rng.choice(ANTENNAS),
            "p": rng.randint(1, 12),
            "n": 4100 + i // 50,
            "az": rng.uniform(0, 360),
            "el": rng.uniform(20, 80),
            "e": rng.gauss(0, 1),
            "e2": rng.gauss(0, 1),
            "c": 182.5 + rng.gauss(0, 0.01),
        }
        client.publish_record(
            log_record(i, subject.format(**values), priority, text.format(**values), process)
        )
    client.flush(30)


def declare_types(client: herald.Client) -> None:
    client.declare_type(
        "Device",
        [("state", "string", "OFF, STANDBY, ON or FAULT")],
        description="anything with a state",
    )
    client.declare_type(
        "PowerSupply",
        [
            ("current", "double", "output current (A)"),
            ("voltage", "double", "output voltage (V)"),
            ("interlocks", "u32", "active interlock bits"),
        ],
        base="Device",
        description="magnet power supply",
    )
    client.declare_type(
        "Antenna",
        [
            ("azimuth", "double", "azimuth (deg)"),
            ("elevation", "double", "elevation (deg)"),
            ("wind", "float", "wind speed at the antenna (m/s)"),
        ],
        base="Device",
        description="12 m antenna",
    )
    client.declare_type(
        "BeamMonitor",
        [
            ("current", "double", "stored beam current (mA)"),
            ("lifetime", "double", "beam lifetime (h)"),
        ],
        description="DCCT beam current monitor",
    )


def create_objects(client: herald.Client) -> List[str]:
    """Creates the facility's info objects; returns their names."""
    names = []
    for i, a in enumerate(ANTENNAS):
        client.set_info(
            f"ANTENNA.{a}",
            "Antenna",
            state="ON",
            azimuth=120.0 + i,
            elevation=45.0 + i,
            wind=3.5 + i / 10,
        )
        names.append(f"ANTENNA.{a}")
    for p in range(1, 5):
        client.set_info(
            f"SR.mag_ps_b{p:02d}",
            "PowerSupply",
            state="ON",
            current=182.5 + p / 100,
            voltage=41.2,
            interlocks=0,
        )
        names.append(f"SR.mag_ps_b{p:02d}")
    client.set_info("Beam.Current", "BeamMonitor", current=199.8, lifetime=11.2)
    names.append("Beam.Current")
    return names


def put_history(server: Any, name: str, type_: str, minutes: int = 15, points: int = 180) -> None:
    """PUTs `points` past values of `name` over the last `minutes` (the archive keeps them)."""
    now = time.time_ns()
    step = minutes * 60 * 10**9 // points
    for i in range(points):
        t = now - (points - i) * step
        phase = i / points * 2 * math.pi
        body = {
            "type": type_,
            "time": t,
            "attributes": {
                "current": round(200 - 6 * (i / points) + 0.4 * math.sin(phase * 5), 4),
                "lifetime": round(11 + math.cos(phase), 3),
            },
        }
        server.put_info(name, body)
