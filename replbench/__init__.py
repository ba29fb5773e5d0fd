"""replbench: a benchmark harness for MySQL-style row-based replication (a master and its replicas, an aiohttp
service in front, vegeta as the load generator).

Its subpackages form a pipeline whose imports run one way, LAYERS from the top (the command line) to the bottom
(configuration, SQL, processes): a package imports only packages of lower layers, or its own. The import test
(tests/test_cli.py) enforces it; docs/development.md describes each module."""

__version__ = "0.2.0"  # pyproject.toml's version too (a unit test compares them)

LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),  # the commands: flags in, calls out, failures turned into exit codes
    ("experiments", "report"),  # a run, sweep, study, campaign; report.md from their results
    ("analysis",),  # figures derived from what was measured
    ("measure",),  # samplers and counters: what a run records
    ("load",),  # the attack: targets, vegeta, faults, pinned cores
    ("topology",),  # nodes, dataset, app, links, settings applied to the servers
    ("core",),  # configuration, SQL, records, statistics, processes
)
