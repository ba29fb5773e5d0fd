"""report: what a reader sees — report.md (markdown) and the reference experiment's own figures set beside ours
(reference)."""
