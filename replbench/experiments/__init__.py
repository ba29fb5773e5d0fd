"""experiments: what a command carries out — one run (run), a rate sweep (sweep), a study of settings (study and
its files, studyfile), a replica's apply capacity (applycap). Each uses topology, load, measure and analysis."""
