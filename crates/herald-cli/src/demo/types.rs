//! The information types the simulated facility declares, with attribute descriptions.

use herald_proto::info::{AttributeData, TypeData};

fn attribute(name: &str, attr_type: &str, description: &str) -> AttributeData {
    AttributeData {
        name: name.to_string(),
        attr_type: attr_type.to_string(),
        description: description.to_string(),
    }
}

fn declared(name: &str, description: &str, attributes: Vec<AttributeData>) -> TypeData {
    TypeData {
        name: name.to_string(),
        base: None,
        description: description.to_string(),
        attributes,
    }
}

/// Returns every type the demo declares.
pub fn all_types() -> Vec<TypeData> {
    vec![
        declared(
            "AntennaMount",
            "an antenna's mount: where it points and what the wind does",
            vec![
                attribute("az", "double", "azimuth, degrees from north"),
                attribute("el", "double", "elevation, degrees"),
                attribute("tracking", "bool", "on source within 0.02 degrees"),
                attribute("wind_load", "double", "wind force on the dish, kN"),
            ],
        ),
        declared(
            "Receiver",
            "an antenna's receiver",
            vec![
                attribute("band", "u32", "receiver band in use (1..10)"),
                attribute("lo_ghz", "double", "local oscillator frequency, GHz"),
                attribute("locked", "bool", "local oscillator phase-locked"),
                attribute(
                    "if_power_dbm",
                    "double",
                    "intermediate-frequency power, dBm",
                ),
            ],
        ),
        declared(
            "Cryostat",
            "an antenna's receiver cryostat",
            vec![
                attribute(
                    "stage1_k",
                    "double",
                    "first (40 K) stage temperature, kelvin",
                ),
                attribute(
                    "stage2_k",
                    "double",
                    "second (4 K) stage temperature, kelvin",
                ),
                attribute("pressure_mbar", "double", "vacuum pressure, mbar"),
            ],
        ),
        declared(
            "Weather",
            "a weather station",
            vec![
                attribute(
                    "temperature_c",
                    "double",
                    "air temperature, degrees Celsius",
                ),
                attribute("humidity", "double", "relative humidity, percent"),
                attribute("wind_speed_ms", "double", "wind speed, m/s"),
                attribute(
                    "wind_dir_deg",
                    "double",
                    "wind direction, degrees from north",
                ),
            ],
        ),
        declared(
            "CorrelatorStatus",
            "the correlator as a whole",
            vec![
                attribute("mode", "string", "observing mode"),
                attribute("antennas", "u32", "antennas on source and correlated"),
                attribute("dump_rate_hz", "double", "integrations dumped per second"),
                attribute("data_rate_mbps", "double", "output data rate, Mbit/s"),
            ],
        ),
        declared(
            "ComputeNode",
            "one correlator computer",
            vec![
                attribute("cpu_load", "double", "CPU load, percent"),
                attribute(
                    "temperature_c",
                    "double",
                    "board temperature, degrees Celsius",
                ),
                attribute("packets_per_s", "double", "input packets per second"),
            ],
        ),
        declared(
            "Sensor",
            "one monitored quantity",
            vec![
                attribute("value", "double", "the reading, in unit"),
                attribute("unit", "string", "unit of the reading"),
                attribute("ok", "bool", "the reading is within its limit"),
            ],
        ),
        declared(
            "SubsystemHealth",
            "how a subsystem is doing",
            vec![
                attribute("state", "string", "OPERATIONAL or DEGRADED"),
                attribute("errors", "u32", "ERROR or worse logged since start"),
                attribute("warnings", "u32", "WARNINGs logged since start"),
                attribute("uptime_s", "u64", "seconds since the subsystem started"),
            ],
        ),
        declared(
            "ArrayStatus",
            "the observing run",
            vec![
                attribute("run", "u32", "run number"),
                attribute("scan", "u32", "scan within the run"),
                attribute("state", "string", "IDLE, CONFIGURED or OBSERVING"),
                attribute("source", "string", "source observed"),
            ],
        ),
    ]
}
