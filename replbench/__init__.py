"""replbench: a benchmark harness for MySQL-style row-based replication (master + two replicas, an aiohttp
service in front, vegeta as the load generator). One module per concept: config, install, topology, dataset,
appserver, scenario, targets, attack, sampling, lag, binlog, run, sweep, report, compare."""
