"""core: what every layer stands on — configuration (every default in one place), SQL access to a node, scenario
files, processes, progress lines, the harness log, results folders and the shared statistics. Imports nothing
of replbench above it."""
