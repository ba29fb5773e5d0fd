"""measure: what a run records while it runs and right after — CPU per group (cpu), every node's health and disk
I/O (health), replication lag (lag), server counters (counters), binlog bytes (binlog), a remote host's CPU
(nodeexporter), latency over time (timeline) and whether the writes changed their rows (rowcheck)."""
