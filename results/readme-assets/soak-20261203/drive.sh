# needs servers: the 8M native topology; run from the repository root of a clean clone at the commit measured
# The three soaks report.md's "Write-back at steady state" states (core/config.SOAK_RUNS), at one commit, one after
# the other, the host otherwise quiet: write at 400/s with the 4G pool (16 min), write-noindex at 400/s and write at
# 100/s with a 128M pool (20 min each). Each run's summary.json, meta.json, block.txt and the CSVs its windows come
# from are kept (absolute paths replaced by <repo> and <results>); steady-*.txt is write-back-20261202/steady.py on
# each folder (the windows and the equilibrium derived again from the CSVs: tests/test_evidence.py re-runs it).
set -euo pipefail
OUT=results/readme-assets/soak-20261203
soak() {  # name, then the soak's arguments
  local name=$1; shift
  ./run.sh soak "$@" --window 60s > $OUT/$name.out 2>&1
  local folder; folder=$(ls -dt results/2026*-"$1"-"$2" | sed -n 1p)
  rm -rf "${OUT:?}/$name" && mkdir -p $OUT/$name
  for f in summary.json meta.json block.txt cpu.csv innodb.csv io.csv timeline.csv; do
    sed "s|$PWD/results|<results>|g; s|${REPLBENCH_STATE:-.state}|<repo>/.state|g; s|$PWD|<repo>|g" "$folder/$f" \
      > $OUT/$name/$f
  done
  PYTHONPATH=. .venv/bin/python results/readme-assets/write-back-20261202/steady.py $OUT/$name > $OUT/steady-$name.txt
}
./run.sh up > /dev/null
soak soak-write-400 write 400 --duration 16m
soak soak-write-noindex-400-128m write-noindex 400 --duration 20m --buffer-pool 128M
soak soak-write-100-128m write 100 --duration 20m --buffer-pool 128M
