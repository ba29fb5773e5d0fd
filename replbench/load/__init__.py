"""load: what drives a run — vegeta's attack and reports (attack), the targets it sends (targets), faults done on
purpose during the attack, and pinned cores (cpus)."""
