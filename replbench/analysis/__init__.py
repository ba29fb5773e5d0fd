"""analysis: what the recorded figures mean — a step's verdict and a sweep's max (verdicts), a study's metrics
and how its cells compare (studymetrics), two runs or sweeps side by side (compare)."""
