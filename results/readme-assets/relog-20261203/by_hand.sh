# needs servers: none, but the captured files and the study's re-logged ones (drive.sh runs it before deleting them)
# By hand, with mariadb-binlog alone (no replbench code): for the captured FULL file and the files one MINIMAL and one
# NOBLOB unit re-logged, the application transactions (GTIDs of domain 0), the bytes from the first transaction to
# the end, and per row event kind the columns each image carries (the "###   @N=" lines under WHERE and SET).
set -euo pipefail
folder=$1
count() {  # the files given, in order, decoded as one stream
  local bytes=0 first size
  for f in "$@"; do
    size=$(stat -c %s "$f")
    first=$(mariadb-binlog "$f" 2>/dev/null | awk '/^# at /{at=$3} /GTID [0-9]+-[0-9]+-[0-9]+/{print at; exit}' || true)
    bytes=$((bytes + size - ${first:-$size}))
  done
  mariadb-binlog --base64-output=decode-rows -vv "$@" 2>/dev/null | awk -v bytes="$bytes" '
    /[[:space:]]GTID 0-[0-9]+-[0-9]+/ {trx++}
    /^### (UPDATE|DELETE FROM|INSERT INTO) / {kind = $2; n[kind]++; part = ""}
    /^### (WHERE|SET)$/ {part = $2}
    /^###   @[0-9]+=/ {cols[kind " " part]++}
    END {
      printf "  %d transactions, %d bytes from the first: %.1f bytes per transaction\n", trx, bytes, bytes / trx
      split("UPDATE WHERE,UPDATE SET,DELETE WHERE,INSERT SET", want, ",")
      for (i = 1; i <= 4; i++) {
        split(want[i], w, " ")
        if (n[w[1]]) printf "  %s: %d rows, %.2f columns a row in %s\n", w[1], n[w[1]], cols[want[i]] / n[w[1]], w[2]
      }
    }'
}
relogged() { grep -l "\"row_image\": \"$1\"" "$folder"/*/replay/*/apply.json | sort | sed -n '1s|/apply.json$||p'; }
first_update() { mariadb-binlog --base64-output=decode-rows -vv "$1" 2>/dev/null | awk '/^### UPDATE /{on = 1} on {print; if (++k >= 12) exit}' || true; }
echo "captured (ROW FULL, as the master wrote it): $(ls captured | paste -sd' ')"
count captured/*
for image in MINIMAL NOBLOB; do
  unit=$(relogged $image)
  echo "re-logged under $image by replica1 ($(basename "$unit")): $(ls "$unit"/relogged | paste -sd' ')"
  count "$unit"/relogged/*
done
echo "the first UPDATE, as mariadb-binlog prints it: captured"
first_update "$(ls captured/* | head -1)"
echo "re-logged under MINIMAL"
first_update "$(ls "$(relogged MINIMAL)"/relogged/* | head -1)"
