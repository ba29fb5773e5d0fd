"""cli: the command line (`./run.sh …`): the parser and exit codes (main), the argument vocabulary (args), the
topology commands (setup: up, down, status, dataset, reset, test) and the benchmark commands (bench). Thin: each
command turns parsed arguments into a call to experiments, report or topology."""
