"""replbench: a benchmark harness for MySQL-style row-based replication (master + two replicas, an aiohttp
service in front, vegeta as the load generator).

Imports run one way, top to bottom: cli → commands, benchcommands → run, sweep, study, applycap, report, compare →
the pieces (bringup, topology, dataset, appserver, knobs, attack, sampling, lag, binlog, counters, timeline,
targets, scenario, studyfile) → stats, args, sql, processes, progress, harnesslog, config."""

__version__ = "0.2.0"
