#!/usr/bin/env bash
# Fills a libFuzzer seed corpus for fuzz/trace_csv_fuzz, whose first input byte picks the reader
# (even: JSON trace, odd: buffer CSV), so every seed is the file with one leading byte:
#   - 't' + each examples/traces/*.json,
#   - 'c' + each MiniMalloc CSV of at most 64 KB under ../shared/benchmarks/minimalloc
#     (or $FOOTPRINT_SHARED/benchmarks/minimalloc),
#   - 'c' + two small CSVs written here (the optional alignment / fixed_offset columns, a plan
#     read back with its offset column), so the corpus is useful without the shared folder.
#
#   fuzz/make_text_seed_corpus.sh build/fuzz/corpus_text
set -euo pipefail

corpus="${1:?usage: $0 CORPUS_DIR}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${FOOTPRINT_SHARED:-$root/../shared}"
mkdir -p "$corpus"
count=0

# seed PICK NAME: the rest of stdin, after the byte PICK, as corpus file NAME.
seed() {
  { printf '%s' "$1"; cat; } >"$corpus/$2"
  count=$((count + 1))
}

for f in "$root"/examples/traces/*.json; do
  seed t "trace-$(basename "$f")" <"$f"
done
if [ -d "$shared/benchmarks/minimalloc" ]; then
  while IFS= read -r f; do
    seed c "csv-$(basename "$f")" <"$f"
  done < <(find "$shared/benchmarks/minimalloc" -name '*.csv' -size -65537c | sort)
else
  echo "make_text_seed_corpus: $shared/benchmarks/minimalloc not found; its CSVs skipped" >&2
fi
seed c csv-extended.csv < <(printf 'id,lower,upper,size,alignment,fixed_offset\na,0,3,100,64,\nb,1,4,64,,128\n')
seed c csv-plan.csv < <(printf 'id,lower,upper,size,offset\na,0,3,4,0\nb,3,9,4,4\n')

echo "make_text_seed_corpus: $count seed files in $corpus"
