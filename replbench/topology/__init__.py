"""topology: the servers and the app a run measures — the native nodes (nodes), bringing them up (bringup),
installing what is missing (install), the dataset, the replication settings as knobs, links through toxiproxy,
the server variables recorded, and the app server (gunicorn)."""
